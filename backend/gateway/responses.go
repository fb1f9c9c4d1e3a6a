package gateway

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/meter"
	"github.com/quotagate/quotagate/backend/openai"
	"github.com/quotagate/quotagate/backend/responses"
	"github.com/quotagate/quotagate/backend/translate"
)

// responsesDoor is POST /v1/responses: the OpenAI Responses API (Codex CLI,
// the Agents SDK). Relayed byte for byte to base_url +
// "/responses" when the upstream speaks it, else translated to chat
// completions and the answer translated back into Responses events. Errors
// are OpenAI-shaped, as at the chat door.
type responsesDoor struct {
	log *slog.Logger
	now func() time.Time // the gateway's clock: a translated answer's created_at
}

// responsesPath is where a Responses body goes under an upstream's base URL.
const responsesPath = "/responses"

func (responsesDoor) protocol() Protocol { return ProtocolResponses }

func (d responsesDoor) parse(body []byte) (doorRequest, error) {
	req, err := responses.ParseRequest(body)
	return &responsesRequest{req: req, log: d.log, now: d.now}, err
}

func (responsesDoor) writeError(w http.ResponseWriter, err error) { writeError(w, err) }

// streamError is the one `error` event that ends a Responses stream after
// its first byte; no response.completed follows (nothing is fabricated).
func (responsesDoor) streamError(err error) []byte {
	return responses.ErrorEvent(0, ledger.ErrorCode(err), ledger.ErrorMessage(err)).SSE()
}

// serveResponsesUpgrade answers GET /v1/responses: Codex tries a WebSocket
// first when a provider enables it, and falls back to HTTP on 426 within
// milliseconds (a 400 would abort it). quotagate speaks HTTP only.
func serveResponsesUpgrade(w http.ResponseWriter, r *http.Request) {
	if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUpgradeRequired)
		_ = json.NewEncoder(w).Encode(openai.NewError("quotagate serves the Responses API over HTTP only: POST /v1/responses", "invalid_request_error", "websocket_not_supported"))
		return
	}
	w.Header().Set("Allow", http.MethodPost)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusMethodNotAllowed)
	_ = json.NewEncoder(w).Encode(openai.NewError("GET /v1/responses is not supported: POST /v1/responses", "invalid_request_error", ledger.CodeInvalidRequest))
}

// responsesRequest is one parsed Responses request.
type responsesRequest struct {
	req *responses.Request
	log *slog.Logger
	now func() time.Time
	id  string // the response id quotagate gives a translated answer
}

func (r *responsesRequest) meterRequest() meter.Request {
	return ResponsesMeterRequest(r.req)
}

// ResponsesMeterRequest is what the meter counts of a Responses request: its
// segments as messages (instructions, message text, *_call_output; earlier
// calls as tool calls) and its tool definitions; the output cap is
// max_output_tokens (Codex sends none: the configured default).
func ResponsesMeterRequest(r *responses.Request) meter.Request {
	m := meter.Request{Model: r.Model, Stream: r.Stream, Messages: meterMessages(r.Segments()), ToolsJSON: r.ToolsJSON, N: 1}
	if r.MaxOutputTokens != nil {
		m.OutputCap, m.HasOutputCap = *r.MaxOutputTokens, true
	}
	return m
}

// ResponsesInputUnits is the gateway's count of a Responses body's input
// under m, as the reserve counts it (no media units); 0 when it does not
// parse. The demo upstream reports it as input_tokens, to be trusted.
func ResponsesInputUnits(m meter.Meter, body []byte) ledger.Units {
	return inputUnits(m, body, responses.ParseRequest, ResponsesMeterRequest)
}

// upstream is the client's body as it came when native; a chat-completions
// body when translated, with what chat cannot carry left out and logged.
func (r *responsesRequest) upstream(to target) (string, []byte, error) {
	if to.native {
		return responsesPath, r.req.Raw(), nil
	}
	body, notes, err := translate.ResponsesToChat(r.req)
	if err != nil {
		return "", nil, err
	}
	for _, n := range notes {
		r.log.Debug("responses door: translating to chat completions", "model", r.req.Model, "note", n)
	}
	return chatPath, body, nil
}

func (r *responsesRequest) answer(native bool) answer {
	if native {
		return &nativeResponsesAnswer{}
	}
	meta := responses.Meta{ResponseID: newResponseID(), CreatedAt: r.now().Unix(), Model: r.req.Model, Request: r.req}
	return &translatedAnswer{meta: meta, tr: translate.NewResponsesStream(meta)}
}

func newResponseID() string { return "resp_qg" + randomHex(12) }

// nativeResponsesAnswer relays a native Responses stream unchanged and
// reads it: the deltas are the metered output, the usage of the final
// response.completed (or response.incomplete) is the settlement evidence and
// that event the terminal marker, held back until the outcome is on disk.
// response.failed and error events are relayed and keep the hold. The
// output_item.done that leaves no item open is the finish: the client has
// every item whole then.
type nativeResponsesAnswer struct {
	rd responses.Reader
	id idSeeker // the response's id, from response.created (or any event carrying the response)
}

func (*nativeResponsesAnswer) endMarker() string { return string(responses.FinalCompleted) }

func (a *nativeResponsesAnswer) event(ev openai.Event) step {
	if ev.Incomplete {
		return step{} // a half event at a cut: a client drops it
	}
	if !ev.HasData() {
		return step{relay: bytes.Clone(ev.Raw)}
	}
	before := a.rd.Result()
	err := a.rd.Observe(ev.Name, ev.Data)
	after := a.rd.Result()
	o := meter.Observation{Text: after.Output[len(before.Output):], ProviderID: a.id.from(ev.Data, "response", "id")}
	if err != nil {
		return step{observe: true, obs: meter.Observation{Unreadable: true, Problem: err.Error()}, relay: bytes.Clone(ev.Raw)}
	}
	if after.Problem != "" && before.Problem == "" {
		o.Problem = after.Problem
	}
	if after.Final == before.Final {
		// The finish: the output_item.done that leaves no item open (the
		// usage comes with response.completed after it). Another item after
		// it means the answer goes on.
		return step{observe: true, obs: o, relay: bytes.Clone(ev.Raw),
			finish: after.Finished && !before.Finished, more: before.Finished && !after.Finished}
	}
	switch after.Final {
	case responses.FinalCompleted, responses.FinalIncomplete:
		o.End = true
		o.Usage = meterUsage(after.Usage)
		return step{observe: true, obs: o, final: bytes.Clone(ev.Raw)}
	default: // response.failed, error
		o.UpstreamError = string(after.Final) + " " + after.ErrorCode
		return step{observe: true, obs: o, relay: bytes.Clone(ev.Raw)}
	}
}

func (*nativeResponsesAnswer) body(b []byte) (meter.Observation, []byte) {
	res, err := responses.ParseResponse(b)
	if err != nil {
		return meter.Observation{Unreadable: true, UpstreamError: openai.ErrorMessage(b)}, b
	}
	o := meter.Observation{Text: res.Output, Problem: res.Problem, ProviderID: providerIDAt(b, "id")}
	switch res.Final {
	case responses.FinalCompleted, responses.FinalIncomplete:
		o.Usage = meterUsage(res.Usage)
	case responses.FinalFailed:
		o.UpstreamError = string(res.Final) + " " + res.ErrorCode
	case responses.FinalNone:
		o.UpstreamError = openai.ErrorMessage(b) // a 200 whose body is an error object
	}
	return o, b
}

// meterUsage is a trusted-looking Responses usage in the meter's terms:
// input_tokens as prompt, output_tokens (reasoning included) as completion.
func meterUsage(u *responses.Usage) *meter.Usage {
	if u == nil {
		return nil
	}
	return &meter.Usage{PromptTokens: u.InputTokens, CompletionTokens: u.OutputTokens,
		TotalTokens: u.TotalTokens, HasTotal: true, ReasoningTokens: u.ReasoningTokens, CachedTokens: u.CachedTokens}
}

// translatedAnswer reads a chat-completions answer (the meter judges it by
// chat's rules: usage chunk then [DONE]) and renders Responses events: the
// lifecycle events before the first delta, and the closing events with
// response.completed as the terminal event in place of [DONE].
type translatedAnswer struct {
	chatEnded
	meta    responses.Meta
	tr      *translate.ResponsesStream
	started bool
}

func (a *translatedAnswer) event(ev openai.Event) step {
	if ev.Incomplete {
		return step{}
	}
	if !ev.HasData() {
		return step{relay: bytes.Clone(ev.Raw)}
	}
	chunk, o := chatObservation(ev.Data)
	var out bytes.Buffer
	if !a.started {
		a.started = true
		for _, e := range a.tr.Start() {
			out.Write(e.SSE())
		}
	}
	if chunk.Done {
		for _, e := range a.tr.Done() {
			out.Write(e.SSE())
		}
		s := step{observe: true, obs: o, final: out.Bytes()}
		return s
	}
	if !o.Unreadable {
		evs, err := a.tr.Chunk(ev.Data)
		if err == nil {
			for _, e := range evs {
				out.Write(e.SSE())
			}
		}
	}
	s := step{observe: true, obs: o}
	if out.Len() > 0 {
		// The chunk with the finish reason closes the items (the translator
		// does so then, not at [DONE]): the finish grace's mark, as at the
		// chat door.
		s.relay, s.finish = out.Bytes(), hasFinishReason(ev.Data)
	}
	return s
}

func (a *translatedAnswer) body(b []byte) (meter.Observation, []byte) {
	o, _ := chatAnswer{}.body(b)
	if o.Unreadable {
		return o, b
	}
	out, err := translate.ResponseFromChat(a.meta, b)
	if err != nil {
		return meter.Observation{Unreadable: true, Problem: err.Error()}, b
	}
	return o, out
}
