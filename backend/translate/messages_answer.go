package translate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/quotagate/quotagate/backend/anthropic"
	"github.com/quotagate/quotagate/backend/openai"
	"github.com/quotagate/quotagate/backend/wire"
)

// chatUsage is a chat usage object as the chat door reads it; nil when
// absent or not evidence (that run keeps its hold, and the translated
// figures say nothing).
func chatUsage(raw json.RawMessage) *openai.Usage {
	u, err := openai.ParseUsage(raw)
	if err != nil {
		return nil
	}
	return u
}

// chatTail is what a stream translation keeps of the chat chunks it has
// read, for its End: the finish reason and the last usage object.
type chatTail struct {
	finish string
	usage  *openai.Usage
}

// read decodes one chat chunk's data payload for a translation to door's
// stream, keeping its usage object; nil without error for the "[DONE]"
// that ends a chat stream, since each translation closes its own stream
// from End.
func (k *chatTail) read(payload []byte, door string) (*openai.ChunkJSON, error) {
	p := bytes.TrimSpace(payload)
	if bytes.Equal(p, []byte("[DONE]")) {
		return nil, nil
	}
	var a openai.ChunkJSON
	if err := json.Unmarshal(p, &a); err != nil {
		return nil, fmt.Errorf("%s: chat chunk: %w", door, err)
	}
	if u := chatUsage(a.Usage); u != nil {
		k.usage = u
	}
	return &a, nil
}

// finished keeps the choice's finish reason when it gives one.
func (k *chatTail) finished(c openai.ChunkChoiceJSON) {
	if c.FinishReason != nil && *c.FinishReason != "" {
		k.finish = *c.FinishReason
	}
}

// firstChoice decodes a whole chat.completion body for a translation to
// door's answer: its first choice, the one a translated request asks for
// (n is never forwarded), and its usage (nil without one).
func firstChoice(body []byte, door string) (openai.CompletionChoiceJSON, *openai.Usage, error) {
	var a openai.CompletionJSON
	if err := json.Unmarshal(body, &a); err != nil {
		return openai.CompletionChoiceJSON{}, nil, fmt.Errorf("%s: chat completion: %w", door, err)
	}
	if len(a.Choices) == 0 {
		return openai.CompletionChoiceJSON{}, nil, fmt.Errorf("%s: chat completion has no choices", door)
	}
	return a.Choices[0], chatUsage(a.Usage), nil
}

// anthropicUsage turns chat usage into Anthropic's: prompt_tokens include
// cached tokens, input_tokens leave them out (they are
// cache_read_input_tokens), so the sum stays the provider's prompt.
func anthropicUsage(u *openai.Usage) anthropic.AnswerUsage {
	if u == nil {
		return anthropic.AnswerUsage{}
	}
	cached := min(max(u.CachedTokens, 0), u.PromptTokens)
	return anthropic.AnswerUsage{InputTokens: u.PromptTokens - cached, CacheReadInputTokens: cached, OutputTokens: u.CompletionTokens}
}

// stopReason maps a chat finish_reason onto Anthropic's stop_reason.
func stopReason(finish string) string {
	switch finish {
	case "length":
		return "max_tokens"
	case "tool_calls", "function_call":
		return "tool_use"
	case "content_filter":
		return "refusal"
	}
	return "end_turn"
}

// MessageFromChat translates a whole chat.completion body into an Anthropic
// message with id and the model the client asked for. Reasoning text
// becomes a thinking block when showThinking (the client asked to think);
// tool calls become tool_use blocks, their arguments the input object.
func MessageFromChat(body []byte, id, model string, showThinking bool) ([]byte, error) {
	c, usage, err := firstChoice(body, "anthropic")
	if err != nil {
		return nil, err
	}
	m := anthropic.AnswerMessage{ID: id, Type: "message", Role: "assistant", Model: model,
		Content: []anthropic.AnswerBlock{}, Usage: anthropicUsage(usage)}
	if r := c.Message.ReasoningContent; showThinking && r != nil && *r != "" {
		m.Content = append(m.Content, anthropic.AnswerBlock{Type: anthropic.BlockThinking, Thinking: r, Signature: new(string)})
	}
	if t := c.Message.Content; t != nil && *t != "" {
		m.Content = append(m.Content, anthropic.AnswerBlock{Type: anthropic.BlockText, Text: t})
	}
	for i, tc := range c.Message.ToolCalls {
		m.Content = append(m.Content, anthropic.AnswerBlock{Type: anthropic.BlockToolUse, ID: toolID(tc.ID, id, i),
			Name: tc.Function.Name, Input: toolInput(tc.Function.Arguments)})
	}
	sr := stopReason(c.FinishReason)
	m.StopReason = &sr
	return anthropic.Marshal(m)
}

func toolID(id, msgID string, i int) string {
	if id != "" {
		return id
	}
	return "toolu_" + msgID + "_" + strconv.Itoa(i)
}

// toolInput is a tool call's arguments as the input object; arguments that
// are not a JSON object (a model's malformed call) become {}.
func toolInput(args string) json.RawMessage {
	raw := json.RawMessage(args)
	if wire.IsObject(raw) && json.Valid(raw) {
		return wire.Compact(raw)
	}
	return json.RawMessage("{}")
}

// MessagesStream turns a chat.completion.chunk stream into Anthropic's
// event order: message_start, then per block content_block_start (a ping
// after the first), content_block_delta…, content_block_stop, then
// message_delta (stop_reason, usage) and — written by the door once the
// outcome is committed — message_stop. Not safe for concurrent use.
type MessagesStream struct {
	id, model    string
	showThinking bool

	next    int    // the next block's index
	open    string // the open block's type, "" when none
	openIdx int
	tools   map[int]int // chat tool-call index → block index
	pinged  bool
	chatTail
}

// NewMessagesStream starts a translation for message id answering model.
func NewMessagesStream(id, model string, showThinking bool) *MessagesStream {
	return &MessagesStream{id: id, model: model, showThinking: showThinking, tools: map[int]int{}}
}

// Start returns the message_start event.
func (t *MessagesStream) Start() []byte {
	return anthropic.Event(anthropic.EventMessageStart, map[string]any{"message": anthropic.AnswerMessage{
		ID: t.id, Type: "message", Role: "assistant", Model: t.model, Content: []anthropic.AnswerBlock{}}})
}

// Chunk translates one chat chunk's data payload ("[DONE]" gives nothing:
// End and anthropic.StopEvent close the stream). The last usage object
// seen is kept for End.
func (t *MessagesStream) Chunk(payload []byte) ([]byte, error) {
	a, err := t.read(payload, "anthropic")
	if a == nil {
		return nil, err
	}
	var out []byte
	for _, c := range a.Choices {
		if c.Delta != nil {
			out = t.delta(out, c.Delta)
		}
		t.finished(c)
	}
	return out, nil
}

// delta appends the events of one choice's delta: thinking, text, and the
// tool calls it starts or continues.
func (t *MessagesStream) delta(out []byte, d *openai.DeltaJSON) []byte {
	if r := d.ReasoningContent; t.showThinking && r != nil && *r != "" {
		out = t.ensure(out, anthropic.BlockThinking)
		out = append(out, blockDelta(t.openIdx, anthropic.ThinkingDelta{Type: "thinking_delta", Thinking: *r})...)
	}
	if s := d.Content; s != nil && *s != "" {
		out = t.ensure(out, anthropic.BlockText)
		out = append(out, blockDelta(t.openIdx, anthropic.TextDelta{Type: "text_delta", Text: *s})...)
	}
	for i, tc := range d.ToolCalls {
		ci := tc.Slot(i)
		idx, seen := t.tools[ci]
		if !seen {
			out = t.closeOpen(out)
			idx = t.next
			t.next++
			t.tools[ci] = idx
			t.open, t.openIdx = anthropic.BlockToolUse, idx
			out = t.startEvent(out, idx, anthropic.AnswerBlock{Type: anthropic.BlockToolUse, ID: toolID(tc.ID, t.id, ci),
				Name: tc.Function.Name, Input: json.RawMessage("{}")})
		}
		// A delta for an earlier call (chat may interleave parallel calls)
		// goes to that call's block.
		if tc.Function.Arguments != "" {
			out = append(out, blockDelta(idx, anthropic.JSONDelta{Type: "input_json_delta", PartialJSON: tc.Function.Arguments})...)
		}
	}
	return out
}

func blockDelta(idx int, delta any) []byte {
	return anthropic.Event(anthropic.EventContentBlockDelta, map[string]any{"index": idx, "delta": delta})
}

// ensure opens a block of typ unless one is open.
func (t *MessagesStream) ensure(out []byte, typ string) []byte {
	if t.open == typ {
		return out
	}
	out = t.closeOpen(out)
	t.open, t.openIdx = typ, t.next
	t.next++
	empty := ""
	b := anthropic.AnswerBlock{Type: typ, Text: &empty}
	if typ == anthropic.BlockThinking {
		b = anthropic.AnswerBlock{Type: typ, Thinking: &empty, Signature: new(string)}
	}
	return t.startEvent(out, t.openIdx, b)
}

func (t *MessagesStream) startEvent(out []byte, idx int, b anthropic.AnswerBlock) []byte {
	out = append(out, anthropic.Event(anthropic.EventContentBlockStart, map[string]any{"index": idx, "content_block": b})...)
	if !t.pinged {
		t.pinged = true
		out = append(out, anthropic.Event(anthropic.EventPing, map[string]any{})...)
	}
	return out
}

func (t *MessagesStream) closeOpen(out []byte) []byte {
	if t.open == "" {
		return out
	}
	t.open = ""
	return append(out, anthropic.Event(anthropic.EventContentBlockStop, map[string]any{"index": t.openIdx})...)
}

// End closes the open block and returns the message_delta with the
// stop_reason and the usage the upstream reported (zeros when it sent none:
// that run keeps its hold, and the client's figures say nothing).
func (t *MessagesStream) End() []byte {
	out := t.closeOpen(nil)
	return append(out, anthropic.Event(anthropic.EventMessageDelta, map[string]any{
		"delta": map[string]any{"stop_reason": stopReason(t.finish), "stop_sequence": nil},
		"usage": anthropicUsage(t.usage)})...)
}
