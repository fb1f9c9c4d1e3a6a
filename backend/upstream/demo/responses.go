package demo

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// The demo speaks the OpenAI Responses API natively (POST /v1/responses):
// text, or the scripted function call of Plan.Call, streamed as OpenAI
// streams it (response.created, response.in_progress, output_item.added,
// content_part.added, output_text.delta…, output_text.done,
// content_part.done, output_item.done, response.completed with usage), with
// the same X-Demo-Plan faults as chat: cut, no-usage, false-usage, slow,
// error, stall, latency.

// responsesRequest is the part of a Responses request the demo reads. It
// reads the body itself (not with quotagate's parser): a test double that
// shared the code under test would agree with it by construction.
type responsesRequest struct {
	Model        string
	Stream       bool
	Instructions string
	Input        []respInput
}

type respInput struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	Output  json.RawMessage `json:"output"`
}

func parseResponsesRequest(body []byte) (*responsesRequest, error) {
	var r struct {
		Model        string          `json:"model"`
		Stream       bool            `json:"stream"`
		Instructions string          `json:"instructions"`
		Input        json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, err
	}
	req := &responsesRequest{Model: r.Model, Stream: r.Stream, Instructions: r.Instructions}
	var s string
	if json.Unmarshal(r.Input, &s) == nil {
		content, _ := json.Marshal(s)
		req.Input = []respInput{{Type: "message", Role: "user", Content: content}}
		return req, nil
	}
	if err := json.Unmarshal(r.Input, &req.Input); err != nil {
		return nil, fmt.Errorf("input: %w", err)
	}
	for i := range req.Input {
		if req.Input[i].Type == "" && req.Input[i].Role != "" {
			req.Input[i].Type = "message"
		}
	}
	return req, nil
}

// texts returns the text parts of a content or output value.
func texts(raw json.RawMessage) []string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []string{s}
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var out []string
	for _, p := range parts {
		switch p.Type {
		case "input_text", "output_text", "text":
			out = append(out, p.Text)
		}
	}
	return out
}

func (it respInput) outputText() string { return strings.Join(texts(it.Output), "") }

func (r *responsesRequest) lastUser() string {
	for i := len(r.Input) - 1; i >= 0; i-- {
		if r.Input[i].Type == "message" && r.Input[i].Role == "user" {
			return strings.Join(texts(r.Input[i].Content), "")
		}
	}
	return ""
}

// promptUnits is custom(body) when set, else the UTF-8 bytes of the
// instructions, the messages' text parts and the function outputs.
func (r *responsesRequest) promptUnits(custom func([]byte) int64, body []byte) int64 {
	if custom != nil {
		return custom(body)
	}
	n := int64(len(r.Instructions))
	for _, it := range r.Input {
		switch {
		case it.Type == "message":
			for _, t := range texts(it.Content) {
				n += int64(len(t))
			}
		case strings.HasSuffix(it.Type, "_call_output"):
			n += int64(len(it.outputText()))
		}
	}
	return n
}

func (s *Server) responsesHandler(w http.ResponseWriter, r *http.Request) {
	var rr *responsesRequest
	body, ok := readRequest(w, r, func(b []byte) (err error) { rr, err = parseResponsesRequest(b); return err }, chatRefusal)
	if !ok {
		return
	}
	x := s.begin(w, r, body, &chatRequest{Model: rr.Model, Stream: rr.Stream}, rr.lastUser(), rr.Stream)
	if x == nil {
		return
	}
	x.resp = rr
	defer s.done(x)
	x.run()
}

func (x *exchange) responseID() string { return fmt.Sprintf("resp_demo_%d", x.rec.Seq) }

// respUsage is x.usage() in the Responses API's names.
func (x *exchange) respUsage() map[string]any {
	u := x.usage()
	return map[string]any{
		"input_tokens": u.PromptTokens, "input_tokens_details": map[string]int64{"cached_tokens": 0},
		"output_tokens": u.CompletionTokens, "output_tokens_details": map[string]int64{"reasoning_tokens": 0},
		"total_tokens": u.TotalTokens,
	}
}

func (x *exchange) responseObject(status string, created int64, output []any, usage any) map[string]any {
	var instructions any
	if x.resp.Instructions != "" {
		instructions = x.resp.Instructions
	}
	if output == nil {
		output = []any{}
	}
	return map[string]any{
		"id": x.responseID(), "object": "response", "created_at": created, "status": status,
		"background": false, "error": nil, "incomplete_details": nil, "instructions": instructions,
		"max_output_tokens": nil, "model": x.resp.Model, "output": output, "parallel_tool_calls": true,
		"previous_response_id": nil, "reasoning": map[string]any{"effort": nil, "summary": nil},
		"store": false, "temperature": 1.0, "text": map[string]any{"format": map[string]string{"type": "text"}},
		"tool_choice": "auto", "tools": []any{}, "top_p": 1.0, "truncation": "disabled",
		"usage": usage, "user": nil, "metadata": map[string]any{},
	}
}

func textPartJSON(text string) map[string]any {
	return map[string]any{"type": "output_text", "annotations": []any{}, "logprobs": []any{}, "text": text}
}

func (x *exchange) messageItem(status, text string, done bool) map[string]any {
	content := []any{}
	if done {
		content = []any{textPartJSON(text)}
	}
	return map[string]any{"id": fmt.Sprintf("msg_demo_%d", x.rec.Seq), "type": "message", "status": status, "content": content, "role": "assistant"}
}

func (x *exchange) callItem(status, args string) map[string]any {
	return map[string]any{"id": fmt.Sprintf("fc_demo_%d", x.rec.Seq), "type": "function_call", "status": status,
		"arguments": args, "call_id": x.callID(), "name": x.plan.Call}
}

func (x *exchange) responses() {
	if x.resp.Stream {
		x.responsesStream()
	} else {
		x.responsesComplete()
	}
}

func (x *exchange) finalUsage() any {
	if x.plan.Kind == KindNoUsage {
		return nil
	}
	return x.respUsage()
}

// respSend writes one Responses event of type typ with the members kv
// (key, value pairs) and the stream's next sequence_number.
type respSend func(typ string, content bool, kv ...any) bool

func (x *exchange) responsesStream() {
	x.startStream()
	created := time.Now().Unix()
	seq := 0
	send := func(typ string, content bool, kv ...any) bool {
		m := map[string]any{"type": typ, "sequence_number": seq}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		seq++
		b, _ := json.Marshal(m)
		return x.write([]byte("event: "+typ+"\ndata: "+string(b)+"\n\n"), content)
	}
	if !send("response.created", false, "response", x.responseObject("in_progress", created, nil, nil)) ||
		!send("response.in_progress", false, "response", x.responseObject("in_progress", created, nil, nil)) {
		return
	}
	streamItem := x.streamMessageItem
	if x.calling() {
		streamItem = x.streamCallItem
	}
	item, ok := streamItem(send)
	if !ok || !send("response.output_item.done", false, "output_index", 0, "item", item) || !x.pause(x.plan.UsageDelay) {
		return
	}
	send("response.completed", false, "response", x.responseObject("completed", created, []any{item}, x.finalUsage()))
}

// streamCallItem streams the scripted function call as output item 0 and
// returns the finished item; ok is false when the client went away (a
// KindCut plan panics mid-arguments, closing the connection).
func (x *exchange) streamCallItem(send respSend) (item map[string]any, ok bool) {
	id := x.callItem("", "")["id"]
	if !send("response.output_item.added", false, "output_index", 0, "item", x.callItem("in_progress", "")) {
		return nil, false
	}
	for i, part := range x.argParts() {
		if x.plan.Kind == KindCut && i >= x.plan.CutAfter {
			panic(http.ErrAbortHandler)
		}
		if !x.beforePart() || !send("response.function_call_arguments.delta", true, "item_id", id, "output_index", 0, "delta", part) {
			return nil, false
		}
	}
	if x.plan.Kind == KindCut {
		panic(http.ErrAbortHandler)
	}
	item = x.callItem("completed", x.args())
	return item, send("response.function_call_arguments.done", false, "item_id", id, "output_index", 0, "arguments", x.args())
}

// streamMessageItem streams the plan's text as message item 0, like
// streamCallItem.
func (x *exchange) streamMessageItem(send respSend) (item map[string]any, ok bool) {
	id := x.messageItem("", "", false)["id"]
	if !send("response.output_item.added", false, "output_index", 0, "item", x.messageItem("in_progress", "", false)) ||
		!send("response.content_part.added", false, "item_id", id, "output_index", 0, "content_index", 0, "part", textPartJSON("")) {
		return nil, false
	}
	for i, part := range x.parts() {
		if x.plan.Kind == KindCut && i >= x.plan.CutAfter {
			panic(http.ErrAbortHandler)
		}
		if !x.beforePart() ||
			!send("response.output_text.delta", true, "item_id", id, "output_index", 0, "content_index", 0, "delta", part, "logprobs", []any{}) {
			return nil, false
		}
	}
	if x.plan.Kind == KindCut {
		panic(http.ErrAbortHandler)
	}
	text := x.text()
	item = x.messageItem("completed", text, true)
	return item, send("response.output_text.done", false, "item_id", id, "output_index", 0, "content_index", 0, "text", text, "logprobs", []any{}) &&
		send("response.content_part.done", false, "item_id", id, "output_index", 0, "content_index", 0, "part", textPartJSON(text))
}

func (x *exchange) responsesComplete() {
	for range x.parts() {
		if !x.beforePart() {
			return
		}
	}
	var item map[string]any
	if x.calling() {
		item = x.callItem("completed", x.args())
	} else {
		item = x.messageItem("completed", x.text(), true)
	}
	x.whole(x.responseObject("completed", time.Now().Unix(), []any{item}, x.finalUsage()))
}
