package gateway

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
)

// statusOf maps an error code of DESIGN.md's table to its HTTP status.
func statusOf(code string) int {
	switch code {
	case ledger.CodeInvalidRequest:
		return http.StatusBadRequest
	case ledger.CodeInvalidAPIKey:
		return http.StatusUnauthorized
	case ledger.CodeInsufficientBudget:
		return http.StatusPaymentRequired
	case ledger.CodeForbidden:
		return http.StatusForbidden
	case ledger.CodeModelNotFound, ledger.CodeRunNotFound, codeNotFound:
		return http.StatusNotFound
	case codeMethodNotAllowed:
		return http.StatusMethodNotAllowed
	case codeRequestTimeout:
		return http.StatusRequestTimeout
	case ledger.CodeRunEnded, ledger.CodeNotHeld, ledger.CodeConflict:
		return http.StatusConflict
	case ledger.CodeRequestTooLarge:
		return http.StatusRequestEntityTooLarge
	case ledger.CodeConcurrencyLimit, ledger.CodeRateLimited, ledger.CodeUpstreamBusy, ledger.CodeQuotaGuard:
		return http.StatusTooManyRequests
	case ledger.CodeUpstreamError, ledger.CodeUpstreamInterrupt:
		return http.StatusBadGateway
	case ledger.CodeUpstreamTimeout:
		return http.StatusGatewayTimeout
	case ledger.CodeLedgerUnavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// DefaultRetryAfter is sent with a 429 whose error carries no Retry-After.
const DefaultRetryAfter = time.Second

// errorHeaders sets the headers every door's error answer carries and
// returns its status: the code of DESIGN.md's table → status, Retry-After
// (whole seconds, at least 1) for the 429 family and a 503.
func errorHeaders(w http.ResponseWriter, err error) int {
	status := statusOf(ledger.ErrorCode(err))
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
