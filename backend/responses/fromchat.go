package responses

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/quotagate/quotagate/backend/ledger"
)

// chatChunk is the part of a chat-completions chunk (or, with Message, a
// whole completion) that a translation reads.
type chatChunk struct {
	Choices []struct {
		Index        int        `json:"index"`
		Delta        *chatDelta `json:"delta"`
		Message      *chatDelta `json:"message"`
		FinishReason *string    `json:"finish_reason"`
	} `json:"choices"`
	Usage json.RawMessage `json:"usage"`
}

type chatDelta struct {
	Content   *string `json:"content"`
	Refusal   *string `json:"refusal"`
	ToolCalls []struct {
		Index    *int   `json:"index"`
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// chatUsage converts a chat usage object; nil when absent or unreadable
// (the chat door's own judgement decides whether it is trusted).
func chatUsage(raw json.RawMessage) *Usage {
	if len(raw) == 0 || isNull(raw) {
		return nil
	}
	var w struct {
		PromptTokens        *int64 `json:"prompt_tokens"`
		CompletionTokens    *int64 `json:"completion_tokens"`
		PromptTokensDetails *struct {
			CachedTokens int64 `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
		CompletionTokensDetails *struct {
			ReasoningTokens int64 `json:"reasoning_tokens"`
		} `json:"completion_tokens_details"`
	}
	if json.Unmarshal(raw, &w) != nil || w.PromptTokens == nil || w.CompletionTokens == nil {
		return nil
	}
	u := &Usage{InputTokens: *w.PromptTokens, OutputTokens: *w.CompletionTokens}
	if d := w.PromptTokensDetails; d != nil {
		u.CachedTokens = d.CachedTokens
	}
	if d := w.CompletionTokensDetails; d != nil {
		u.ReasoningTokens = d.ReasoningTokens
	}
	u.TotalTokens = u.InputTokens + u.OutputTokens
	return u
}

// Translator turns a chat-completions stream into Responses events in
// OpenAI's order: response.created, response.in_progress, then per output
// item output_item.added, (content_part.added, output_text.delta…,
// output_text.done, content_part.done | function_call_arguments.delta…,
// function_call_arguments.done), output_item.done — the open items close
// on the chunk with the finish reason — and last, at [DONE],
// response.completed (or response.incomplete when the cap cut the answer).
// Reasoning deltas (reasoning_content) are dropped. Only choice 0 is read.
type Translator struct {
	meta   Meta
	seq    int
	output []json.RawMessage // finished items, in order
	msg    *openMessage
	call   *openCall
	calls  int
	finish string
	usage  *Usage
}

type openMessage struct {
	index int
	id    string
	text  strings.Builder
}

type openCall struct {
	index                  int
	id, callID, name, args string
	chatIndex              int
}

// NewTranslator starts the translation of one answer.
func NewTranslator(meta Meta) *Translator { return &Translator{meta: meta} }

func (t *Translator) event(typ string, fields ...any) Event {
	// fields are key, value pairs after type and sequence_number, in order.
	var b strings.Builder
	b.WriteString(`{"type":`)
	b.Write(mustJSON(typ))
	for i := 0; i+1 < len(fields); i += 2 {
		b.WriteString(`,"`)
		b.WriteString(fields[i].(string))
		b.WriteString(`":`)
		b.Write(mustJSON(fields[i+1]))
	}
	b.WriteString(`,"sequence_number":`)
	fmt.Fprint(&b, t.seq)
	b.WriteByte('}')
	t.seq++
	return Event{Type: typ, Data: []byte(b.String())}
}

// Start returns response.created and response.in_progress.
func (t *Translator) Start() []Event {
	r := t.meta.response(StatusInProgress, nil, nil)
	return []Event{t.event("response.created", "response", r), t.event("response.in_progress", "response", r)}
}

// Chunk translates one chat chunk (the JSON of one `data:` line).
func (t *Translator) Chunk(data []byte) ([]Event, error) {
	var c chatChunk
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("responses: chat chunk: %w", err)
	}
	if u := chatUsage(c.Usage); u != nil {
		t.usage = u
	}
	var evs []Event
	for _, ch := range c.Choices {
		if ch.Index != 0 || ch.Delta == nil {
			continue
		}
		d := ch.Delta
		text := ""
		if d.Content != nil {
			text += *d.Content
		}
		if d.Refusal != nil {
			text += *d.Refusal
		}
		if text != "" {
			evs = append(evs, t.closeCall()...)
			evs = append(evs, t.openMessage()...)
			t.msg.text.WriteString(text)
			evs = append(evs, t.event("response.output_text.delta", "item_id", t.msg.id, "output_index", t.msg.index,
				"content_index", 0, "delta", text, "logprobs", []any{}))
		}
		for _, tc := range d.ToolCalls {
			idx := 0
			if tc.Index != nil {
				idx = *tc.Index
			}
			if t.call == nil || t.call.chatIndex != idx {
				evs = append(evs, t.closeMessage()...)
				evs = append(evs, t.closeCall()...)
				evs = append(evs, t.openCall(idx, tc.ID, tc.Function.Name)...)
			} else if tc.Function.Name != "" && t.call.name == "" {
				t.call.name = tc.Function.Name
			}
			if a := tc.Function.Arguments; a != "" {
				t.call.args += a
				evs = append(evs, t.event("response.function_call_arguments.delta", "item_id", t.call.id,
					"output_index", t.call.index, "delta", a))
			}
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			// The items close as the upstream finishes, not at its [DONE]:
			// a client then has the whole answer while the usage is still
			// on its way (issue 12 item 3: the finish grace).
			t.finish = *ch.FinishReason
			evs = append(evs, t.closeMessage()...)
			evs = append(evs, t.closeCall()...)
		}
	}
	return evs, nil
}

func (t *Translator) nextIndex() int { return len(t.output) }

func (t *Translator) openMessage() []Event {
	if t.msg != nil {
		return nil
	}
	t.msg = &openMessage{index: t.nextIndex(), id: itemID("msg", t.meta.ResponseID, t.nextIndex())}
	item := messageItemJSON{ID: t.msg.id, Type: "message", Status: StatusInProgress, Content: []partJSON{}, Role: "assistant"}
	return []Event{
		t.event("response.output_item.added", "output_index", t.msg.index, "item", item),
		t.event("response.content_part.added", "item_id", t.msg.id, "output_index", t.msg.index, "content_index", 0, "part", textPart("")),
	}
}

func (t *Translator) closeMessage() []Event {
	m := t.msg
	if m == nil {
		return nil
	}
	t.msg = nil
	text := m.text.String()
	status := StatusCompleted
	if t.finish == "length" {
		status = StatusIncomplete
	}
	item := mustJSON(messageItemJSON{ID: m.id, Type: "message", Status: status, Content: []partJSON{textPart(text)}, Role: "assistant"})
	t.output = append(t.output, item)
	return []Event{
		t.event("response.output_text.done", "item_id", m.id, "output_index", m.index, "content_index", 0, "text", text, "logprobs", []any{}),
		t.event("response.content_part.done", "item_id", m.id, "output_index", m.index, "content_index", 0, "part", textPart(text)),
		t.event("response.output_item.done", "output_index", m.index, "item", item),
	}
}

func (t *Translator) openCall(chatIndex int, callID, name string) []Event {
	t.calls++
	if callID == "" {
		callID = fmt.Sprintf("call_%s_%d", strings.TrimPrefix(t.meta.ResponseID, "resp_"), t.calls)
	}
	t.call = &openCall{index: t.nextIndex(), id: itemID("fc", t.meta.ResponseID, t.nextIndex()), callID: callID, name: name, chatIndex: chatIndex}
	item := callItemJSON{ID: t.call.id, Type: "function_call", Status: StatusInProgress, Arguments: "", CallID: callID, Name: name}
	return []Event{t.event("response.output_item.added", "output_index", t.call.index, "item", item)}
}

func (t *Translator) closeCall() []Event {
	c := t.call
	if c == nil {
		return nil
	}
	t.call = nil
	item := mustJSON(callItemJSON{ID: c.id, Type: "function_call", Status: StatusCompleted, Arguments: c.args, CallID: c.callID, Name: c.name})
	t.output = append(t.output, item)
	return []Event{
		t.event("response.function_call_arguments.done", "item_id", c.id, "output_index", c.index, "arguments", c.args),
		t.event("response.output_item.done", "output_index", c.index, "item", item),
	}
}

// Done closes the open items and returns the final event: the upstream
// ended its stream properly ([DONE]). It is response.incomplete when the
// output cap ended the answer (finish_reason "length"), else
// response.completed; either carries the upstream's usage, when it sent one.
func (t *Translator) Done() []Event {
	evs := append(t.closeMessage(), t.closeCall()...)
	if t.finish == "length" {
		r := t.meta.response(StatusIncomplete, t.output, t.usage)
		r.IncompleteDetails = &incompleteJSON{Reason: "max_output_tokens"}
		return append(evs, t.event("response.incomplete", "response", r))
	}
	return append(evs, t.event("response.completed", "response", t.meta.response(StatusCompleted, t.output, t.usage)))
}

// Cut returns the one error event that ends a stream the upstream cut; no
// item is closed and nothing is completed.
func (t *Translator) Cut(message string) Event {
	return ErrorEvent(t.seq, ledger.CodeUpstreamInterrupt, message)
}

// ErrorEvent is the `error` event that ends a stream after a failure; seq is
// its sequence_number (the stream's next).
func ErrorEvent(seq int, code, message string) Event {
	data := mustJSON(struct {
		Type           string  `json:"type"`
		Code           string  `json:"code"`
		Message        string  `json:"message"`
		Param          *string `json:"param"`
		SequenceNumber int     `json:"sequence_number"`
	}{"error", code, message, nil, seq})
	return Event{Type: "error", Data: data}
}

func itemID(prefix, responseID string, index int) string {
	return fmt.Sprintf("%s_%s_%d", prefix, strings.TrimPrefix(responseID, "resp_"), index)
}

// FromChatCompletion translates a whole chat completion (a non-streaming
// answer) into a Response object.
func FromChatCompletion(meta Meta, body []byte) ([]byte, error) {
	var c chatChunk
	if err := json.Unmarshal(body, &c); err != nil {
		return nil, fmt.Errorf("responses: chat completion: %w", err)
	}
	t := NewTranslator(meta)
	t.usage = chatUsage(c.Usage)
	for _, ch := range c.Choices {
		if ch.Index != 0 || ch.Message == nil {
			continue
		}
		if ch.FinishReason != nil {
			t.finish = *ch.FinishReason
		}
		m := ch.Message
		text := ""
		if m.Content != nil {
			text += *m.Content
		}
		if m.Refusal != nil {
			text += *m.Refusal
		}
		if text != "" {
			t.openMessage()
			t.msg.text.WriteString(text)
			t.closeMessage()
		}
		for i, tc := range m.ToolCalls {
			t.openCall(i, tc.ID, tc.Function.Name)
			t.call.args = tc.Function.Arguments
			t.closeCall()
		}
	}
	status := StatusCompleted
	var r responseJSON
	if t.finish == "length" {
		status = StatusIncomplete
		r = meta.response(status, t.output, t.usage)
		r.IncompleteDetails = &incompleteJSON{Reason: "max_output_tokens"}
	} else {
		r = meta.response(status, t.output, t.usage)
	}
	return mustJSON(r), nil
}
