package demo

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/quotagate/quotagate/backend/gemini"
	"github.com/quotagate/quotagate/backend/wire"
)

// The demo speaks the Gemini API natively (POST
// /v1/models/{model}:generateContent and :streamGenerateContent?alt=sse,
// the gateway's base_url + "/models/…"): the plan's text as text parts, a
// scripted call (Plan.Call) as a functionCall part — acknowledged in text
// once the conversation ends with its functionResponse — the
// usageMetadata on the final chunk, with its finishReason, and the same
// scripted faults as the chat endpoint.

// geminiExchange is the part of a Gemini request the demo reads.
type geminiExchange struct {
	req *gemini.Request
}

// lastUser is the last text part of the last user turn (the directive's
// place, as in the other protocols).
func (g *geminiExchange) lastUser() string {
	for i := len(g.req.Contents) - 1; i >= 0; i-- {
		c := g.req.Contents[i]
		if c.Role != "user" {
			continue
		}
		for j := len(c.Parts) - 1; j >= 0; j-- {
			if p := c.Parts[j]; p.Kind == gemini.PartText && !p.Thought {
				return p.Text
			}
		}
		return ""
	}
	return ""
}

// functionResponse is the response the conversation ends with, if any, as
// compact JSON.
func (g *geminiExchange) functionResponse() (string, bool) {
	n := len(g.req.Contents)
	if n == 0 || g.req.Contents[n-1].Role != "user" {
		return "", false
	}
	for _, p := range g.req.Contents[n-1].Parts {
		if p.Kind == gemini.PartFunctionResponse {
			return string(wire.Compact(p.Response)), true
		}
	}
	return "", false
}

// promptUnits is what utf8-bytes-v1 counts of the request (the bytes of
// every turn's Text), or Options.GeminiPromptUnits.
func (x *exchange) geminiPrompt() int64 {
	if f := x.s.opts.GeminiPromptUnits; f != nil {
		return f(x.req.Model, x.rec.Body)
	}
	var n int64
	for _, t := range x.gem.req.Turns() {
		n += int64(len(t.Text))
	}
	return n
}

func (s *Server) geminiHandler(w http.ResponseWriter, r *http.Request) {
	model, method, _ := strings.Cut(r.PathValue("call"), ":")
	stream := method == "streamGenerateContent"
	if !stream && method != "generateContent" {
		writeJSON(w, http.StatusNotFound, geminiError(http.StatusNotFound, "the demo upstream has no method "+method))
		return
	}
	var req *gemini.Request
	body, ok := readRequest(w, r, func(b []byte) (err error) {
		req, err = gemini.ParseRequest(model, stream, b)
		return err
	}, func(msg string) any { return geminiError(http.StatusBadRequest, msg) })
	if !ok {
		return
	}
	g := &geminiExchange{req: req}
	x := s.begin(w, r, body, &chatRequest{Model: model, Stream: stream}, g.lastUser(), stream)
	if x == nil {
		return
	}
	defer s.done(x)
	x.gem = g
	x.run()
}

// geminiError is a Google-shaped error body.
func geminiError(status int, message string) gemini.ErrorJSON {
	var e gemini.ErrorJSON
	e.Error.Code, e.Error.Message, e.Error.Status = status, message, gemini.StatusFor(status)
	return e
}

// geminiUsage is what the demo reports: the prompt, and the output units of
// all generated text as candidatesTokenCount (the demo does not think).
func (x *exchange) geminiUsage() *gemini.UsageMetadata {
	prompt := x.geminiPrompt()
	out := x.s.opts.CompletionUnits(x.req.Model, x.output())
	if x.plan.Kind == KindFalseUsage {
		out = 0 // contradicts the relayed text
	}
	return &gemini.UsageMetadata{PromptTokenCount: prompt, CandidatesTokenCount: out, TotalTokenCount: prompt + out}
}

// geminiAnswer is one response (or chunk) of the demo's answer.
func (x *exchange) geminiAnswer(parts []gemini.AnswerPart, finish string, u *gemini.UsageMetadata) gemini.Response {
	return gemini.Response{Candidates: []gemini.Candidate{{Content: gemini.AnswerContent{Parts: parts, Role: "model"},
		FinishReason: finish}}, UsageMetadata: u, ModelVersion: x.req.Model, ResponseID: fmt.Sprintf("demo-%d", x.rec.Seq)}
}

func textPart(s string) gemini.AnswerPart { return gemini.AnswerPart{Text: &s} }

// geminiCall is the scripted call as a functionCall part: Gemini sends a
// call whole.
func (x *exchange) geminiCall() gemini.AnswerPart {
	return gemini.AnswerPart{FunctionCall: &gemini.FunctionCall{ID: x.callID(), Name: x.plan.Call, Args: json.RawMessage(x.args())}}
}

// geminiParts is the answer's parts in the pieces a stream sends them:
// the text's parts, or the call whole.
func (x *exchange) geminiParts() []gemini.AnswerPart {
	if x.calling() {
		return []gemini.AnswerPart{x.geminiCall()}
	}
	parts := x.parts()
	out := make([]gemini.AnswerPart, len(parts))
	for i, p := range parts {
		out[i] = textPart(p)
	}
	return out
}

// geminiStream streams the answer: a chunk a part, the last one carrying
// finishReason and the usageMetadata (none under a no-usage plan), or a
// cut after Plan.CutAfter parts: no chunk with a finishReason.
func (x *exchange) geminiStream() {
	x.startStream()
	parts := x.geminiParts()
	for i, p := range parts {
		if x.plan.Kind == KindCut && i >= x.plan.CutAfter {
			panic(http.ErrAbortHandler)
		}
		if !x.beforePart() {
			return
		}
		last := i == len(parts)-1 && x.plan.Kind != KindCut
		if last && !x.pause(x.plan.UsageDelay) {
			return
		}
		resp := x.geminiAnswer([]gemini.AnswerPart{p}, "", nil)
		if last {
			resp.Candidates[0].FinishReason = gemini.FinishStop
			if x.plan.Kind != KindNoUsage {
				resp.UsageMetadata = x.geminiUsage()
			}
		}
		if !x.write(gemini.Chunk(resp), true) {
			return
		}
	}
	if x.plan.Kind == KindCut {
		panic(http.ErrAbortHandler)
	}
}

func (x *exchange) geminiComplete() {
	for range x.parts() {
		if !x.beforePart() {
			return
		}
	}
	parts := []gemini.AnswerPart{textPart(x.text())}
	if x.calling() {
		parts = []gemini.AnswerPart{x.geminiCall()}
	}
	var u *gemini.UsageMetadata
	if x.plan.Kind != KindNoUsage {
		u = x.geminiUsage()
	}
	b, _ := gemini.Marshal(x.geminiAnswer(parts, gemini.FinishStop, u))
	x.wholeBody(b)
}

// geminiErrorMid streams parts then an error chunk, Google's in-stream
// failure.
func (x *exchange) geminiErrorMid(parts []string, msg string) {
	for _, p := range parts {
		if !x.write(gemini.Chunk(x.geminiAnswer([]gemini.AnswerPart{textPart(p)}, "", nil)), true) {
			return
		}
	}
	x.write(gemini.Chunk(geminiError(http.StatusUnauthorized, msg)), false)
}
