package gateway

import (
	"context"
	"errors"
	"net/http"

	"github.com/quotagate/quotagate/backend/meter"
	"github.com/quotagate/quotagate/backend/openai"
	"github.com/quotagate/quotagate/backend/upstream"
)

// The door seam. The gateway is one protocol-free run core (auth → rate
// limit → body → door.parse → model → quota guard → meter.Run → gate →
// Admit → X-Run-Id → send → relay → judge → settle, hold or release;
// cancel) and a door per API protocol. The core is run.go (admission, and
// call, which sequences one run's parts), lifeline.go (the upstream
// context and why it ended), attempt.go (the upstream call and the
// failures before an answer), relay.go (the answer to the client) and
// verdict.go (the outcome, and its one write to the ledger). A door knows
// its protocol's wire format (a wire package: backend/openai,
// backend/responses, backend/anthropic, and backend/translate between
// them) and nothing of the ledger or the core: what it learns of the
// upstream is the target the core passes. The core knows no wire format
// but SSE framing. Chat completions (chat.go) is the first door.
//
// A door, registered in New with g.serveDoor(d):
//
//   - parse: reads and checks the client's body into a doorRequest; what
//     admission needs is its meterRequest (model, stream, the messages the
//     meter counts, output cap, n — the reasoning floor is the policy's).
//     Errors are the format's refusals, which the core answers as
//     invalid_request (invalidRequest).
//   - writeError / streamError: renders refusals and failures in the door's
//     error shape, before the first byte (status from the code, Retry-After
//     on the 429 family — see writeError for OpenAI's) and after it (a
//     terminal event; the status cannot change any more).
//
// A doorRequest builds the upstream request and the reader of its answer.
// The run core picks the mode per upstream: native when the upstream speaks
// the door's protocol (config `protocols: [chat, responses, messages]`,
// default [chat]; see speaks), else translated to chat completions:
//
//   - native: upstream(true) is the protocol's path under base_url and the
//     client's body relayed as it is (chat adds only
//     stream_options.include_usage, the settlement evidence);
//   - translated: upstream(false) is "/chat/completions" and a chat body;
//     the answer is chat completions, which the door translates back.
//
// answer(native) reads the upstream's answer in the upstream's protocol:
// for each SSE event (framed by openai.SSEReader; the Responses and Messages
// streams are SSE too) a step — what the meter observes (text, usage, the
// terminal marker), the bytes the client gets now, and the bytes that end
// the answer, which the core sends only once the outcome is committed. A
// non-streaming answer is read whole by body. The meter judges trust the
// same way for every door: usage present, consistent and followed by the
// terminal marker (meter.Observation.End), else the hold stays.
//
// The core owns everything else, the same for every door: X-Run-Id, the
// reserve rule, the hold rule, DELETE /v1/runs/{id}, the gate, retries of
// an upstream 429/503, backpressure, keep-alives, the write and idle
// timeouts, and what an upstream error answered before any output releases.
type door interface {
	protocol() Protocol
	parse(body []byte) (doorRequest, error)
	writeError(w http.ResponseWriter, err error)
	streamError(err error) []byte
}

// doorRequest is one parsed client request.
type doorRequest interface {
	// meterRequest is what the meter counts at admission.
	meterRequest() meter.Request
	// upstream returns the path under the upstream's base URL and the body
	// to send to it: the door's own protocol when native, chat completions
	// when not. An error means the request could not be prepared (nothing
	// sent).
	upstream(to target) (path string, body []byte, err error)
	// answer returns the reader of this request's upstream answer.
	answer(native bool) answer
}

// target is what a door is told of the upstream its request goes to: all
// it needs to prepare the body, and nothing else of the core.
type target struct {
	native bool // the upstream speaks the door's protocol; else chat completions
	// reasoningSwitch is the upstream's chat-completions switch for
	// thinking (config reasoning_switch), "" for none; a translation maps
	// the client's thinking onto it.
	reasoningSwitch string
}

// targetOf is what a door is told of up.
func targetOf(up Upstream, native bool) target {
	t := target{native: native}
	if rs, ok := up.(reasoningUpstream); ok {
		t.reasoningSwitch = rs.ReasoningSwitch()
	}
	return t
}

// reasoningUpstream is an Upstream with a chat-completions switch for
// thinking (config reasoning_switch). *upstream.Client satisfies it.
type reasoningUpstream interface{ ReasoningSwitch() string }

// headerRequest is a doorRequest with request headers of its own for the
// upstream (the Messages door: anthropic-version, anthropic-beta), merged
// over Options.ForwardHeaders.
type headerRequest interface {
	upstreamHeader(native bool, client http.Header) http.Header
}

// answer reads one upstream answer and renders what the client gets.
type answer interface {
	// endMarker names the upstream protocol's terminal marker in verdicts
	// ("" is chat's "[DONE]").
	endMarker() string
	// event reads one upstream SSE event of a stream.
	event(ev openai.Event) step
	// body reads a whole non-streaming body: what the meter observes, and
	// the body the client gets (application/json).
	body(b []byte) (meter.Observation, []byte)
}

// step is what one upstream event amounts to.
type step struct {
	// observe: the event says something to the meter (false for comments
	// and for a half event at a cut, which a client would drop).
	observe bool
	obs     meter.Observation
	// relay is written to the client now; nil writes nothing.
	relay []byte
	// final ends the answer for the client (chat's [DONE]): the core holds
	// it back until the outcome is on disk (RELIABILITY T16), and drops it
	// when the stream failed.
	final []byte
	// finish: the event carries the answer's finish reason. Once the client
	// has it, it has the whole answer: a client that leaves then (many stop
	// reading at finish_reason) does not cancel the upstream, which is read
	// for its usage a little longer (Options.FinishGrace).
	finish bool
	// more: the answer goes on after an earlier finish (a Responses item
	// added after every earlier one was done): the client has it whole
	// only once it has the next finish.
	more bool
}

// Protocol names an API protocol: a door's, and one an upstream speaks.
type Protocol string

// The protocols, as written in an upstream's `protocols:`.
const (
	ProtocolChat      Protocol = "chat"      // POST /v1/chat/completions
	ProtocolResponses Protocol = "responses" // POST /v1/responses
	ProtocolMessages  Protocol = "messages"  // POST /v1/messages
	ProtocolGemini    Protocol = "gemini"    // POST /v1beta/models/{model}:generateContent
	// Native only (never translated to chat completions):
	ProtocolCompletions Protocol = "completions" // POST /v1/completions
	ProtocolEmbeddings  Protocol = "embeddings"  // POST /v1/embeddings
)

// upstreamProtocol is the protocol a call at door d is relayed in: the
// door's own when native, else chat completions.
func upstreamProtocol(d door, native bool) Protocol {
	if native {
		return d.protocol()
	}
	return ProtocolChat
}

// chatPath is where a chat-completions body goes under an upstream's base URL.
const chatPath = "/chat/completions"

// protocolUpstream is an Upstream that can say which protocols it speaks
// and post to another protocol's path. *upstream.Client satisfies it. An
// Upstream without it speaks chat completions only.
type protocolUpstream interface {
	Speaks(protocol string) bool
	Post(ctx context.Context, path string, body []byte, header http.Header) (*upstream.Response, error)
}

// errNoProtocol: the upstream cannot post to another protocol's path.
var errNoProtocol = errors.New("speaks chat completions only")

// speaks reports whether up speaks p natively.
func speaks(up Upstream, p Protocol) bool {
	if pu, ok := up.(protocolUpstream); ok {
		return pu.Speaks(string(p))
	}
	return p == ProtocolChat
}

// post sends body to path under up's base URL.
func post(ctx context.Context, up Upstream, path string, body []byte, hdr http.Header) (*upstream.Response, error) {
	if path == chatPath {
		return up.Send(ctx, body, hdr)
	}
	pu, ok := up.(protocolUpstream)
	if !ok {
		return nil, &upstream.SendError{Upstream: up.Name(), Err: errNoProtocol}
	}
	return pu.Post(ctx, path, body, hdr)
}
