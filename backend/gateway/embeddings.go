package gateway

import (
	"errors"
	"fmt"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/meter"
	"github.com/quotagate/quotagate/backend/openai"
)

// embeddingsDoor is POST /v1/embeddings: codebase indexing's batches of
// text. Native only, like completions (chat completions cannot embed): an
// upstream that does not list embeddings in its protocols is refused.
// Errors are OpenAI-shaped; embeddings do not stream, so the stream's error
// event is never needed.
var embeddingsDoor = nativeDoor{proto: ProtocolEmbeddings, read: parseEmbeddings}

// embeddingsPath is where an embeddings body goes under an upstream's base URL.
const embeddingsPath = "/embeddings"

func parseEmbeddings(body []byte) (doorRequest, error) {
	req, err := openai.ParseEmbeddingsRequest(body)
	if err != nil {
		return nil, err
	}
	raw := func() ([]byte, error) { return req.Raw(), nil } // the client's body as it came
	return nativeRequest{mreq: EmbeddingsMeterRequest(req), path: embeddingsPath, body: raw,
		reader: embeddingsAnswer{inputs: req.Inputs}}, nil
}

// EmbeddingsMeterRequest is what the meter counts of an embeddings request:
// every text input as it is, every token-id input as its length, and no
// output (an embedding is not generated text).
func EmbeddingsMeterRequest(r *openai.EmbeddingsRequest) meter.Request {
	return meter.Request{Model: r.Model, Plain: true, Texts: r.Texts, CountedUnits: ledger.Units(r.TokenCount),
		OutputCap: 0, HasOutputCap: true, N: 1}
}

// EmbeddingsInputUnits is the gateway's count of an embeddings body's input
// under m, as the reserve counts it; 0 when it does not parse. The demo
// upstream reports it as prompt units, to be trusted.
func EmbeddingsInputUnits(m meter.Meter, body []byte) ledger.Units {
	return inputUnits(m, body, openai.ParseEmbeddingsRequest, EmbeddingsMeterRequest)
}

// embeddingsAnswer reads an embeddings answer, always a whole body. Its
// evidence is usage.prompt_tokens, which the meter holds to the gateway's
// own count of the input (exactly under utf8-bytes-v1, within the prompt
// band under tiktoken) like any prompt: the input is all an embedding
// bills, so a figure the gateway cannot check against its count would let
// an upstream charge what it likes. An answer with fewer or more
// embeddings than inputs is not the answer that was paid for: held too.
type embeddingsAnswer struct{ inputs int }

func (embeddingsAnswer) endMarker() string { return "" }

// event is never called: the request does not stream, so the answer is
// read whole. A stream would be no embeddings answer.
func (embeddingsAnswer) event(openai.Event) step {
	return step{observe: true, obs: meter.Observation{Unreadable: true, Problem: "an embeddings answer arrived as a stream"}}
}

func (a embeddingsAnswer) body(b []byte) (meter.Observation, []byte) {
	e, err := openai.ParseEmbeddings(b)
	var o meter.Observation
	switch {
	case errors.Is(err, openai.ErrBadUsage):
		o.Problem = err.Error()
	case err != nil:
		return meter.Observation{Unreadable: true, UpstreamError: openai.ErrorMessage(b)}, b
	case e.Usage == nil:
		o.UpstreamError = e.Error // a 200 whose body is an error object, or no usage at all
	case e.Data != a.inputs:
		o.Problem = fmt.Sprintf("the answer carries %d embeddings for %d inputs", e.Data, a.inputs)
	default:
		o.Usage = (*meter.Usage)(e.Usage)
	}
	return o, b
}
