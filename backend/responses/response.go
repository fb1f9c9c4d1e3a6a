package responses

import (
	"encoding/json"
	"fmt"

	"github.com/quotagate/quotagate/backend/wire"
)

// Meta is what a translated answer says about itself.
type Meta struct {
	ResponseID string // "resp_…"; item ids are derived from it
	CreatedAt  int64  // Unix seconds
	Model      string
	Request    *Request // echoed fields (instructions, tools, tool_choice, …); may be nil
}

// Event is one Responses SSE event.
type Event struct {
	Type string
	Data []byte // the JSON object, whose "type" is Type
}

// SSE renders the event as it goes on the wire.
func (e Event) SSE() []byte {
	b := make([]byte, 0, len(e.Type)+len(e.Data)+16)
	b = append(b, "event: "...)
	b = append(b, e.Type...)
	b = append(b, "\ndata: "...)
	b = append(b, e.Data...)
	return append(b, "\n\n"...)
}

// Status values of a response object.
const (
	StatusInProgress = "in_progress"
	StatusCompleted  = "completed"
	StatusIncomplete = "incomplete"
	StatusFailed     = "failed"
)

// ResponseJSON is a Response object with OpenAI's members in OpenAI's order.
type ResponseJSON struct {
	ID                 string            `json:"id"`
	Object             string            `json:"object"`
	CreatedAt          int64             `json:"created_at"`
	Status             string            `json:"status"`
	Background         bool              `json:"background"`
	Error              *ErrorObjectJSON  `json:"error"`
	IncompleteDetails  *IncompleteJSON   `json:"incomplete_details"`
	Instructions       *string           `json:"instructions"`
	MaxOutputTokens    *int64            `json:"max_output_tokens"`
	Model              string            `json:"model"`
	Output             []json.RawMessage `json:"output"`
	ParallelToolCalls  bool              `json:"parallel_tool_calls"`
	PreviousResponseID *string           `json:"previous_response_id"`
	Reasoning          json.RawMessage   `json:"reasoning"`
	Store              bool              `json:"store"`
	Temperature        json.RawMessage   `json:"temperature"`
	Text               json.RawMessage   `json:"text"`
	ToolChoice         json.RawMessage   `json:"tool_choice"`
	Tools              json.RawMessage   `json:"tools"`
	TopP               json.RawMessage   `json:"top_p"`
	Truncation         string            `json:"truncation"`
	Usage              *usageJSON        `json:"usage"`
	User               *string           `json:"user"`
	Metadata           json.RawMessage   `json:"metadata"`
}

// ErrorObjectJSON is a failed response's error.
type ErrorObjectJSON struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// IncompleteJSON says why a response is incomplete.
type IncompleteJSON struct {
	Reason string `json:"reason"`
}

// Response builds the object for status with output and usage.
func (m Meta) Response(status string, output []json.RawMessage, u *Usage) ResponseJSON {
	r := ResponseJSON{ID: m.ResponseID, Object: "response", CreatedAt: m.CreatedAt, Status: status,
		Model: m.Model, Output: output, ParallelToolCalls: true, Truncation: "disabled",
		Reasoning: json.RawMessage(`{"effort":null,"summary":null}`), Temperature: json.RawMessage("1.0"),
		TopP: json.RawMessage("1.0"), Text: json.RawMessage(`{"format":{"type":"text"}}`),
		ToolChoice: json.RawMessage(`"auto"`), Tools: json.RawMessage("[]"), Metadata: json.RawMessage("{}"),
		Usage: u.wire()}
	if output == nil {
		r.Output = []json.RawMessage{}
	}
	if q := m.Request; q != nil {
		if q.Instructions != "" {
			r.Instructions = &q.Instructions
		}
		r.MaxOutputTokens = q.MaxOutputTokens
		if q.ParallelToolCalls != nil {
			r.ParallelToolCalls = *q.ParallelToolCalls
		}
		if q.ReasoningEffort != "" {
			r.Reasoning = Encode(map[string]any{"effort": q.ReasoningEffort, "summary": nil})
		}
		r.Store = q.Store != nil && *q.Store
		for _, f := range []struct {
			dst *json.RawMessage
			src json.RawMessage
		}{{&r.Temperature, q.Temperature}, {&r.TopP, q.TopP}, {&r.Text, q.Text}, {&r.ToolChoice, q.ToolChoice}, {&r.Tools, q.ToolsJSON}, {&r.Metadata, q.Metadata}} {
			if len(f.src) > 0 {
				*f.dst = f.src
			}
		}
		if q.User != "" {
			r.User = &q.User
		}
	}
	return r
}

// Encode is v as OpenAI writes JSON (no HTML escaping); only quotagate's
// own shapes are encoded, so a failure is a bug and panics.
func Encode(v any) json.RawMessage {
	b, err := wire.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("responses: encode %T: %v", v, err)) // only our own types get here
	}
	return b
}

// MessageItemJSON is a message output item; items and parts keep their
// members in OpenAI's order.
type MessageItemJSON struct {
	ID      string     `json:"id"`
	Type    string     `json:"type"`
	Status  string     `json:"status"`
	Content []PartJSON `json:"content"`
	Role    string     `json:"role"`
}

// PartJSON is an output_text part.
type PartJSON struct {
	Type        string            `json:"type"`
	Annotations []json.RawMessage `json:"annotations"`
	Logprobs    []json.RawMessage `json:"logprobs"`
	Text        string            `json:"text"`
}

// TextPart is an output_text part of text.
func TextPart(text string) PartJSON {
	return PartJSON{Type: "output_text", Annotations: []json.RawMessage{}, Logprobs: []json.RawMessage{}, Text: text}
}

// CallItemJSON is a function_call output item.
type CallItemJSON struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Status    string `json:"status"`
	Arguments string `json:"arguments"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
}

// ErrorEvent is the `error` event that ends a stream after a failure; seq is
// its sequence_number (the stream's next).
func ErrorEvent(seq int, code, message string) Event {
	data := Encode(struct {
		Type           string  `json:"type"`
		Code           string  `json:"code"`
		Message        string  `json:"message"`
		Param          *string `json:"param"`
		SequenceNumber int     `json:"sequence_number"`
	}{"error", code, message, nil, seq})
	return Event{Type: "error", Data: data}
}
