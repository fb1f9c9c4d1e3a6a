package demo

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/quotagate/quotagate/backend/anthropic"
)

// The demo speaks the Anthropic Messages API natively (POST /v1/messages):
// the plan's text as a text block, a scripted call (Plan.Call) as a
// tool_use block — acknowledged in text once the conversation ends with its
// tool_result — usage with cache fields, and the same scripted faults as
// the chat endpoint.

// messagesRequest is the part of a Messages request the demo reads.
type messagesRequest struct {
	Model    string          `json:"model"`
	Stream   bool            `json:"stream"`
	System   json.RawMessage `json:"system"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

type msgBlock struct {
	Type         string          `json:"type"`
	Text         string          `json:"text"`
	ToolUseID    string          `json:"tool_use_id"`
	Content      json.RawMessage `json:"content"` // tool_result
	CacheControl json.RawMessage `json:"cache_control"`
}

// blocks reads a string or an array of blocks.
func blocks(raw json.RawMessage) []msgBlock {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []msgBlock{{Type: "text", Text: s}}
	}
	var bs []msgBlock
	_ = json.Unmarshal(raw, &bs)
	return bs
}

// inputBytes counts what utf8-bytes-v1 counts of a Messages request: the
// bytes of system text, of every message's text blocks and of tool_result
// text. cached reports whether any block asks for prompt caching.
func (m *messagesRequest) inputBytes() (n int64, cached bool) {
	var walk func(bs []msgBlock, inResult bool)
	walk = func(bs []msgBlock, inResult bool) {
		for _, b := range bs {
			cached = cached || (len(b.CacheControl) > 0 && string(b.CacheControl) != "null")
			switch b.Type {
			case "text":
				n += int64(len(b.Text))
			case "tool_result":
				if !inResult && len(b.Content) > 0 {
					walk(blocks(b.Content), true)
				}
			}
		}
	}
	if len(m.System) > 0 {
		walk(blocks(m.System), false)
	}
	for _, msg := range m.Messages {
		walk(blocks(msg.Content), false)
	}
	return n, cached
}

func (m *messagesRequest) lastUser() string {
	for i := len(m.Messages) - 1; i >= 0; i-- {
		if m.Messages[i].Role == "user" {
			// The last text block: Claude Code puts its reminders first.
			bs := blocks(m.Messages[i].Content)
			for j := len(bs) - 1; j >= 0; j-- {
				if bs[j].Type == "text" {
					return bs[j].Text
				}
			}
			return ""
		}
	}
	return ""
}

// toolResult is the text of the tool_result the conversation ends with.
func (m *messagesRequest) toolResult() (string, bool) {
	n := len(m.Messages)
	if n == 0 || m.Messages[n-1].Role != "user" {
		return "", false
	}
	for _, b := range blocks(m.Messages[n-1].Content) {
		if b.Type == "tool_result" {
			var text strings.Builder
			for _, c := range blocks(b.Content) {
				text.WriteString(c.Text)
			}
			return text.String(), true
		}
	}
	return "", false
}

func (s *Server) messagesHandler(w http.ResponseWriter, r *http.Request) {
	var req messagesRequest
	body, ok := readRequest(w, r, func(b []byte) error { return json.Unmarshal(b, &req) }, func(msg string) any {
		return msgError("invalid_request_error", msg)
	})
	if !ok {
		return
	}
	x := s.begin(w, r, body, &chatRequest{Model: req.Model, Stream: req.Stream}, req.lastUser(), req.Stream)
	if x == nil {
		return
	}
	defer s.done(x)
	x.msg = &req
	x.run()
}

// errorTypeFor is Anthropic's error type for an HTTP status.
func errorTypeFor(status int) string {
	switch status {
	case 400:
		return anthropic.ErrInvalidRequest
	case 401:
		return anthropic.ErrAuthentication
	case 403:
		return anthropic.ErrPermission
	case 404:
		return anthropic.ErrNotFound
	case 429:
		return anthropic.ErrRateLimit
	case 529, 503:
		return anthropic.ErrOverloaded
	}
	return anthropic.ErrAPI
}

// usage is what the demo reports: the prompt (Options.MessagesPromptUnits,
// else its UTF-8 bytes) split, when the request asks for caching, into a
// quarter written to the cache, half read from it and the rest as
// input_tokens — Anthropic's input_tokens leave cached tokens out — and
// the output units of all generated text.
func (x *exchange) msgUsage() anthropic.AnswerUsage {
	prompt, cached := x.msg.inputBytes()
	if x.s.opts.MessagesPromptUnits != nil {
		prompt = x.s.opts.MessagesPromptUnits(x.rec.Body)
	}
	u := anthropic.AnswerUsage{InputTokens: prompt, OutputTokens: x.s.opts.CompletionUnits(x.req.Model, x.output())}
	if cached {
		u.CacheCreationInputTokens, u.CacheReadInputTokens = prompt/4, prompt/2
		u.InputTokens = prompt - u.CacheCreationInputTokens - u.CacheReadInputTokens
	}
	if x.plan.Kind == KindFalseUsage {
		u.OutputTokens = 0 // contradicts the relayed text
	}
	return u
}

func (x *exchange) msgID() string { return fmt.Sprintf("msg_demo_%d", x.rec.Seq) }

func (x *exchange) toolUseID() string { return fmt.Sprintf("toolu_demo_%d", x.rec.Seq) }

// messages answers a Messages request, by stream or whole.
func (x *exchange) messages() {
	if x.req.Stream {
		x.msgStream()
	} else {
		x.msgComplete()
	}
}

func (x *exchange) send(typ string, v map[string]any, content bool) bool {
	v["type"] = typ
	b, _ := json.Marshal(v)
	buf := make([]byte, 0, len(b)+len(typ)+16)
	buf = append(buf, "event: "...)
	buf = append(buf, typ...)
	buf = append(buf, "\ndata: "...)
	buf = append(buf, b...)
	buf = append(buf, "\n\n"...)
	return x.write(buf, content)
}

func (x *exchange) msgStream() {
	x.startStream()
	u := x.msgUsage()
	start := map[string]any{"id": x.msgID(), "type": "message", "role": "assistant", "model": x.req.Model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil}
	if x.plan.Kind != KindNoUsage {
		// Anthropic's message_start carries a placeholder output count.
		start["usage"] = anthropic.AnswerUsage{InputTokens: u.InputTokens, CacheCreationInputTokens: u.CacheCreationInputTokens,
			CacheReadInputTokens: u.CacheReadInputTokens, OutputTokens: 1}
	}
	if !x.send("message_start", map[string]any{"message": start}, false) {
		return
	}
	// One block: the text, or the scripted call with its input in pieces.
	block := map[string]any{"type": "text", "text": ""}
	parts, delta := x.parts(), func(p string) map[string]any { return map[string]any{"type": "text_delta", "text": p} }
	stop := "end_turn"
	if x.calling() {
		block = map[string]any{"type": "tool_use", "id": x.toolUseID(), "name": x.plan.Call, "input": map[string]any{}}
		parts, delta = x.argParts(), func(p string) map[string]any { return map[string]any{"type": "input_json_delta", "partial_json": p} }
		stop = "tool_use"
	}
	if !x.send("content_block_start", map[string]any{"index": 0, "content_block": block}, false) ||
		!x.send("ping", map[string]any{}, false) {
		return
	}
	for i, part := range parts {
		if x.plan.Kind == KindCut && i >= x.plan.CutAfter {
			panic(http.ErrAbortHandler) // mid-body: no message_delta, no message_stop
		}
		if !x.beforePart() {
			return
		}
		if !x.send("content_block_delta", map[string]any{"index": 0, "delta": delta(part)}, true) {
			return
		}
	}
	if x.plan.Kind == KindCut {
		panic(http.ErrAbortHandler)
	}
	if !x.send("content_block_stop", map[string]any{"index": 0}, false) {
		return
	}
	md := map[string]any{"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}}
	if x.plan.Kind != KindNoUsage {
		md["usage"] = map[string]int64{"output_tokens": u.OutputTokens} // cumulative
	}
	if !x.send("message_delta", md, false) || !x.pause(x.plan.UsageDelay) {
		return
	}
	x.send("message_stop", map[string]any{}, false)
}

func (x *exchange) msgComplete() {
	for range x.parts() {
		if !x.beforePart() {
			return
		}
	}
	content := []any{map[string]any{"type": "text", "text": x.text()}}
	stop := "end_turn"
	if x.calling() {
		stop = "tool_use"
		content = []any{map[string]any{"type": "tool_use", "id": x.toolUseID(), "name": x.plan.Call,
			"input": json.RawMessage(x.args())}}
	}
	resp := map[string]any{"id": x.msgID(), "type": "message", "role": "assistant", "model": x.req.Model,
		"content": content, "stop_reason": stop, "stop_sequence": nil}
	if x.plan.Kind != KindNoUsage {
		resp["usage"] = x.msgUsage()
	}
	x.whole(resp)
}

// msgError is an Anthropic-shaped error body.
func msgError(typ, message string) map[string]any {
	return map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": message}}
}

// apiKey is the key a request carries: x-api-key (Anthropic's header),
// x-goog-api-key (Google's) or an Authorization bearer token.
func apiKey(r *http.Request) string {
	if k := r.Header.Get("X-Api-Key"); k != "" {
		return k
	}
	if k := r.Header.Get("X-Goog-Api-Key"); k != "" {
		return k
	}
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
}
