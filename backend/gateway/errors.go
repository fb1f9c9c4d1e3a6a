package gateway

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
)

// DefaultRetryAfter is sent with a 429 whose error carries no Retry-After.
const DefaultRetryAfter = time.Second

// errorHeaders sets the headers every door's error answer carries and
// returns its status: the code of DESIGN.md's table → status, Retry-After
// (whole seconds, at least 1) for the 429 family and a 503.
func errorHeaders(w http.ResponseWriter, err error) int {
	status := ledger.HTTPStatus(ledger.ErrorCode(err))
	var ua *upstreamAnswer
	if errors.As(err, &ua) {
		status = ua.status
	}
	if id := ledger.ErrorRunID(err); id != "" {
		// duplicate_request: the earlier run, as an admitted call names its own.
		w.Header().Set("X-Run-Id", string(id))
	}
	if noRetryStatus(status) || ledger.ErrorCode(err) == ledger.CodeDuplicateRequest {
		// The OpenAI and Anthropic SDKs obey it: a retry of this cannot
		// succeed, and SDK retries of a refusal that kept a hold multiply
		// the holds.
		w.Header().Set("x-should-retry", "false")
	}
	if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
		ra := ledger.RetryAfter(err)
		if ra <= 0 {
			ra = DefaultRetryAfter
		}
		w.Header().Set("Retry-After", strconv.FormatInt(int64((ra+time.Second-1)/time.Second), 10))
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	return status
}

var errClientGone = errors.New("client went away")

// upstreamAnswer is an upstream's own error answer before any output,
// passed through with its status, type and code: an SDK then raises BadRequestError for a 400, as it would against the provider,
// and does not retry what a retry cannot fix.
type upstreamAnswer struct {
	err    *ledger.Error // Code: the upstream's code; Message: its words, scrubbed
	status int
	typ    string // the upstream's error type, if it gave one
}

func (u *upstreamAnswer) Error() string { return u.err.Error() }
func (u *upstreamAnswer) Unwrap() error { return u.err }

// noRetryStatus: statuses a retry of the same request cannot fix. 408, 409
// and 429 can be retried; 5xx are the gateway's or the provider's trouble.
func noRetryStatus(status int) bool {
	switch status {
	case http.StatusRequestTimeout, http.StatusConflict, http.StatusTooManyRequests:
		return false
	}
	return status >= 400 && status < 500
}
