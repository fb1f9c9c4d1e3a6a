package gateway

import (
	"errors"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/meter"
	"github.com/quotagate/quotagate/backend/openai"
)

// completionsDoor is POST /v1/completions: OpenAI's legacy completions, what
// editors' tab-autocomplete sends (fill-in-the-middle with a suffix). It is
// never translated: chat completions cannot carry a suffix, so only an
// upstream that lists completions in its protocols is sent one. Errors are
// OpenAI-shaped, as at the chat door.
var completionsDoor = nativeDoor{proto: ProtocolCompletions, read: parseCompletions}

// completionsPath is where a completions body goes under an upstream's base URL.
const completionsPath = "/completions"

func parseCompletions(body []byte) (doorRequest, error) {
	req, err := openai.ParseCompletionsRequest(body)
	if err != nil {
		return nil, err
	}
	// The body asks a streaming upstream for the usage chunk, as the chat
	// door's does.
	return nativeRequest{mreq: CompletionsMeterRequest(req), path: completionsPath, body: req.UpstreamBody,
		reader: chatAnswer{includeUsage: req.IncludeUsage, text: true}}, nil
}

// CompletionsMeterRequest is what the meter counts of a completions
// request: the prompt and the suffix as they are (no chat framing), and
// max_tokens (OpenAI's default 16 when absent) as the output cap.
func CompletionsMeterRequest(r *openai.CompletionsRequest) meter.Request {
	return meter.Request{Model: r.Model, Stream: r.Stream, Plain: true, Texts: []string{r.Prompt, r.Suffix},
		OutputCap: r.MaxTokens, HasOutputCap: true, N: 1}
}

// CompletionsInputUnits is the gateway's count of a completions body's
// input under m, as the reserve counts it; 0 when it does not parse. The
// demo upstream reports it as prompt units, to be trusted.
func CompletionsInputUnits(m meter.Meter, body []byte) ledger.Units {
	return inputUnits(m, body, openai.ParseCompletionsRequest, CompletionsMeterRequest)
}

// errNotTranslated: a door that is native only was routed to an upstream
// that does not speak it (route refuses that before admission).
var errNotTranslated = errors.New("this door is never translated to chat completions")

// nativeDoor is a door whose requests are never translated (completions,
// embeddings): OpenAI-shaped errors, and its protocol's body read by read.
type nativeDoor struct {
	openaiErrors
	proto Protocol
	read  func(body []byte) (doorRequest, error)
}

func (d nativeDoor) protocol() Protocol { return d.proto }

func (nativeDoor) nativeOnly() {}

func (d nativeDoor) parse(body []byte) (doorRequest, error) { return d.read(body) }

// nativeRequest is one parsed request of a native-only door: what the
// meter counts, where its body goes under the upstream's base URL, the body,
// and the reader of its answer.
type nativeRequest struct {
	mreq   meter.Request
	path   string
	body   func() ([]byte, error)
	reader answer
}

func (n nativeRequest) meterRequest() meter.Request { return n.mreq }

func (n nativeRequest) upstream(to target) (string, []byte, error) {
	if !to.native {
		return "", nil, errNotTranslated
	}
	body, err := n.body()
	return n.path, body, err
}

func (n nativeRequest) answer(bool) answer { return n.reader }

// nativeOnly is a door whose requests are never translated to chat
// completions: an upstream that does not speak its protocol is refused
// before admission, naming the upstream.
type nativeOnly interface{ nativeOnly() }

// refuseNotSpoken is the refusal of a native-only door's call to an
// upstream that does not speak its protocol.
func refuseNotSpoken(d door, model string, up Upstream) error {
	return ledger.Errorf(ledger.CodeInvalidRequest,
		"the model %q is served by the upstream %s, which does not speak %s (its protocols do not list it); quotagate does not translate %s requests",
		model, up.Name(), d.protocol(), d.protocol())
}

// textObservation is what one text_completion payload says to the meter:
// choices[].text is the output.
func textObservation(data []byte) (openai.Chunk, meter.Observation) {
	return chunkObservation(openai.ParseTextChunk(data))
}
