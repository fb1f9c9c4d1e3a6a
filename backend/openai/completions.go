package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/quotagate/quotagate/backend/wire"
)

// CompletionsRequest is what the gateway needs from a legacy completions
// body (POST /v1/completions): what editors' tab-autocomplete sends,
// fill-in-the-middle when it carries a suffix. The raw body is kept so the
// request goes upstream as the client wrote it (see UpstreamBody).
type CompletionsRequest struct {
	Model string
	// Prompt is the text before the cursor and Suffix the text after it;
	// the provider bills both as prompt tokens.
	Prompt string
	Suffix string
	forwarded
	// MaxTokens is the output cap: the client's max_tokens, else
	// DefaultCompletionsMaxTokens (what OpenAI applies when it is absent).
	MaxTokens int64
}

// DefaultCompletionsMaxTokens is OpenAI's max_tokens when a completions
// request gives none.
const DefaultCompletionsMaxTokens = 16

// completionsRefused are members that ask for more than the gateway can
// verify, with why; a request that asks for their default is served.
var completionsRefused = map[string]string{
	// Several answers, or answers generated and not returned: output the
	// client never sees would be billed, and the gateway cannot count it.
	"n":       "n greater than 1 is not supported through quotagate (one answer per request)",
	"best_of": "best_of greater than 1 is not supported through quotagate: its extra answers are billed but never returned, so they cannot be verified",
	// The prompt returned as text: relayed text the provider does not bill
	// as output, which the gateway would count as output.
	"echo": "echo is not supported through quotagate: the echoed prompt would be metered as output",
	// Token strings and numbers beside the text, which providers count differently.
	"logprobs": "logprobs is not supported through quotagate: its token lists are not metered text",
}

var completionsBody = wire.Body{
	Known: map[string]bool{
		"model": true, "prompt": true, "suffix": true, "stream": true, "stream_options": true,
		"max_tokens": true, "stop": true, "temperature": true,
		"n": true, "best_of": true, "echo": true, "logprobs": true,
	},
	Required: []string{"model", "prompt"},
}

// ParseCompletionsRequest parses and checks a legacy completions body. Every
// error is a *wire.RequestError with a message for a person.
func ParseCompletionsRequest(body []byte) (*CompletionsRequest, error) {
	req := &CompletionsRequest{MaxTokens: DefaultCompletionsMaxTokens}
	if err := req.read(completionsBody, body, &req.Model, req.member); err != nil {
		return nil, err
	}
	return req, nil
}

// member reads one top-level member of the body into r, but those
// forwarded.read reads.
func (r *CompletionsRequest) member(f wire.Field) (err error) {
	switch f.Key {
	case "prompt":
		r.Prompt, err = parsePrompt(f.Val)
	case "suffix":
		if wire.BodyString(f.Val, &r.Suffix) != nil {
			return invalid("suffix must be a string")
		}
	case "max_tokens":
		var v *int64
		if v, err = parseOutputCap("max_tokens", f.Val); err == nil {
			r.MaxTokens = *v
		}
	case "stop":
		err = parseStop(f.Val)
	case "temperature":
		var t float64
		if json.Unmarshal(f.Val, &t) != nil {
			return invalid("temperature must be a number")
		}
	case "n", "best_of", "echo", "logprobs":
		err = refuseUnlessDefault(f)
	}
	return err
}

// parsePrompt reads prompt: a string, or an array of exactly one string.
// Several prompts are several answers (refused like n); token arrays are
// text the gateway cannot count as the provider will.
func parsePrompt(raw json.RawMessage) (string, error) {
	var s string
	if raw[0] == '"' {
		if wire.BodyString(raw, &s) != nil {
			return "", invalid("prompt must be a string")
		}
		return s, nil
	}
	items, ok := wire.ScanArray(raw)
	if !ok || len(items) != 1 || len(items[0]) == 0 || items[0][0] != '"' || wire.BodyString(items[0], &s) != nil {
		return "", invalid("prompt must be a string or an array of one string (one prompt per request through quotagate)")
	}
	return s, nil
}

// parseStop reads stop: a string or an array of strings. It is relayed as
// it came; only its shape is checked.
func parseStop(raw json.RawMessage) error {
	if raw[0] == '"' {
		return nil
	}
	items, ok := wire.ScanArray(raw)
	if !ok {
		return invalid("stop must be a string or an array of strings")
	}
	for _, it := range items {
		if len(it) == 0 || it[0] != '"' {
			return invalid("stop must be a string or an array of strings")
		}
	}
	return nil
}

// refuseUnlessDefault refuses n, best_of, echo or logprobs unless the
// member asks for what its absence would (n or best_of 1, echo false).
func refuseUnlessDefault(f wire.Field) error {
	v := string(bytes.TrimSpace(f.Val))
	switch {
	case (f.Key == "n" || f.Key == "best_of") && v == "1", f.Key == "echo" && v == "false":
		return nil
	}
	return invalid("%s", completionsRefused[f.Key])
}

// ParseTextChunk parses one SSE data payload of a text_completion stream:
// choices[].text is the generated text. "[DONE]" gives Chunk{Done: true};
// the rest is as ParseChunk (Content holds the text).
func ParseTextChunk(data []byte) (Chunk, error) {
	d := bytes.TrimSpace(data)
	if bytes.Equal(d, doneMarker) {
		return Chunk{Done: true}, nil
	}
	return parseText(d)
}

// ParseTextCompletion parses a non-streaming text_completion body.
func ParseTextCompletion(body []byte) (Completion, error) {
	c, err := parseText(bytes.TrimSpace(body))
	return Completion{Content: c.Content, Choices: c.Choices, Usage: c.Usage, ID: c.ID}, err
}

type wireTextChunk struct {
	ID      string `json:"id"`
	Choices []struct {
		Text *string `json:"text"`
	} `json:"choices"`
	Usage json.RawMessage `json:"usage"`
	Error json.RawMessage `json:"error"`
}

func parseText(d []byte) (Chunk, error) {
	if len(d) == 0 || d[0] != '{' {
		return Chunk{}, fmt.Errorf("openai: payload is not a JSON object: %.60q", d)
	}
	var w wireTextChunk
	if err := json.Unmarshal(d, &w); err != nil {
		return Chunk{}, fmt.Errorf("openai: payload: %w", err)
	}
	c := Chunk{Choices: len(w.Choices), ID: w.ID}
	var text strings.Builder
	for _, ch := range w.Choices {
		if ch.Text != nil {
			text.WriteString(*ch.Text)
		}
	}
	c.Content = text.String()
	return c.withEvidence(w.Error, w.Usage)
}

// TextCompletionJSON is one text_completion, whole or a chunk of a stream,
// as an upstream writes it (the demo upstream does).
type TextCompletionJSON struct {
	ID      string           `json:"id"`
	Object  string           `json:"object"`
	Created int64            `json:"created"`
	Model   string           `json:"model"`
	Choices []TextChoiceJSON `json:"choices"`
	Usage   json.RawMessage  `json:"usage,omitempty"` // absent, null or a UsageJSON
}

// TextChoiceJSON is one choice of a text_completion; FinishReason is null
// until the last chunk.
type TextChoiceJSON struct {
	Text         string  `json:"text"`
	Index        int     `json:"index"`
	Logprobs     *string `json:"logprobs"`
	FinishReason *string `json:"finish_reason"`
}
