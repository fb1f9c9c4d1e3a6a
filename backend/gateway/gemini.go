package gateway

import (
	"bytes"
	"errors"
	"net/http"
	"strings"

	"github.com/quotagate/quotagate/backend/gemini"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/meter"
	"github.com/quotagate/quotagate/backend/openai"
	"github.com/quotagate/quotagate/backend/translate"
	"github.com/quotagate/quotagate/backend/upstream"
)

// geminiDoor is the Gemini API (generativelanguage v1beta), for Gemini
// CLI and the Google Gen AI SDKs: POST
// /v1beta/models/{model}:generateContent and
// :streamGenerateContent?alt=sse. The model is in the URL, so there is one
// door value per request. An upstream whose protocols include gemini gets
// the client's body as it came (at base_url + "/models/{model}:…", the
// upstream key as x-goog-api-key); any other is sent chat completions, and
// the answer translated back.
type geminiDoor struct {
	model  string
	stream bool
}

func (geminiDoor) protocol() Protocol { return ProtocolGemini }

func (d geminiDoor) parse(body []byte) (doorRequest, error) {
	req, err := gemini.ParseRequest(d.model, d.stream, body)
	return &geminiRequest{req: req, id: newMessageID()}, err
}

func (geminiDoor) writeError(w http.ResponseWriter, err error) { writeGeminiError(w, err) }

// streamError ends a stream that cannot finish with one Google-shaped
// error event and never a chunk with a made-up finishReason.
func (geminiDoor) streamError(err error) []byte { return translate.GeminiErrorEvent(err) }

// writeGeminiError renders a refusal in Google's shape, with the status
// and Retry-After of errorHeaders.
func writeGeminiError(w http.ResponseWriter, err error) {
	status := errorHeaders(w, err)
	w.WriteHeader(status)
	_, _ = w.Write(translate.GeminiErrorBody(status, err))
}

// Gemini's methods, the part of the path after the model's colon.
const (
	geminiGenerate = "generateContent"
	geminiStream   = "streamGenerateContent"
	geminiCount    = "countTokens"
)

// geminiPath is where a native Gemini body goes under an upstream's base
// URL (the upstream client sends the key there as x-goog-api-key).
func geminiPath(model string, stream bool) string {
	if stream {
		return upstream.GeminiModelsPath + model + ":" + geminiStream + "?alt=sse"
	}
	return upstream.GeminiModelsPath + model + ":" + geminiGenerate
}

// geminiRequest is one parsed Gemini request.
type geminiRequest struct {
	req *gemini.Request
	id  string // the responseId a translated answer carries
}

func (g *geminiRequest) meterRequest() meter.Request { return GeminiMeterRequest(g.req) }

func (g *geminiRequest) upstream(to target) (string, []byte, error) {
	if to.native {
		return geminiPath(g.req.Model, g.req.Stream), g.req.Raw(), nil
	}
	b, err := translate.GeminiToChat(g.req, translate.ChatOptions{Reasoning: to.reasoningSwitch})
	return chatPath, b, err
}

func (g *geminiRequest) answer(native bool) answer {
	if native {
		return &nativeGemini{}
	}
	thoughts := g.req.Generation.Thinking != nil && g.req.Generation.Thinking.IncludeThoughts
	return &translatedGemini{tr: translate.NewGeminiStream(g.req.Model, g.id, thoughts),
		model: g.req.Model, id: g.id, thoughts: thoughts}
}

// GeminiMeterRequest is what the meter counts of a Gemini request: the
// system instruction and every turn (gemini.Turns), the tools,
// maxOutputTokens, candidateCount and the thinking budget. The reserve and
// :countTokens both count it.
func GeminiMeterRequest(r *gemini.Request) meter.Request {
	g := r.Generation
	mr := meter.Request{Model: r.Model, Stream: r.Stream, Messages: meterMessages(r.Turns()), ToolsJSON: r.ToolsJSON(),
		OutputCap: g.MaxOutputTokens, HasOutputCap: g.MaxOutputTokens > 0, N: g.CandidateCount}
	if t := g.Thinking; t != nil && t.HasBudget && t.Budget > 0 {
		mr.ReasoningBudget = t.Budget
	}
	return mr
}

// GeminiInputUnits is the gateway's count of a Gemini body's input for
// model under m, as the reserve counts it (no media units); 0 when the
// body does not parse. The demo upstream reports it as promptTokenCount,
// to be trusted.
func GeminiInputUnits(m meter.Meter, model string, body []byte) ledger.Units {
	parse := func(b []byte) (*gemini.Request, error) { return gemini.ParseRequest(model, false, b) }
	return inputUnits(m, body, parse, GeminiMeterRequest)
}

// geminiUsage is Gemini's usageMetadata as the provider's prompt and
// output: the prompt with the tool-use prompt, the candidates with the
// thoughts (the reasoning); the cached tokens stay on the run.
func geminiUsage(u gemini.Usage) *ledger.Usage {
	return &ledger.Usage{PromptTokens: u.PromptTokens(), CompletionTokens: u.OutputTokens(),
		TotalTokens: u.TotalTokenCount, HasTotal: u.HasTotal,
		ReasoningTokens: u.ThoughtsTokenCount, CachedTokens: u.CachedContentTokenCount}
}

// nativeGemini reads a Gemini answer and relays it as it came. A stream
// has no end marker of its own: the chunk whose candidate carries
// finishReason is the last, and its usageMetadata the evidence — held back
// until the outcome is committed, as chat's [DONE] is.
type nativeGemini struct {
	t  gemini.Tally
	id idSeeker // responseId, on every chunk
}

func (*nativeGemini) endMarker() string { return "a chunk with finishReason" }

func (a *nativeGemini) event(ev openai.Event) step {
	if ev.Incomplete {
		return step{} // a client drops it; neither its text nor its usage counts
	}
	if !ev.HasData() {
		return step{relay: bytes.Clone(ev.Raw)}
	}
	text, final, err := a.t.Observe(ev.Data)
	o := meter.Observation{Text: text, ProviderID: a.id.from(ev.Data, "responseId")}
	if err != nil {
		o.Problem = err.Error()
	}
	if errors.Is(err, gemini.ErrUpstream) {
		// Not relayed: the stream then ends with the door's own error event
		// (one, naming quotagate's code); the upstream's message is evidence.
		o.UpstreamError = a.t.UpstreamError
		return step{observe: true, obs: o}
	}
	if !final {
		return step{observe: true, obs: o, relay: bytes.Clone(ev.Raw)}
	}
	o.End = true
	if u, ok := a.t.Usage(); ok && err == nil {
		o.Usage = geminiUsage(u)
	}
	return step{observe: true, obs: o, final: bytes.Clone(ev.Raw)}
}

func (*nativeGemini) body(b []byte) (meter.Observation, []byte) {
	a, err := gemini.ParseResponse(b)
	o, read := nativeBody(b, a.Text, "responseId", err, gemini.ErrBadUsage)
	switch {
	case !read:
	case a.Usage != nil && a.FinishReason == "":
		o.Problem = "the response has usageMetadata but no finishReason"
	case a.Usage != nil:
		o.Usage = geminiUsage(*a.Usage)
	}
	return o, b
}

// translatedGemini reads a chat-completions answer (the upstream does not
// speak Gemini) and renders it as Gemini chunks or a response. The
// evidence is chat's: the usage chunk and [DONE].
type translatedGemini struct {
	chatEnded
	tr        *translate.GeminiStream
	model, id string
	thoughts  bool
}

func (a *translatedGemini) event(ev openai.Event) step {
	chunk, o, ok := chatEvent(ev)
	if !ok {
		return step{}
	}
	if chunk.Done {
		return step{observe: true, obs: o, final: a.tr.End()}
	}
	return step{observe: true, obs: o, relay: translatedChunk(a.tr, ev.Data, o)}
}

func (a *translatedGemini) body(b []byte) (meter.Observation, []byte) {
	out, err := translate.GeminiFromChat(b, a.model, a.id, a.thoughts)
	return fromChat(b, out, err, func(e error) []byte { return translate.GeminiErrorBody(http.StatusBadGateway, e) })
}

// splitModelMethod splits the last path segment of a Gemini call,
// "gemini-2.5-flash:streamGenerateContent", at its last colon.
func splitModelMethod(seg string) (model, method string) {
	i := strings.LastIndexByte(seg, ':')
	if i < 0 {
		return seg, ""
	}
	return seg[:i], seg[i+1:]
}
