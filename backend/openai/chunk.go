package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/quotagate/quotagate/backend/wire"
)

// Chunk is what one streamed data payload says.
type Chunk struct {
	Done bool // the payload is the end marker [DONE]
	// Content, Reasoning and ToolArguments are the generated text of every
	// choice in this chunk: delta.content, delta.reasoning_content, and
	// delta.tool_calls[].function.name+arguments.
	Content       string
	Reasoning     string
	ToolArguments string
	Choices       int    // len(choices); 0 for the final usage-only chunk
	Usage         *Usage // nil when the chunk carries no usage
	// Error is the message of an in-stream error object ({"error":{…}}).
	Error string
	// ID is the payload's "id" (chatcmpl-…), the provider's id of the
	// call; "" when absent or not a string.
	ID string
}

// Text is the chunk's metered output text: content, reasoning and tool-call
// text together. Everything a model generates and the gateway relays counts.
func (c Chunk) Text() string {
	if c.Reasoning == "" && c.ToolArguments == "" {
		return c.Content
	}
	return c.Content + c.Reasoning + c.ToolArguments
}

// UsageOnly reports whether the chunk is the final usage chunk the upstream
// sent because the gateway asked for it; the gateway drops it when the client
// did not ask for usage.
func (c Chunk) UsageOnly() bool { return c.Usage != nil && c.Choices == 0 && c.Error == "" }

var doneMarker = []byte("[DONE]")

type wireDelta struct {
	Content          *string        `json:"content"`
	ReasoningContent *string        `json:"reasoning_content"`
	ToolCalls        []wireToolCall `json:"tool_calls"`
}

type wireToolCall struct {
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type wireChoice struct {
	Delta   wireDelta `json:"delta"`
	Message wireDelta `json:"message"` // non-streaming bodies
}

type wireChunk struct {
	ID      json.RawMessage `json:"id"` // raw: an id that is no string is no reason to refuse the chunk
	Choices []wireChoice    `json:"choices"`
	Usage   json.RawMessage `json:"usage"`
	Error   json.RawMessage `json:"error"`
}

// ParseChunk parses one SSE data payload of a chat.completion.chunk stream.
// "[DONE]" gives Chunk{Done: true}. A payload that is not a JSON object is an
// error; so is a usage object that is present but bad (errors.Is ErrBadUsage),
// in which case the returned Chunk still carries the text.
func ParseChunk(data []byte) (Chunk, error) {
	d := bytes.TrimSpace(data)
	if bytes.Equal(d, doneMarker) {
		return Chunk{Done: true}, nil
	}
	return parseBody(d, false)
}

// Completion is what a non-streaming chat.completion body says.
type Completion struct {
	Content, Reasoning, ToolArguments string
	Choices                           int
	Usage                             *Usage
	ID                                string // the body's "id" (Chunk.ID)
}

// Text is the completion's metered output text (see Chunk.Text).
func (c Completion) Text() string { return c.Content + c.Reasoning + c.ToolArguments }

// ParseCompletion parses a non-streaming chat.completion body. A bad usage
// object gives an error wrapping ErrBadUsage together with the text.
func ParseCompletion(body []byte) (Completion, error) {
	c, err := parseBody(bytes.TrimSpace(body), true)
	return Completion{Content: c.Content, Reasoning: c.Reasoning, ToolArguments: c.ToolArguments,
		Choices: c.Choices, Usage: c.Usage, ID: c.ID}, err
}

func parseBody(d []byte, message bool) (Chunk, error) {
	if len(d) == 0 || d[0] != '{' {
		return Chunk{}, fmt.Errorf("openai: payload is not a JSON object: %.60q", d)
	}
	var w wireChunk
	if !scanChunk(d, &w) {
		w = wireChunk{}
		if err := json.Unmarshal(d, &w); err != nil {
			return Chunk{}, fmt.Errorf("openai: payload: %w", err)
		}
	}
	c := Chunk{Choices: len(w.Choices), ID: StringValue(w.ID)}
	var content, reasoning, tools strings.Builder
	for i := range w.Choices {
		delta := &w.Choices[i].Delta
		if message {
			delta = &w.Choices[i].Message
		}
		if delta.Content != nil {
			content.WriteString(*delta.Content)
		}
		if delta.ReasoningContent != nil {
			reasoning.WriteString(*delta.ReasoningContent)
		}
		for _, tc := range delta.ToolCalls {
			tools.WriteString(tc.Function.Name)
			tools.WriteString(tc.Function.Arguments)
		}
	}
	c.Content, c.Reasoning, c.ToolArguments = content.String(), reasoning.String(), tools.String()
	return c.withEvidence(w.Error, w.Usage)
}

// StringValue is the JSON string raw holds, "" when raw is anything else.
func StringValue(raw json.RawMessage) string {
	var s string
	if len(raw) == 0 || raw[0] != '"' || wire.String(raw, &s) != nil {
		return ""
	}
	return s
}

// withEvidence is c with its payload's error object and usage read: the
// same in every answer shape that carries them (a chunk, a whole body, a
// legacy completion).
func (c Chunk) withEvidence(errObj, usage json.RawMessage) (Chunk, error) {
	if len(errObj) > 0 && !wire.IsNull(errObj) {
		if c.Error = objectMessage(errObj); c.Error == "" {
			c.Error = string(errObj)
		}
	}
	u, err := ParseUsage(usage)
	if err != nil {
		return c, err
	}
	c.Usage = u
	return c, nil
}
