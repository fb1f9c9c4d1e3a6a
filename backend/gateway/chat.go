package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/meter"
	"github.com/quotagate/quotagate/backend/openai"
	"github.com/quotagate/quotagate/backend/wire"
)

// chatDoor is POST /v1/chat/completions: OpenAI's chat completions, the
// first door. Every upstream speaks chat, so it is always native.
type chatDoor struct{ openaiErrors }

func (chatDoor) protocol() Protocol { return ProtocolChat }

func (chatDoor) parse(body []byte) (doorRequest, error) {
	req, err := openai.ParseChatRequest(body)
	return chatRequest{req}, err
}

// openaiErrors is how the OpenAI-shaped doors (chat, completions,
// embeddings) refuse: OpenAI's error object, and the same object as a
// stream's error event.
type openaiErrors struct{}

func (openaiErrors) writeError(w http.ResponseWriter, err error) { writeError(w, err) }

func (openaiErrors) streamError(err error) []byte { return sseError(err) }

// chatRequest is one parsed chat-completions request.
type chatRequest struct{ req *openai.ChatRequest }

func (c chatRequest) meterRequest() meter.Request { return ChatMeterRequest(c.req) }

// upstream is always native: the client's body, asking a streaming
// upstream for the usage chunk.
func (c chatRequest) upstream(target) (string, []byte, error) {
	body, err := c.req.UpstreamBody()
	return chatPath, body, err
}

func (c chatRequest) answer(bool) answer { return chatAnswer{includeUsage: c.req.IncludeUsage} }

// ChatMeterRequest is what the meter counts of a chat-completions request.
func ChatMeterRequest(r *openai.ChatRequest) meter.Request {
	c, ok := r.OutputCap()
	return meter.Request{Model: r.Model, Stream: r.Stream, Messages: meterMessages(r.Messages), ToolsJSON: r.ToolsJSON,
		OutputCap: c, HasOutputCap: ok, N: r.N}
}

// ChatInputUnits is the gateway's count of a chat-completions body's input
// under m, as the reserve counts it (no media units); 0 when the body does
// not parse. The demo upstream reports it as prompt units, to be trusted.
func ChatInputUnits(m meter.Meter, body []byte) ledger.Units {
	return inputUnits(m, body, openai.ParseChatRequest, ChatMeterRequest)
}

// inputUnits is a door's count of a body's input under m, as the reserve
// counts it: the format's parse, what the meter counts of it, and the
// reserve policy's input part. 0 when the body does not parse.
func inputUnits[R any](m meter.Meter, body []byte, parse func([]byte) (R, error), count func(R) meter.Request) ledger.Units {
	req, err := parse(body)
	if err != nil {
		return 0
	}
	in, _ := meter.ReservePolicy{}.Reserve(m, count(req))
	return in
}

// meterMessages is a format's prompt turns as the meter counts them.
func meterMessages(turns []wire.Turn) []meter.Message {
	msgs := make([]meter.Message, len(turns))
	for i, t := range turns {
		msgs[i] = meter.Message{Role: t.Role, Name: t.Name, Text: t.Text, ToolCalls: t.Calls, Images: t.Images, OtherParts: t.OtherParts}
	}
	return msgs
}

// chatAnswer reads a chat-completions answer and relays it as it came,
// except the usage chunk the client did not ask for. With text it reads a
// legacy completions answer (choices[].text), whose stream is chat's in
// every other way: the usage chunk, then [DONE].
type chatAnswer struct{ includeUsage, text bool }

func (chatAnswer) endMarker() string { return "" }

func (a chatAnswer) event(ev openai.Event) step {
	if ev.Incomplete {
		// Cut before its blank line (often mid-JSON): a client drops such an
		// event, so it is not relayed, and neither its text nor its [DONE]
		// nor its usage counts; the error event that follows starts clean.
		return step{}
	}
	if !ev.HasData() {
		return step{relay: bytes.Clone(ev.Raw)} // comments (keep-alives) pass through
	}
	chunk, o := a.observe(ev.Data)
	switch {
	case chunk.Done:
		return step{observe: true, obs: o, final: bytes.Clone(ev.Raw)}
	case chunk.UsageOnly() && !a.includeUsage:
		return step{observe: true, obs: o} // asked for the ledger, not by the client
	}
	return step{observe: true, obs: o, relay: bytes.Clone(ev.Raw), finish: hasFinishReason(ev.Data)}
}

// hasFinishReason reports whether a chunk names a finish reason
// ("finish_reason":"stop"; null while the answer goes on). The key is found
// as a key: inside a JSON string its quotes would be escaped.
func hasFinishReason(data []byte) bool {
	const key = `"finish_reason"`
	for rest := data; ; {
		i := bytes.Index(rest, []byte(key))
		if i < 0 {
			return false
		}
		rest = bytes.TrimLeft(rest[i+len(key):], " \t\r\n")
		if len(rest) > 0 && rest[0] == ':' {
			v := bytes.TrimLeft(rest[1:], " \t\r\n")
			if len(v) > 0 && v[0] == '"' {
				return true
			}
		}
	}
}

func (a chatAnswer) observe(data []byte) (openai.Chunk, meter.Observation) {
	if a.text {
		return textObservation(data)
	}
	return chatObservation(data)
}

func (a chatAnswer) body(b []byte) (meter.Observation, []byte) {
	parse := openai.ParseCompletion
	if a.text {
		parse = openai.ParseTextCompletion
	}
	c, err := parse(b)
	o := meter.Observation{Text: c.Text(), Usage: (*meter.Usage)(c.Usage), ProviderID: c.ID}
	switch {
	case errors.Is(err, openai.ErrBadUsage):
		o.Usage, o.Problem = nil, err.Error()
	case err != nil:
		o = meter.Observation{Unreadable: true}
	}
	if o.Usage == nil {
		o.UpstreamError = openai.ErrorMessage(b) // a 200 whose body is an error object
	}
	return o, b
}

// chatObservation is what one chat.completion.chunk payload says to the meter.
func chatObservation(data []byte) (openai.Chunk, meter.Observation) {
	return chunkObservation(openai.ParseChunk(data))
}

// chunkObservation is what a parsed payload (chat's or a legacy
// completion's) says to the meter.
func chunkObservation(c openai.Chunk, err error) (openai.Chunk, meter.Observation) {
	if err != nil && !errors.Is(err, openai.ErrBadUsage) {
		return c, meter.Observation{Unreadable: true, Problem: "a data event did not parse: " + err.Error()}
	}
	o := meter.Observation{Text: c.Text(), Usage: (*meter.Usage)(c.Usage), End: c.Done, UpstreamError: c.Error, ProviderID: c.ID}
	if err != nil {
		o.Usage, o.Problem = nil, err.Error()
	}
	return c, o
}

// nativeBody is what a whole native answer b says to the meter once its
// format has parsed it (err; badUsage is the format's error for a usage
// object that is not evidence): its text and provider id (idKey), with the
// usage problem if any; or, when b did not parse, nothing readable but the
// upstream's error message. read is true when b parsed whole, its usage
// for the caller to take.
func nativeBody(b []byte, text, idKey string, err, badUsage error) (o meter.Observation, read bool) {
	switch {
	case errors.Is(err, badUsage):
		return meter.Observation{Text: text, ProviderID: providerIDAt(b, idKey), Problem: err.Error()}, false
	case err != nil:
		return meter.Observation{Unreadable: true, UpstreamError: openai.ErrorMessage(b)}, false
	}
	return meter.Observation{Text: text, ProviderID: providerIDAt(b, idKey)}, true
}

// chatEnded is embedded by the answers read as chat's, whose terminal
// marker is chat's "[DONE]": the translated ones.
type chatEnded struct{}

func (chatEnded) endMarker() string { return "" }

// chatEvent is what an answer translated from chat reads of an upstream
// event: the chunk and what it says to the meter. ok is false for a half
// event at a cut and for upstream keep-alives (the core sends its own).
func chatEvent(ev openai.Event) (openai.Chunk, meter.Observation, bool) {
	if ev.Incomplete || !ev.HasData() {
		return openai.Chunk{}, meter.Observation{}, false
	}
	chunk, o := chatObservation(ev.Data)
	return chunk, o, true
}

// translatedChunk is tr's translation of a chat chunk's data; nothing for a
// chunk the meter could not read or tr could not translate (the
// observation says what was wrong).
func translatedChunk(tr interface{ Chunk([]byte) ([]byte, error) }, data []byte, o meter.Observation) []byte {
	if o.Unreadable {
		return nil
	}
	out, err := tr.Chunk(data)
	if err != nil {
		return nil
	}
	return out
}

// fromChat is a whole chat answer b with its translation (out, or the
// translation's err): what chat's reader observes of b and out, or when the
// translation failed, nothing trusted and an upstream_error in the door's
// shape (errorBody).
func fromChat(b, out []byte, err error, errorBody func(error) []byte) (meter.Observation, []byte) {
	if err != nil {
		return meter.Observation{Unreadable: true}, errorBody(ledger.Errorf(ledger.CodeUpstreamError, "the upstream's answer could not be translated: %v", err))
	}
	o, _ := chatAnswer{}.body(b)
	return o, out
}

// invalidRequest is a format's refusal of a body (a *wire.RequestError) as
// quotagate's invalid_request: the wire packages know no error codes. An
// error that already carries a code keeps it.
func invalidRequest(err error) error {
	var coded *ledger.Error
	if errors.As(err, &coded) {
		return err
	}
	return ledger.Errorf(ledger.CodeInvalidRequest, "%s", wire.Reason(err))
}

// typeOf is the OpenAI error "type" of a code.
func typeOf(code string) string {
	switch code {
	case ledger.CodeInsufficientBudget:
		return "insufficient_quota"
	case ledger.CodeInvalidAPIKey:
		return "authentication_error"
	case ledger.CodeForbidden:
		return "permission_error"
	case ledger.CodeConcurrencyLimit, ledger.CodeRateLimited, ledger.CodeUpstreamBusy, ledger.CodeQuotaGuard:
		return "rate_limit_error"
	case ledger.CodeUpstreamError, ledger.CodeUpstreamTimeout, ledger.CodeUpstreamInterrupt:
		return "upstream_error"
	case ledger.CodeInternal, ledger.CodeLedgerUnavailable:
		return "server_error"
	}
	return "invalid_request_error"
}

func errorBody(err error) openai.ErrorBody {
	code := ledger.ErrorCode(err)
	typ := typeOf(code)
	var ua *upstreamAnswer
	if errors.As(err, &ua) && ua.typ != "" {
		typ = ua.typ
	}
	return openai.NewError(ledger.ErrorMessage(err), typ, code)
}

// writeError is the one renderer of OpenAI-shaped gateway errors (the chat
// door's, and /v1's other endpoints'): errorHeaders, then the body.
// Internal errors never carry their text to the client.
func writeError(w http.ResponseWriter, err error) {
	w.WriteHeader(errorHeaders(w, err))
	_ = json.NewEncoder(w).Encode(errorBody(err))
}

// sseError is the terminal event of a stream that failed after its first
// byte: the status cannot change any more, so the failure is an event, and
// no [DONE] follows.
func sseError(err error) []byte {
	b, _ := json.Marshal(errorBody(err))
	return openai.SSEData(b)
}
