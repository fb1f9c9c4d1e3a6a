package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Anthropic wire shapes the gateway writes.
type (
	wireMessage struct {
		ID           string       `json:"id"`
		Type         string       `json:"type"`
		Role         string       `json:"role"`
		Model        string       `json:"model"`
		Content      []wireOutput `json:"content"`
		StopReason   *string      `json:"stop_reason"`
		StopSequence *string      `json:"stop_sequence"`
		Usage        wireUsage    `json:"usage"`
	}
	wireOutput struct {
		Type      string          `json:"type"`
		Text      *string         `json:"text,omitempty"`
		Thinking  *string         `json:"thinking,omitempty"`
		Signature *string         `json:"signature,omitempty"`
		ID        string          `json:"id,omitempty"`
		Name      string          `json:"name,omitempty"`
		Input     json.RawMessage `json:"input,omitempty"`
	}
	wireUsage struct {
		InputTokens              int64 `json:"input_tokens"`
		CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
		CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
		OutputTokens             int64 `json:"output_tokens"`
	}
)

// Chat-completions answer shapes, as far as a translation reads them.
type (
	chatAnswer struct {
		ID      string `json:"id"`
		Choices []struct {
			Delta        chatDelta `json:"delta"`
			Message      chatDelta `json:"message"`
			FinishReason *string   `json:"finish_reason"`
		} `json:"choices"`
		Usage *chatUsage `json:"usage"`
	}
	chatDelta struct {
		Content          *string `json:"content"`
		ReasoningContent *string `json:"reasoning_content"`
		ToolCalls        []struct {
			Index    *int   `json:"index"`
			ID       string `json:"id"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	}
	chatUsage struct {
		PromptTokens        int64 `json:"prompt_tokens"`
		CompletionTokens    int64 `json:"completion_tokens"`
		PromptTokensDetails *struct {
			CachedTokens int64 `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	}
)

// anthropicUsage turns chat usage into Anthropic's: prompt_tokens include
// cached tokens, input_tokens leave them out (they are
// cache_read_input_tokens), so the sum stays the provider's prompt.
func (u *chatUsage) anthropicUsage() wireUsage {
	if u == nil {
		return wireUsage{}
	}
	var cached int64
	if u.PromptTokensDetails != nil {
		cached = min(max(u.PromptTokensDetails.CachedTokens, 0), u.PromptTokens)
	}
	return wireUsage{InputTokens: u.PromptTokens - cached, CacheReadInputTokens: cached, OutputTokens: u.CompletionTokens}
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
	var a chatAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, fmt.Errorf("anthropic: chat completion: %w", err)
	}
	if len(a.Choices) == 0 {
		return nil, fmt.Errorf("anthropic: chat completion has no choices")
	}
	c := a.Choices[0]
	m := wireMessage{ID: id, Type: "message", Role: "assistant", Model: model, Content: []wireOutput{}, Usage: a.Usage.anthropicUsage()}
	if r := c.Message.ReasoningContent; showThinking && r != nil && *r != "" {
		m.Content = append(m.Content, wireOutput{Type: BlockThinking, Thinking: r, Signature: new(string)})
	}
	if t := c.Message.Content; t != nil && *t != "" {
		m.Content = append(m.Content, wireOutput{Type: BlockText, Text: t})
	}
	for i, tc := range c.Message.ToolCalls {
		m.Content = append(m.Content, wireOutput{Type: BlockToolUse, ID: toolID(tc.ID, id, i),
			Name: tc.Function.Name, Input: toolInput(tc.Function.Arguments)})
	}
	finish := ""
	if c.FinishReason != nil {
		finish = *c.FinishReason
	}
	sr := stopReason(finish)
	m.StopReason = &sr
	return marshal(m)
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
	if isObject(raw) && json.Valid(raw) {
		return compactJSON(raw)
	}
	return json.RawMessage("{}")
}

func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("anthropic: encode: %w", err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// event frames one Anthropic SSE event: the event name is the data's type.
func event(typ string, v any) []byte {
	if m, ok := v.(map[string]any); ok { // "type" first, as Anthropic writes it
		delete(m, "type")
		v = typeFirst{typ, m}
	}
	b, err := marshal(v)
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
func StopEvent() []byte { return event("message_stop", map[string]any{}) }

// ErrorEvent is the one event a stream ends with when it cannot finish
// (a cut upstream, a timeout): never followed by message_stop.
func ErrorEvent(typ, message string) []byte {
	return event("error", errorJSON(typ, message))
}

// StreamTranslator turns a chat.completion.chunk stream into Anthropic's
// event order: message_start, then per block content_block_start (a ping
// after the first), content_block_delta…, content_block_stop, then
// message_delta (stop_reason, usage) and — written by the door once the
// outcome is committed — message_stop. Not safe for concurrent use.
type StreamTranslator struct {
	id, model    string
	showThinking bool

	next    int    // the next block's index
	open    string // the open block's type, "" when none
	openIdx int
	tools   map[int]int // chat tool-call index → block index
	pinged  bool
	finish  string
	usage   *chatUsage
}

// NewStreamTranslator starts a translation for message id answering model.
func NewStreamTranslator(id, model string, showThinking bool) *StreamTranslator {
	return &StreamTranslator{id: id, model: model, showThinking: showThinking, tools: map[int]int{}}
}

// Start returns the message_start event.
func (t *StreamTranslator) Start() []byte {
	return event("message_start", map[string]any{"type": "message_start", "message": wireMessage{
		ID: t.id, Type: "message", Role: "assistant", Model: t.model, Content: []wireOutput{}}})
}

// Chunk translates one chat chunk's data payload ("[DONE]" gives nothing:
// End and StopEvent close the stream). The last usage object seen is kept
// for End.
func (t *StreamTranslator) Chunk(payload []byte) ([]byte, error) {
	p := bytes.TrimSpace(payload)
	if bytes.Equal(p, []byte("[DONE]")) {
		return nil, nil
	}
	var a chatAnswer
	if err := json.Unmarshal(p, &a); err != nil {
		return nil, fmt.Errorf("anthropic: chat chunk: %w", err)
	}
	if a.Usage != nil {
		t.usage = a.Usage
	}
	var out []byte
	for _, c := range a.Choices {
		d := c.Delta
		if r := d.ReasoningContent; t.showThinking && r != nil && *r != "" {
			out = t.ensure(out, BlockThinking)
			out = append(out, event("content_block_delta", map[string]any{"type": "content_block_delta", "index": t.openIdx,
				"delta": thinkingDelta{"thinking_delta", *r}})...)
		}
		if s := d.Content; s != nil && *s != "" {
			out = t.ensure(out, BlockText)
			out = append(out, event("content_block_delta", map[string]any{"type": "content_block_delta", "index": t.openIdx,
				"delta": textDelta{"text_delta", *s}})...)
		}
		for i, tc := range d.ToolCalls {
			ci := i
			if tc.Index != nil {
				ci = *tc.Index
			}
			idx, seen := t.tools[ci]
			if !seen {
				out = t.closeOpen(out)
				idx = t.next
				t.next++
				t.tools[ci] = idx
				t.open, t.openIdx = BlockToolUse, idx
				out = t.startEvent(out, idx, wireOutput{Type: BlockToolUse, ID: toolID(tc.ID, t.id, ci),
					Name: tc.Function.Name, Input: json.RawMessage("{}")})
			}
			// A delta for an earlier call (chat may interleave parallel calls)
			// goes to that call's block.
			if tc.Function.Arguments != "" {
				out = append(out, event("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx,
					"delta": jsonDelta{"input_json_delta", tc.Function.Arguments}})...)
			}
		}
		if c.FinishReason != nil && *c.FinishReason != "" {
			t.finish = *c.FinishReason
		}
	}
	return out, nil
}

// ensure opens a block of typ unless one is open.
func (t *StreamTranslator) ensure(out []byte, typ string) []byte {
	if t.open == typ {
		return out
	}
	out = t.closeOpen(out)
	t.open, t.openIdx = typ, t.next
	t.next++
	empty := ""
	b := wireOutput{Type: typ, Text: &empty}
	if typ == BlockThinking {
		b = wireOutput{Type: typ, Thinking: &empty, Signature: new(string)}
	}
	return t.startEvent(out, t.openIdx, b)
}

func (t *StreamTranslator) startEvent(out []byte, idx int, b wireOutput) []byte {
	out = append(out, event("content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": b})...)
	if !t.pinged {
		t.pinged = true
		out = append(out, event("ping", map[string]any{})...)
	}
	return out
}

func (t *StreamTranslator) closeOpen(out []byte) []byte {
	if t.open == "" {
		return out
	}
	t.open = ""
	return append(out, event("content_block_stop", map[string]any{"type": "content_block_stop", "index": t.openIdx})...)
}

// End closes the open block and returns the message_delta with the
// stop_reason and the usage the upstream reported (zeros when it sent none:
// that run keeps its hold, and the client's figures say nothing).
func (t *StreamTranslator) End() []byte {
	out := t.closeOpen(nil)
	u := t.usage.anthropicUsage()
	return append(out, event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stopReason(t.finish), "stop_sequence": nil},
		"usage": u})...)
}

type (
	textDelta struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	thinkingDelta struct {
		Type     string `json:"type"`
		Thinking string `json:"thinking"`
	}
	jsonDelta struct {
		Type        string `json:"type"`
		PartialJSON string `json:"partial_json"`
	}
)

// typeFirst marshals {"type":T, …the other members in key order}.
type typeFirst struct {
	typ  string
	rest map[string]any
}

func (t typeFirst) MarshalJSON() ([]byte, error) {
	rest, err := marshal(t.rest)
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
