package demo

import (
	"encoding/json"
	"net/http"

	"github.com/quotagate/quotagate/backend/openai"
)

// errorMid answers KindErrorMid: CutAfter parts of output in the door's
// protocol, then its in-stream error event, then the end of the body.
func (x *exchange) errorMid() {
	msg := x.plan.Body
	if msg == "" {
		key := apiKey(&http.Request{Header: x.rec.Header})
		msg = "Incorrect API key provided: " + key + ". You can find your API key at https://platform.openai.com/account/api-keys."
	}
	stream := x.req.Stream
	if x.resp != nil {
		stream = x.resp.Stream
	}
	if !stream {
		x.w.Header().Set("Content-Type", "application/json")
		x.w.WriteHeader(http.StatusOK)
		b, _ := json.Marshal(x.errorObject(msg))
		x.write(b, false)
		return
	}
	x.startStream()
	parts := x.parts()[:min(x.plan.CutAfter, len(x.parts()))]
	event := func(name string, v any, content bool) bool {
		b, _ := json.Marshal(v)
		pre := ""
		if name != "" {
			pre = "event: " + name + "\n"
		}
		return x.write([]byte(pre+"data: "+string(b)+"\n\n"), content)
	}
	switch {
	case x.resp != nil:
		id := "msg_demo_err"
		for i, part := range parts {
			if !event("response.output_text.delta", map[string]any{"type": "response.output_text.delta", "sequence_number": i,
				"item_id": id, "output_index": 0, "content_index": 0, "delta": part}, true) {
				return
			}
		}
		event("error", map[string]any{"type": "error", "code": "invalid_api_key", "message": msg, "param": nil, "sequence_number": len(parts)}, false)
	case x.gem != nil:
		x.geminiErrorMid(parts, msg)
	case x.msg != nil:
		if !event("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": x.msgID(), "type": "message",
			"role": "assistant", "model": x.req.Model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil}}, false) ||
			!event("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}}, false) {
			return
		}
		for _, part := range parts {
			if !event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": part}}, true) {
				return
			}
		}
		event("error", msgError("authentication_error", msg), false)
	default:
		for _, part := range parts {
			if !event("", x.partChunk(part), true) {
				return
			}
		}
		event("", x.errorObject(msg), false)
	}
}

// partChunk is a chunk of part in an OpenAI-shaped stream: a legacy
// completion's text, or chat's delta.
func (x *exchange) partChunk(part string) any {
	if x.fim != nil {
		return openai.TextCompletionJSON{ID: x.fimID(), Object: "text_completion", Model: x.req.Model,
			Choices: []openai.TextChoiceJSON{{Text: part}}}
	}
	return map[string]any{"id": x.id(), "object": "chat.completion.chunk", "model": x.req.Model,
		"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": part}, "finish_reason": nil}}}
}

// errorObject is the protocol's error body with message msg.
func (x *exchange) errorObject(msg string) any {
	switch {
	case x.msg != nil:
		return msgError("authentication_error", msg)
	case x.gem != nil:
		return geminiError(http.StatusUnauthorized, msg)
	}
	return errorBody(msg, "invalid_request_error", "invalid_api_key")
}
