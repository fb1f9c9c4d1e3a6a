package translate

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/openai"
	"github.com/quotagate/quotagate/backend/responses"
)

// responsesUsage is chat usage as the Responses API writes it; nil when
// absent or not evidence (the chat door's own judgement decides whether it
// is trusted).
func responsesUsage(raw json.RawMessage) *responses.Usage {
	c := chatUsage(raw)
	if c == nil {
		return nil
	}
	return &responses.Usage{InputTokens: c.PromptTokens, OutputTokens: c.CompletionTokens, TotalTokens: c.PromptTokens + c.CompletionTokens,
		CachedTokens: c.CachedTokens, ReasoningTokens: c.ReasoningTokens}
}

// ResponsesStream turns a chat-completions stream into Responses events in
// OpenAI's order: response.created, response.in_progress, then per output
// item output_item.added, (content_part.added, output_text.delta…,
// output_text.done, content_part.done | function_call_arguments.delta…,
// function_call_arguments.done), output_item.done — the open items close
// on the chunk with the finish reason — and last, at [DONE],
// response.completed (or response.incomplete when the cap cut the answer).
// Reasoning deltas (reasoning_content) are dropped. Only choice 0 is read.
type ResponsesStream struct {
	meta   responses.Meta
	seq    int
	output []json.RawMessage // finished items, in order
	msg    *openMessage
	call   *openCall
	calls  int
	finish string
	usage  *responses.Usage
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

// NewResponsesStream starts the translation of one answer.
func NewResponsesStream(meta responses.Meta) *ResponsesStream { return &ResponsesStream{meta: meta} }

func (t *ResponsesStream) event(typ string, fields ...any) responses.Event {
	// fields are key, value pairs after type and sequence_number, in order.
	var b strings.Builder
	b.WriteString(`{"type":`)
	b.Write(responses.Encode(typ))
	for i := 0; i+1 < len(fields); i += 2 {
		b.WriteString(`,"`)
		b.WriteString(fields[i].(string))
		b.WriteString(`":`)
		b.Write(responses.Encode(fields[i+1]))
	}
	b.WriteString(`,"sequence_number":`)
	fmt.Fprint(&b, t.seq)
	b.WriteByte('}')
	t.seq++
	return responses.Event{Type: typ, Data: []byte(b.String())}
}

// Start returns response.created and response.in_progress.
func (t *ResponsesStream) Start() []responses.Event {
	r := t.meta.Response(responses.StatusInProgress, nil, nil)
	return []responses.Event{t.event("response.created", "response", r), t.event("response.in_progress", "response", r)}
}

// Chunk translates one chat chunk (the JSON of one `data:` line).
func (t *ResponsesStream) Chunk(data []byte) ([]responses.Event, error) {
	var c openai.ChunkJSON
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("responses: chat chunk: %w", err)
	}
	if u := responsesUsage(c.Usage); u != nil {
		t.usage = u
	}
	var evs []responses.Event
	for _, ch := range c.Choices {
		if ch.Index != 0 || ch.Delta == nil {
			continue
		}
		d := ch.Delta
		text := answerText(d.Content, d.Refusal)
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
			// on its way (the door's finish grace waits for it).
			t.finish = *ch.FinishReason
			evs = append(evs, t.closeMessage()...)
			evs = append(evs, t.closeCall()...)
		}
	}
	return evs, nil
}

func (t *ResponsesStream) nextIndex() int { return len(t.output) }

func (t *ResponsesStream) openMessage() []responses.Event {
	if t.msg != nil {
		return nil
	}
	t.msg = &openMessage{index: t.nextIndex(), id: itemID("msg", t.meta.ResponseID, t.nextIndex())}
	item := responses.MessageItemJSON{ID: t.msg.id, Type: "message", Status: responses.StatusInProgress, Content: []responses.PartJSON{}, Role: "assistant"}
	return []responses.Event{
		t.event("response.output_item.added", "output_index", t.msg.index, "item", item),
		t.event("response.content_part.added", "item_id", t.msg.id, "output_index", t.msg.index, "content_index", 0, "part", responses.TextPart("")),
	}
}

func (t *ResponsesStream) closeMessage() []responses.Event {
	m := t.msg
	if m == nil {
		return nil
	}
	t.msg = nil
	text := m.text.String()
	status := responses.StatusCompleted
	if t.finish == "length" {
		status = responses.StatusIncomplete
	}
	item := responses.Encode(responses.MessageItemJSON{ID: m.id, Type: "message", Status: status, Content: []responses.PartJSON{responses.TextPart(text)}, Role: "assistant"})
	t.output = append(t.output, item)
	return []responses.Event{
		t.event("response.output_text.done", "item_id", m.id, "output_index", m.index, "content_index", 0, "text", text, "logprobs", []any{}),
		t.event("response.content_part.done", "item_id", m.id, "output_index", m.index, "content_index", 0, "part", responses.TextPart(text)),
		t.event("response.output_item.done", "output_index", m.index, "item", item),
	}
}

func (t *ResponsesStream) openCall(chatIndex int, callID, name string) []responses.Event {
	t.calls++
	if callID == "" {
		callID = fmt.Sprintf("call_%s_%d", strings.TrimPrefix(t.meta.ResponseID, "resp_"), t.calls)
	}
	t.call = &openCall{index: t.nextIndex(), id: itemID("fc", t.meta.ResponseID, t.nextIndex()), callID: callID, name: name, chatIndex: chatIndex}
	item := responses.CallItemJSON{ID: t.call.id, Type: "function_call", Status: responses.StatusInProgress, Arguments: "", CallID: callID, Name: name}
	return []responses.Event{t.event("response.output_item.added", "output_index", t.call.index, "item", item)}
}

func (t *ResponsesStream) closeCall() []responses.Event {
	c := t.call
	if c == nil {
		return nil
	}
	t.call = nil
	item := responses.Encode(responses.CallItemJSON{ID: c.id, Type: "function_call", Status: responses.StatusCompleted, Arguments: c.args, CallID: c.callID, Name: c.name})
	t.output = append(t.output, item)
	return []responses.Event{
		t.event("response.function_call_arguments.done", "item_id", c.id, "output_index", c.index, "arguments", c.args),
		t.event("response.output_item.done", "output_index", c.index, "item", item),
	}
}

// Done closes the open items and returns the final event: the upstream
// ended its stream properly ([DONE]). It is response.incomplete when the
// output cap ended the answer (finish_reason "length"), else
// response.completed; either carries the upstream's usage, when it sent one.
func (t *ResponsesStream) Done() []responses.Event {
	evs := append(t.closeMessage(), t.closeCall()...)
	if t.finish == "length" {
		r := t.meta.Response(responses.StatusIncomplete, t.output, t.usage)
		r.IncompleteDetails = &responses.IncompleteJSON{Reason: "max_output_tokens"}
		return append(evs, t.event("response.incomplete", "response", r))
	}
	return append(evs, t.event("response.completed", "response", t.meta.Response(responses.StatusCompleted, t.output, t.usage)))
}

// Cut returns the one error event that ends a stream the upstream cut; no
// item is closed and nothing is completed.
func (t *ResponsesStream) Cut(message string) responses.Event {
	return responses.ErrorEvent(t.seq, ledger.CodeUpstreamInterrupt, message)
}

func itemID(prefix, responseID string, index int) string {
	return fmt.Sprintf("%s_%s_%d", prefix, strings.TrimPrefix(responseID, "resp_"), index)
}

// ResponseFromChat translates a whole chat completion (a non-streaming
// answer) into a Response object.
func ResponseFromChat(meta responses.Meta, body []byte) ([]byte, error) {
	var c openai.CompletionJSON
	if err := json.Unmarshal(body, &c); err != nil {
		return nil, fmt.Errorf("responses: chat completion: %w", err)
	}
	t := NewResponsesStream(meta)
	t.usage = responsesUsage(c.Usage)
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue
		}
		t.finish = ch.FinishReason
		m := ch.Message
		text := answerText(m.Content, m.Refusal)
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
	status := responses.StatusCompleted
	var r responses.ResponseJSON
	if t.finish == "length" {
		status = responses.StatusIncomplete
		r = meta.Response(status, t.output, t.usage)
		r.IncompleteDetails = &responses.IncompleteJSON{Reason: "max_output_tokens"}
	} else {
		r = meta.Response(status, t.output, t.usage)
	}
	return responses.Encode(r), nil
}

// answerText is what a chat answer (a delta or a whole message) shows as
// Responses output text: its content, then its refusal, either absent.
func answerText(content, refusal *string) string {
	text := ""
	if content != nil {
		text += *content
	}
	if refusal != nil {
		text += *refusal
	}
	return text
}
