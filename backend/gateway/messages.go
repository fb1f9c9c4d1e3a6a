package gateway

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/quotagate/quotagate/backend/anthropic"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/meter"
	"github.com/quotagate/quotagate/backend/openai"
	"github.com/quotagate/quotagate/backend/translate"
	"github.com/quotagate/quotagate/backend/upstream"
)

// messagesDoor is POST /v1/messages (with or without ?beta=true, which
// Claude Code adds): the Anthropic Messages API. An upstream whose
// protocols include messages gets the client's body as it came (at
// base_url + "/messages", the upstream key as x-api-key, the client's
// anthropic-version — default 2023-06-01 — and anthropic-beta forwarded);
// any other is sent chat completions, and the answer translated back.
type messagesDoor struct{}

func (messagesDoor) protocol() Protocol { return ProtocolMessages }

func (messagesDoor) parse(body []byte) (doorRequest, error) {
	req, err := anthropic.ParseRequest(body)
	return &messagesRequest{req: req, id: newMessageID()}, err
}

func (messagesDoor) writeError(w http.ResponseWriter, err error) { writeAnthropicError(w, err) }

// streamError ends a stream that cannot finish with one error event and no
// message_stop (a cut upstream: api_error, upstream_interrupted).
func (messagesDoor) streamError(err error) []byte { return translate.MessagesErrorEvent(err) }

// writeAnthropicError renders a refusal in Anthropic's shape, with the
// status and Retry-After of errorHeaders, and x-should-retry: false when a
// retry of the same request cannot succeed (the Anthropic SDKs, and so
// Claude Code, honour it before their own retry rules).
func writeAnthropicError(w http.ResponseWriter, err error) {
	status := errorHeaders(w, err)
	switch ledger.ErrorCode(err) {
	case ledger.CodeInvalidRequest, ledger.CodeInvalidAPIKey, ledger.CodeInsufficientBudget, ledger.CodeModelNotFound, ledger.CodeModelUnpriced,
		ledger.CodeRequestTooLarge, ledger.CodeForbidden, ledger.CodeRunEnded:
		w.Header().Set("X-Should-Retry", "false")
	}
	w.WriteHeader(status)
	_, _ = w.Write(translate.MessagesErrorBody(err))
}

// anthropicVersion is sent to a native upstream when the client gave none.
const anthropicVersion = "2023-06-01"

// messagesPath is where a Messages body goes under an upstream's base URL
// (the upstream client sends the key there as x-api-key).
const messagesPath = upstream.MessagesPath

func newMessageID() string { return "msg_" + randomHex(12) }

// messagesRequest is one parsed Messages request.
type messagesRequest struct {
	req *anthropic.Request
	id  string // the message id a translated answer carries
}

func (m *messagesRequest) meterRequest() meter.Request { return MessagesMeterRequest(m.req) }

func (m *messagesRequest) upstream(to target) (string, []byte, error) {
	if to.native {
		return messagesPath, m.req.Raw(), nil
	}
	b, err := translate.MessagesToChat(m.req, translate.ChatOptions{Reasoning: to.reasoningSwitch})
	return chatPath, b, err
}

// upstreamHeader is what a native upstream is told beyond the body: the
// API version and the betas the client asked for.
func (m *messagesRequest) upstreamHeader(native bool, client http.Header) http.Header {
	if !native {
		return nil
	}
	h := http.Header{}
	v := client.Get("Anthropic-Version")
	if v == "" {
		v = anthropicVersion
	}
	h.Set("Anthropic-Version", v)
	if b := client.Values("Anthropic-Beta"); len(b) > 0 {
		h["Anthropic-Beta"] = b
	}
	return h
}

func (m *messagesRequest) answer(native bool) answer {
	if native {
		return &nativeMessages{}
	}
	return &translatedMessages{tr: translate.NewMessagesStream(m.id, m.req.Model, m.req.Thinking.On()),
		id: m.id, model: m.req.Model, thinking: m.req.Thinking.On()}
}

// MessagesMeterRequest is what the meter counts of a Messages request: the
// system prompt and every turn (anthropic.Turns), the tool definitions and
// max_tokens. The reserve and count_tokens both count it.
func MessagesMeterRequest(r *anthropic.Request) meter.Request {
	return meter.Request{Model: r.Model, Stream: r.Stream, Messages: meterMessages(r.Turns()), ToolsJSON: r.ToolsJSON(),
		OutputCap: r.MaxTokens, HasOutputCap: r.MaxTokens > 0}
}

// MessagesInputUnits is the gateway's count of a Messages body's input
// under m, as the reserve counts it (no media units); 0 when the body does
// not parse. The demo upstream reports it as prompt units, to be trusted.
func MessagesInputUnits(m meter.Meter, body []byte) ledger.Units {
	return inputUnits(m, body, anthropic.ParseRequest, MessagesMeterRequest)
}

// nativeMessages reads a Messages answer and relays it as it came. The
// evidence is message_start's input figures with the last cumulative
// message_delta output, and message_stop — held back until the outcome is
// committed. message_delta, with the stop_reason, is the finish.
type nativeMessages struct {
	t  anthropic.Tally
	id idSeeker // message_start's message id
}

func (*nativeMessages) endMarker() string { return anthropic.EventMessageStop }

func (a *nativeMessages) event(ev openai.Event) step {
	if ev.Incomplete {
		return step{} // a client drops it; neither its text nor its usage counts
	}
	if !ev.HasData() {
		return step{relay: bytes.Clone(ev.Raw)}
	}
	before := len(a.t.Output())
	typ, err := a.t.Observe(ev.Name, ev.Data)
	o := meter.Observation{Text: a.t.Output()[before:], ProviderID: a.id.from(ev.Data, "message", "id")}
	if err != nil {
		o.Problem = err.Error()
	}
	if typ == anthropic.EventError {
		// Not relayed: the stream then ends with the door's own error event
		// (one, naming quotagate's code); the upstream's message is evidence.
		o.UpstreamError = a.t.UpstreamError
		return step{observe: true, obs: o}
	}
	if u, ok := a.t.Usage(); ok && typ == anthropic.EventMessageDelta && err == nil {
		o.Usage = messagesUsage(u)
	}
	if typ == anthropic.EventMessageStop && err == nil {
		o.End = true
		return step{observe: true, obs: o, final: bytes.Clone(ev.Raw)}
	}
	// message_delta carries the stop_reason: the finish, after which a
	// client that leaves is read on for the usage.
	return step{observe: true, obs: o, relay: bytes.Clone(ev.Raw), finish: typ == anthropic.EventMessageDelta && err == nil}
}

func (*nativeMessages) body(b []byte) (meter.Observation, []byte) {
	a, err := anthropic.ParseMessage(b)
	o, read := nativeBody(b, a.Text, "id", err, anthropic.ErrBadUsage)
	if read && a.Usage != nil {
		o.Usage = messagesUsage(*a.Usage)
	}
	return o, b
}

// messagesUsage is Anthropic's usage as the provider's prompt and output:
// input_tokens leave cached tokens out, so the prompt is the three input
// figures together (each token once); the cache figures stay on the run
// (its evidence names them).
func messagesUsage(u anthropic.Usage) *ledger.Usage {
	return &ledger.Usage{PromptTokens: u.PromptTokens(), CompletionTokens: u.OutputTokens,
		CachedTokens: u.CacheReadInputTokens, CacheCreationTokens: u.CacheCreationInputTokens}
}

// translatedMessages reads a chat-completions answer (the upstream does not
// speak Messages) and renders it as Anthropic's events or message. The
// evidence is chat's: the usage chunk and [DONE].
type translatedMessages struct {
	chatEnded
	tr       *translate.MessagesStream
	started  bool
	id       string
	model    string
	thinking bool
}

func (a *translatedMessages) event(ev openai.Event) step {
	chunk, o, ok := chatEvent(ev)
	if !ok {
		return step{}
	}
	var relay []byte
	if !a.started {
		a.started = true
		relay = a.tr.Start()
	}
	if chunk.Done {
		return step{observe: true, obs: o, relay: append(relay, a.tr.End()...), final: anthropic.StopEvent()}
	}
	return step{observe: true, obs: o, relay: append(relay, translatedChunk(a.tr, ev.Data, o)...)}
}

func (a *translatedMessages) body(b []byte) (meter.Observation, []byte) {
	out, err := translate.MessageFromChat(b, a.id, a.model, a.thinking)
	return fromChat(b, out, err, translate.MessagesErrorBody)
}

// countTokens is POST /v1/messages/count_tokens, answered locally with the
// reserve's own count of the input ({"input_tokens": N}); no upstream call.
func (g *Gateway) countTokens(w http.ResponseWriter, r *http.Request, t ledger.Tenant) {
	body, err := g.readBody(w, r)
	if err != nil {
		writeAnthropicError(w, err)
		return
	}
	req, err := anthropic.ParseCountTokens(body)
	if err != nil {
		writeAnthropicError(w, invalidRequest(err))
		return
	}
	if g.upstreamFor(req.Model) == nil || !t.AllowsModel(req.Model) {
		writeAnthropicError(w, ledger.Errorf(ledger.CodeModelNotFound, "the model %q does not exist or is not available to this key", req.Model))
		return
	}
	e := g.opts.Reserve.Estimate(g.opts.Meter, MessagesMeterRequest(req))
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]ledger.Units{"input_tokens": e.InputUnits})
}
