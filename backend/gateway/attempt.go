package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/quotagate/quotagate/backend/gate"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/openai"
	"github.com/quotagate/quotagate/backend/scrub"
	"github.com/quotagate/quotagate/backend/upstream"
)

// attempt sends a run's request to its upstream, retrying a 429/503
// answered before any output, and says what an answer that is no answer
// means for the run: a request that never left, an error answer, a body of
// the wrong type. Each of those returns the run's outcome and what the
// client is told; the relay takes over from an answer.
type attempt struct {
	up      Upstream
	retry   gate.RetryPolicy
	forward []string        // request headers copied to the upstream (Options.ForwardHeaders)
	scrub   *scrub.Scrubber // what the upstream said, before it is evidence
}

// send calls the upstream, retrying a 429/503 per Options.Retry. It returns
// the final answer and the refusals that came before it. When the wait for a
// retry is cancelled, the provider has still done no work: the error says
// the request was not sent, so the hold is released.
func (a attempt) send(ctx context.Context, path string, body []byte, hdr http.Header) (*upstream.Response, []gate.Answer, error) {
	var resp *upstream.Response
	answers, err := a.retry.Do(ctx, func(ctx context.Context) (int, string, func(), error) {
		r, err := post(ctx, a.up, path, body, hdr)
		if err != nil {
			return 0, "", nil, err
		}
		resp = r
		discard := func() {
			_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, upstreamErrorBytes))
			r.Body.Close()
		}
		return r.StatusCode, r.Header.Get("Retry-After"), discard, nil
	})
	if err != nil {
		var se *upstream.SendError
		if len(answers) > 0 && !errors.As(err, &se) { // cancelled while waiting to retry
			err = &upstream.SendError{Upstream: a.up.Name(), Err: fmt.Errorf("after %s: %w", gate.Evidence(answers), err)}
		}
		return nil, answers, err
	}
	if gate.Retryable(resp.StatusCode) && len(answers) > 0 {
		answers = answers[:len(answers)-1] // the final answer is resp itself
	}
	return resp, answers, nil
}

// header is what the upstream is told beyond the body: the client's
// headers named in forward, and over them the door request's own
// (headerRequest).
func (a attempt) header(client http.Header, req doorRequest, native bool) http.Header {
	var hdr http.Header
	for _, k := range a.forward {
		if v := client.Values(k); len(v) > 0 {
			if hdr == nil {
				hdr = http.Header{}
			}
			hdr[http.CanonicalHeaderKey(k)] = v
		}
	}
	if hr, ok := req.(headerRequest); ok {
		for k, v := range hr.upstreamHeader(native, client) {
			if hdr == nil {
				hdr = http.Header{}
			}
			hdr[k] = v
		}
	}
	return hdr
}

// failed is the outcome of a send that got no response, cause being why
// the run's context ended (nil while it runs). A request that never left
// releases the hold with the error as evidence; one that may have reached
// the provider keeps it.
func (a attempt) failed(err, cause error) (outcome, error) {
	var se *upstream.SendError
	sent := !errors.As(err, &se) || se.Sent
	status := ledger.RunFailed
	if cause != nil {
		status = statusFor(cause)
	}
	var o outcome
	switch {
	case !sent:
		o = released(status, a.scrub.String(se.Evidence()))
	case cause != nil:
		o = kept(status, fmt.Sprintf("%s while waiting for the upstream's answer", cause))
	default:
		o = kept(status, a.scrub.String(fmt.Sprintf("upstream_no_response: the request reached %s but no answer came: %v", a.up.Name(), err)))
	}
	var kr *upstream.KeysRestingError
	switch {
	case cause != nil:
		return o, clientError(cause)
	case errors.As(err, &kr):
		return o, &ledger.Error{Code: ledger.CodeUpstreamBusy, Message: kr.Error(), RetryAfter: kr.RetryAfter()}
	case se != nil && se.Timeout:
		return o, ledger.Errorf(ledger.CodeUpstreamTimeout, "the upstream %s did not answer in time", a.up.Name())
	}
	return o, ledger.Errorf(ledger.CodeUpstreamError, "the upstream %s could not be reached", a.up.Name())
}

// upstreamErrorBytes bounds the error body kept as evidence.
const upstreamErrorBytes = 64 << 10

// refused is the outcome of an HTTP error answer before any output: the
// provider did no work, so the hold is released with the answer as evidence.
func (a attempt) refused(resp *upstream.Response, refusals []gate.Answer) (outcome, error) {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, upstreamErrorBytes))
	sum := sha256.Sum256(b)
	msg := a.scrub.String(upstreamMessage(b))
	evidence := fmt.Sprintf("upstream_status=%d body_sha256=%x: %s", resp.StatusCode, sum[:8], truncate(msg, 200))
	if len(refusals) > 0 {
		evidence = fmt.Sprintf("retried after %s; final %s", gate.Evidence(refusals), evidence)
	}
	o := released(ledger.RunFailed, evidence)
	name := a.up.Name()
	switch code, typ := upstreamCode(b); {
	case resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != http.StatusTooManyRequests:
		// Deterministic (a 400 context_length_exceeded): its own status,
		// code and words, so SDKs and agents decide as against the provider.
		if code == "" {
			code = ledger.CodeUpstreamError
		}
		return o, &upstreamAnswer{err: &ledger.Error{Code: code,
			Message: fmt.Sprintf("the upstream %s answered %d: %s", name, resp.StatusCode, msg)},
			status: resp.StatusCode, typ: typ}
	case resp.StatusCode == http.StatusTooManyRequests:
		err := &ledger.Error{Code: ledger.CodeUpstreamBusy, Message: fmt.Sprintf("the upstream %s is busy: %s", name, msg)}
		if d, ok := gate.ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now()); ok && d > 0 {
			err.RetryAfter = d
		}
		return o, err
	case resp.StatusCode == http.StatusGatewayTimeout:
		return o, ledger.Errorf(ledger.CodeUpstreamTimeout, "the upstream %s timed out: %s", name, msg)
	}
	return o, ledger.Errorf(ledger.CodeUpstreamError, "the upstream %s answered %d: %s", name, resp.StatusCode, msg)
}

// wrongType is the outcome of an upstream that answered 200 with something
// that is not an answer. The provider may have done work, so the hold is
// kept.
func (a attempt) wrongType(contentType string, stream bool) (outcome, error) {
	want := "application/json"
	if stream {
		want = "text/event-stream"
	}
	o := kept(ledger.RunFailed, fmt.Sprintf("upstream_bad_content_type: %s answered 200 with Content-Type %q, not %s",
		a.up.Name(), truncate(a.scrub.String(contentType), 100), want))
	return o, ledger.Errorf(ledger.CodeUpstreamError,
		"the upstream %s answered with %q instead of %s; the run's reservation is held until reconciled", a.up.Name(), truncate(contentType, 100), want)
}

// upstreamCode is the code and type of an OpenAI- or Anthropic-shaped
// error body ({"error":{"code","type"}}, {"type":"error","error":{"type"}}),
// each a short identifier or "".
func upstreamCode(b []byte) (code, typ string) {
	var e struct {
		Error struct {
			Code any    `json:"code"`
			Type string `json:"type"`
		} `json:"error"`
	}
	if json.Unmarshal(b, &e) != nil {
		return "", ""
	}
	if s, ok := e.Error.Code.(string); ok && identifier(s) {
		code = s
	}
	if identifier(e.Error.Type) {
		typ = e.Error.Type
	}
	if code == "" {
		code = typ
	}
	return code, typ
}

// identifier: 1–64 characters of [a-z0-9_.-], as error codes are.
func identifier(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return false
		}
	}
	return true
}

// upstreamMessage is the message of an OpenAI-shaped error body, else the
// body's first line.
func upstreamMessage(b []byte) string {
	if m := openai.ErrorMessage(b); m != "" {
		return m
	}
	s := strings.TrimSpace(string(b))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if s == "" {
		s = "(empty body)"
	}
	return truncate(s, 500)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && (s[n]&0xC0) == 0x80 { // keep UTF-8 whole
		n--
	}
	return s[:n] + "…"
}
