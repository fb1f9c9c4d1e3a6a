package openai

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/quotagate/quotagate/backend/wire"
)

// EmbeddingsRequest is what the gateway needs from an embeddings body (POST
// /v1/embeddings): codebase indexing's batches of text. The body goes
// upstream as the client wrote it (Raw).
type EmbeddingsRequest struct {
	Model string
	// Texts are the inputs given as text, each billed as the tokens it
	// encodes to; TokenCount is the length of every input given as token
	// ids, billed one token an id.
	Texts      []string
	TokenCount int64
	// Inputs is how many inputs there are: the answer carries one embedding
	// each.
	Inputs int

	raw []byte
}

var embeddingsBody = wire.Body{
	Known: map[string]bool{
		"model": true, "input": true, "dimensions": true, "encoding_format": true, "user": true, "stream": true,
	},
	Required: []string{"model", "input"},
}

// ParseEmbeddingsRequest parses and checks an embeddings body. Every error
// is a *wire.RequestError with a message for a person.
func ParseEmbeddingsRequest(body []byte) (*EmbeddingsRequest, error) {
	req := &EmbeddingsRequest{raw: body}
	fields, err := embeddingsBody.Read(body, req.member)
	if err == nil {
		err = wire.Require(fields, "model", "input")
	}
	if err != nil {
		return nil, err
	}
	return req, nil
}

func (r *EmbeddingsRequest) member(f wire.Field) error {
	switch f.Key {
	case "model":
		m, err := wire.Model(f)
		r.Model = m
		return err
	case "input":
		return r.parseInput(f.Val)
	case "dimensions":
		if _, err := parseOutputCap("dimensions", f.Val); err != nil {
			return err
		}
	case "encoding_format":
		var s string
		if wire.BodyString(f.Val, &s) != nil || (s != "float" && s != "base64") {
			return invalid(`encoding_format must be "float" or "base64"`)
		}
	case "user":
		var s string
		if wire.BodyString(f.Val, &s) != nil {
			return invalid("user must be a string")
		}
	case "stream":
		// Embeddings do not stream; an upstream that did would answer in a
		// shape no door reads.
		if on, err := wire.Flag(f); err != nil || on {
			return invalid("embeddings do not stream: leave stream out or false")
		}
	}
	return nil
}

// errInput is how every malformed input is refused.
var errInput = invalid("input must be a string, an array of strings, an array of token ids or an array of arrays of token ids")

// parseInput reads input: a string, an array of strings, one array of
// token ids, or an array of arrays of token ids (not mixed).
func (r *EmbeddingsRequest) parseInput(raw json.RawMessage) error {
	if raw[0] == '"' {
		var s string
		if wire.BodyString(raw, &s) != nil {
			return errInput
		}
		r.Texts, r.Inputs = []string{s}, 1
		return nil
	}
	items, ok := wire.ScanArray(raw)
	if !ok || len(items) == 0 {
		return errInput
	}
	switch items[0][0] {
	case '"':
		r.Texts = make([]string, len(items))
		for i, it := range items {
			if it[0] != '"' || wire.BodyString(it, &r.Texts[i]) != nil {
				return errInput
			}
		}
		r.Inputs = len(items)
	case '[':
		for _, it := range items {
			n, err := tokenIDs(it)
			if err != nil {
				return err
			}
			r.TokenCount += n
		}
		r.Inputs = len(items)
	default:
		n, err := tokenIDs(raw)
		if err != nil {
			return err
		}
		r.TokenCount, r.Inputs = n, 1
	}
	return nil
}

// tokenIDs is the length of a non-empty array of token ids (non-negative
// integers).
func tokenIDs(raw []byte) (int64, error) {
	bad := false
	n, ok := wire.EachElement(raw, func(_ int, v []byte) bool {
		_, err := wire.Count(v)
		bad = bad || err != nil
		return !bad
	})
	if !ok || bad || n == 0 {
		return 0, errInput
	}
	return int64(n), nil
}

// Raw returns the request body exactly as the client sent it.
func (r *EmbeddingsRequest) Raw() []byte { return r.raw }

// Embeddings is what an embeddings answer says to the meter.
type Embeddings struct {
	// Data is how many embeddings the answer carries.
	Data int
	// Usage is its usage (prompt_tokens; completion_tokens, when present,
	// counted as usual); nil when the body has none.
	Usage *Usage
	// Error is the message of an error object in place of an answer.
	Error string
}

// ParseEmbeddings reads an embeddings answer without decoding its vectors:
// the number of data items and the usage. A body that is not a JSON object,
// a member given twice or a data that is not an array is an error; a bad
// usage object is one wrapping ErrBadUsage, with Data set.
func ParseEmbeddings(body []byte) (Embeddings, error) {
	var e Embeddings
	fields, err := wire.Fields(body)
	if err != nil {
		return e, fmt.Errorf("openai: embeddings body: %w", err)
	}
	seen := make(map[string]bool, len(fields))
	var usage json.RawMessage
	for _, f := range fields {
		if seen[f.Key] {
			return e, fmt.Errorf("openai: embeddings body: %q appears twice", f.Key)
		}
		seen[f.Key] = true
		switch f.Key {
		case "data":
			if wire.IsNull(f.Val) {
				continue
			}
			n, ok := wire.EachElement(f.Val, func(int, []byte) bool { return true })
			if !ok {
				return e, errors.New("openai: embeddings body: data is not an array")
			}
			e.Data = n
		case "usage":
			usage = f.Val
		case "error":
			if !wire.IsNull(f.Val) {
				if e.Error = objectMessage(f.Val); e.Error == "" {
					e.Error = string(f.Val)
				}
			}
		}
	}
	e.Usage, err = parseUsage(usage, false)
	return e, err
}

// EmbeddingsJSON is an embeddings answer as an upstream writes it (the
// demo upstream does).
type EmbeddingsJSON struct {
	Object string               `json:"object"`
	Data   []EmbeddingJSON      `json:"data"`
	Model  string               `json:"model"`
	Usage  *EmbeddingsUsageJSON `json:"usage,omitempty"`
}

// EmbeddingJSON is one embedding: an array of floats, or their
// little-endian float32 bytes in base64 (encoding_format "base64").
type EmbeddingJSON struct {
	Object    string `json:"object"`
	Index     int    `json:"index"`
	Embedding any    `json:"embedding"`
}

// EmbeddingsUsageJSON is an embeddings answer's usage: no completion.
type EmbeddingsUsageJSON struct {
	PromptTokens int64 `json:"prompt_tokens"`
	TotalTokens  int64 `json:"total_tokens"`
}
