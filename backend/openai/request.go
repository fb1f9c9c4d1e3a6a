package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/quotagate/quotagate/backend/wire"
)

// ChatRequest is what the gateway needs from an OpenAI chat-completions
// request body. The raw body is kept so the request can be forwarded as the
// client wrote it (see UpstreamBody).
type ChatRequest struct {
	Model    string
	Messages []wire.Turn
	forwarded
	// MaxCompletionTokens and MaxTokens are the client's output caps; nil
	// when absent. OutputCap combines them.
	MaxCompletionTokens *int64
	MaxTokens           *int64
	// N is the number of choices asked for (default 1); each choice may
	// produce up to the output cap, so the reserve multiplies by N.
	N int64
	// ToolsJSON is the raw `tools` array (function definitions), which the
	// provider bills as prompt tokens; nil when absent.
	ToolsJSON []byte
}

// OutputCap returns the client's output cap and whether one was given:
// max_completion_tokens or max_tokens, and the larger of the two when both
// are given — OpenAI honours the first, many compatible providers only the
// second, and the reserve must cover whichever the upstream obeys.
func (r *ChatRequest) OutputCap() (int64, bool) {
	switch {
	case r.MaxCompletionTokens != nil && r.MaxTokens != nil:
		return max(*r.MaxCompletionTokens, *r.MaxTokens), true
	case r.MaxCompletionTokens != nil:
		return *r.MaxCompletionTokens, true
	case r.MaxTokens != nil:
		return *r.MaxTokens, true
	}
	return 0, false
}

// chatBody is how a chat-completions body's top level is read. Another
// member whose name differs from a known one only in letter case is
// refused: a case-insensitive upstream could read it where the gateway did
// not.
var chatBody = wire.Body{
	Known: map[string]bool{
		"model": true, "messages": true, "stream": true, "stream_options": true,
		"max_tokens": true, "max_completion_tokens": true, "n": true, "tools": true,
	},
	Required: []string{"model", "messages"},
}

var invalid = wire.Invalidf

// ParseChatRequest parses and checks an OpenAI chat-completions body. Every
// error is a *wire.RequestError with a message for a person.
func ParseChatRequest(body []byte) (*ChatRequest, error) {
	req := &ChatRequest{N: 1}
	if err := req.read(chatBody, body, &req.Model, req.member); err != nil {
		return nil, err
	}
	return req, nil
}

// member reads one top-level member of the body into r, but those
// forwarded.read reads.
func (r *ChatRequest) member(f wire.Field) (err error) {
	switch f.Key {
	case "messages":
		r.Messages, err = parseMessages(f.Val)
	case "max_tokens":
		r.MaxTokens, err = parseOutputCap("max_tokens", f.Val)
	case "max_completion_tokens":
		r.MaxCompletionTokens, err = parseOutputCap("max_completion_tokens", f.Val)
	case "n":
		r.N, err = parseChoices(f.Val)
	case "tools":
		if len(f.Val) == 0 || f.Val[0] != '[' {
			return invalid("tools must be an array")
		}
		r.ToolsJSON = f.Val
	}
	return err
}

// parseIncludeUsage reads stream_options.include_usage.
func parseIncludeUsage(raw json.RawMessage) (bool, error) {
	so, err := wire.Fields(raw)
	if err != nil {
		return false, invalid("stream_options must be an object")
	}
	var include bool
	for _, o := range so {
		if o.Key == "include_usage" && !wire.IsNull(o.Val) {
			if err := json.Unmarshal(o.Val, &include); err != nil {
				return false, invalid("stream_options.include_usage must be true or false")
			}
		}
	}
	return include, nil
}

// parseChoices reads n, the number of choices: at least 1.
func parseChoices(raw json.RawMessage) (int64, error) {
	n, err := parseCount("n", raw)
	if err != nil {
		return 0, err
	}
	if *n < 1 {
		return 0, invalid("n must be at least 1 (got %d)", *n)
	}
	return *n, nil
}

// parseCount reads a non-negative integer no larger than wire.MaxCount.
func parseCount(name string, raw json.RawMessage) (*int64, error) {
	v, err := wire.Count(raw)
	if err != nil {
		return nil, invalid("%s must be a non-negative integer: %v", name, err)
	}
	return &v, nil
}

// parseOutputCap reads an output cap, which must be at least 1: a provider
// that ignores a 0 would answer in full against a reserve of the input alone.
func parseOutputCap(name string, raw json.RawMessage) (*int64, error) {
	v, err := parseCount(name, raw)
	if err == nil && *v < 1 {
		err = invalid("%s must be at least 1 (got %d)", name, *v)
	}
	return v, err
}

func parseMessages(raw json.RawMessage) ([]wire.Turn, error) {
	// raw is a member of a body wire.Fields read, so valid JSON: it can be
	// scanned without validating it again.
	items, ok := wire.ScanArray(raw)
	if !ok {
		return nil, invalid("messages must be an array of message objects")
	}
	msgs := make([]wire.Turn, 0, len(items))
	for _, item := range items {
		m, err := parseMessage(item)
		if err != nil {
			return nil, invalid("messages[%d]: %s", len(msgs), wire.Reason(err))
		}
		msgs = append(msgs, m)
	}
	if len(msgs) == 0 {
		return nil, invalid("messages must not be empty")
	}
	return msgs, nil
}

func parseMessage(raw json.RawMessage) (wire.Turn, error) {
	var m wire.Turn
	fields, ok := wire.ScanObject(raw) // raw is an element of a valid array
	if !ok {
		var err error
		if fields, err = wire.Fields(raw); err != nil {
			return m, invalid("a message must be an object")
		}
	}
	seen := make(map[string]bool, len(fields))
	for _, f := range fields {
		lower := wire.FoldKey(f.Key)
		if seen[lower] {
			return m, invalid("the field %q appears twice", f.Key)
		}
		seen[lower] = true
		if wire.IsNull(f.Val) {
			continue
		}
		switch lower {
		case "role":
			if err := wire.BodyString(f.Val, &m.Role); err != nil {
				return m, invalid("role must be a string")
			}
		case "name":
			if err := wire.BodyString(f.Val, &m.Name); err != nil {
				return m, invalid("name must be a string")
			}
		case "content":
			if err := parseContent(f.Val, &m); err != nil {
				return m, err
			}
		case "tool_calls":
			if err := parseToolCalls(f.Val, &m); err != nil {
				return m, err
			}
		}
	}
	if m.Role == "" {
		return m, invalid("role is required")
	}
	return m, nil
}

func parseContent(raw json.RawMessage, m *wire.Turn) error {
	if raw[0] == '"' {
		if err := wire.BodyString(raw, &m.Text); err != nil {
			return invalid("content must be a string or an array of parts")
		}
		return nil
	}
	var parts []struct {
		Type    string  `json:"type"`
		Text    *string `json:"text"`
		Refusal *string `json:"refusal"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return invalid("content must be a string or an array of parts")
	}
	var b strings.Builder
	for i, p := range parts {
		switch p.Type {
		case "text":
			if p.Text == nil {
				return invalid("content[%d] is a text part without text", i)
			}
			b.WriteString(*p.Text)
		case "refusal": // an assistant's earlier refusal is text too
			if p.Refusal != nil {
				b.WriteString(*p.Refusal)
			}
		case "image_url":
			m.Images++ // never downloaded: a configured number of units instead
		case "":
			return invalid("content[%d] has no type", i)
		default:
			m.OtherParts++
		}
	}
	m.Text = b.String()
	return nil
}

func parseToolCalls(raw json.RawMessage, m *wire.Turn) error {
	var calls []struct {
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &calls); err != nil {
		return invalid("tool_calls must be an array of calls")
	}
	var b strings.Builder
	for _, c := range calls {
		b.WriteString(c.Function.Name)
		b.WriteString(c.Function.Arguments)
	}
	m.Calls = b.String()
	return nil
}

// withStreamUsage writes a body's members (fields, in body order; size is
// the body's length) back as an object whose stream_options asks for the
// usage chunk, keeping every other member as the client wrote it.
func withStreamUsage(fields []wire.Field, size int) ([]byte, error) {
	var b bytes.Buffer
	b.Grow(size + 48)
	b.WriteByte('{')
	wrote, hadOptions := false, false
	for _, f := range fields {
		if wrote {
			b.WriteByte(',')
		}
		wrote = true
		key, _ := json.Marshal(f.Key)
		b.Write(key)
		b.WriteByte(':')
		if f.Key != "stream_options" {
			b.Write(f.Val)
			continue
		}
		hadOptions = true
		opts, err := withIncludeUsage(f.Val)
		if err != nil {
			return nil, err
		}
		b.Write(opts)
	}
	if !hadOptions {
		if wrote {
			b.WriteByte(',')
		}
		b.WriteString(`"stream_options":{"include_usage":true}`)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// withIncludeUsage rewrites a stream_options object (or null) so that
// include_usage is true, keeping its other members in order.
func withIncludeUsage(raw json.RawMessage) ([]byte, error) {
	if wire.IsNull(raw) {
		return []byte(`{"include_usage":true}`), nil
	}
	fields, err := wire.Fields(raw)
	if err != nil {
		return nil, fmt.Errorf("openai: rewrite stream_options: %w", err)
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for _, f := range fields {
		if f.Key == "include_usage" {
			continue
		}
		key, _ := json.Marshal(f.Key)
		b.Write(key)
		b.WriteByte(':')
		b.Write(f.Val)
		b.WriteByte(',')
	}
	b.WriteString(`"include_usage":true}`)
	return b.Bytes(), nil
}
