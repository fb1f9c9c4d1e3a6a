package gateway

import (
	"encoding/json"
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

// DefaultRetryAfter is sent with a 429 whose error carries no Retry-After.
const DefaultRetryAfter = time.Second

// errorJSON is the OpenAI error shape: {"error":{"message","type","param","code"}}.
type errorJSON struct {
	Error errorObject `json:"error"`
}

type errorObject struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    string  `json:"code"`
}

func errorBody(err error) errorJSON {
	code := ledger.ErrorCode(err)
	return errorJSON{Error: errorObject{Message: ledger.ErrorMessage(err), Type: typeOf(code), Code: code}}
}

// writeError is the one renderer of gateway errors: status from the code,
// OpenAI-shaped body, Retry-After (whole seconds, at least 1) for the 429
// family and a 503. Internal errors never carry their text to the client.
func writeError(w http.ResponseWriter, err error) {
	code := ledger.ErrorCode(err)
	status := statusOf(code)
	if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
		ra := ledger.RetryAfter(err)
		if ra <= 0 {
			ra = DefaultRetryAfter
		}
		w.Header().Set("Retry-After", strconv.FormatInt(int64((ra+time.Second-1)/time.Second), 10))
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(errorBody(err))
}

// sseError is the terminal event of a stream that failed after its first
// byte: the status cannot change any more, so the failure is an event, and
// no [DONE] follows.
func sseError(err error) []byte {
	b, _ := json.Marshal(errorBody(err))
	out := make([]byte, 0, len(b)+8)
	out = append(out, "data: "...)
	out = append(out, b...)
	return append(out, "\n\n"...)
}

var errClientGone = errors.New("client went away")
