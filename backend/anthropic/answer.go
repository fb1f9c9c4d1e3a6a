package anthropic

import (
	"encoding/json"
	"fmt"

	"github.com/quotagate/quotagate/backend/wire"
)

// The Anthropic shapes the gateway writes: a whole message, its blocks and
// usage, and the events of a stream. backend/translate fills them from a
// chat-completions answer; the door writes StopEvent and ErrorEvent itself.
type (
	// AnswerMessage is a whole Messages response.
	AnswerMessage struct {
		ID           string        `json:"id"`
		Type         string        `json:"type"`
		Role         string        `json:"role"`
		Model        string        `json:"model"`
		Content      []AnswerBlock `json:"content"`
		StopReason   *string       `json:"stop_reason"`
		StopSequence *string       `json:"stop_sequence"`
		Usage        AnswerUsage   `json:"usage"`
	}
	// AnswerBlock is one content block of an answer: text, thinking or
	// tool_use.
	AnswerBlock struct {
		Type      string          `json:"type"`
		Text      *string         `json:"text,omitempty"`
		Thinking  *string         `json:"thinking,omitempty"`
		Signature *string         `json:"signature,omitempty"`
		ID        string          `json:"id,omitempty"`
		Name      string          `json:"name,omitempty"`
		Input     json.RawMessage `json:"input,omitempty"`
	}
	// AnswerUsage is the usage an answer reports (see Usage for the rule).
	AnswerUsage struct {
		InputTokens              int64 `json:"input_tokens"`
		CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
		CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
		OutputTokens             int64 `json:"output_tokens"`
	}
	// TextDelta, ThinkingDelta and JSONDelta are the deltas of a
	// content_block_delta event.
	TextDelta struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	ThinkingDelta struct {
		Type     string `json:"type"`
		Thinking string `json:"thinking"`
	}
	JSONDelta struct {
		Type        string `json:"type"`
		PartialJSON string `json:"partial_json"`
	}
)

// Marshal encodes v as Anthropic writes JSON: no HTML escaping, no
// trailing newline.
func Marshal(v any) ([]byte, error) {
	b, err := wire.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("anthropic: encode: %w", err)
	}
	return b, nil
}

// Event frames one Anthropic SSE event: the event name is the data's type.
// A map is written with "type" first, as Anthropic writes it.
func Event(typ string, v any) []byte {
	if m, ok := v.(map[string]any); ok {
		delete(m, "type")
		v = typeFirst{typ, m}
	}
	b, err := Marshal(v)
	if err != nil { // only our own shapes are marshalled
		panic(err)
	}
	out := make([]byte, 0, len(typ)+len(b)+16)
	out = append(out, "event: "...)
	out = append(out, typ...)
	out = append(out, "\ndata: "...)
	out = append(out, b...)
	return append(out, "\n\n"...)
}

// StopEvent is the message_stop event, Anthropic's end-of-stream marker.
// The door writes it only after the run's outcome is committed.
func StopEvent() []byte { return Event(EventMessageStop, map[string]any{}) }

// ErrorEvent is the one event a stream ends with when it cannot finish
// (a cut upstream, a timeout): never followed by message_stop.
func ErrorEvent(typ, message string) []byte {
	return Event(EventError, errorJSON(typ, message))
}

// typeFirst marshals {"type":T, …the other members in key order}.
type typeFirst struct {
	typ  string
	rest map[string]any
}

func (t typeFirst) MarshalJSON() ([]byte, error) {
	rest, err := Marshal(t.rest)
	if err != nil {
		return nil, err
	}
	typ, _ := json.Marshal(t.typ)
	out := append([]byte(`{"type":`), typ...)
	if len(rest) > 2 {
		out = append(out, ',')
		out = append(out, rest[1:]...)
		return out, nil
	}
	return append(out, '}'), nil
}
