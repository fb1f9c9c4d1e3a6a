package admin

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/openai"
)

// Codes the admin API adds to the ledger's table.
const (
	codeNotFound             = "not_found"
	codeUnsupportedMediaType = "unsupported_media_type"
)

// status maps an error code to its HTTP status and OpenAI error type.
func status(code string) (int, string) {
	switch code {
	case ledger.CodeInvalidRequest:
		return http.StatusBadRequest, "invalid_request_error"
	case ledger.CodeInvalidAPIKey:
		return http.StatusUnauthorized, "authentication_error"
	case ledger.CodeInsufficientBudget:
		return http.StatusPaymentRequired, "insufficient_quota"
	case ledger.CodeForbidden:
		return http.StatusForbidden, "permission_error"
	case ledger.CodeRunNotFound, ledger.CodeModelNotFound, codeNotFound:
		return http.StatusNotFound, "not_found_error"
	case ledger.CodeRunEnded, ledger.CodeNotHeld, ledger.CodeConflict:
		return http.StatusConflict, "invalid_request_error"
	case ledger.CodeRequestTooLarge:
		return http.StatusRequestEntityTooLarge, "invalid_request_error"
	case codeUnsupportedMediaType:
		return http.StatusUnsupportedMediaType, "invalid_request_error"
	case ledger.CodeConcurrencyLimit, ledger.CodeRateLimited, ledger.CodeUpstreamBusy, ledger.CodeQuotaGuard:
		return http.StatusTooManyRequests, "rate_limit_error"
	case ledger.CodeUpstreamError, ledger.CodeUpstreamInterrupt:
		return http.StatusBadGateway, "api_error"
	case ledger.CodeUpstreamTimeout:
		return http.StatusGatewayTimeout, "api_error"
	}
	return http.StatusInternalServerError, "server_error"
}

// writeError renders err as openai.ErrorBody, {"error":{"message","type","param","code"}}. Internal
// errors are logged in full and shown as "internal error" only.
func writeError(w http.ResponseWriter, log *slog.Logger, r *http.Request, err error) {
	code := ledger.ErrorCode(err)
	st, typ := status(code)
	if code == ledger.CodeInternal && log != nil {
		log.Error("admin request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	if ra := ledger.RetryAfter(err); ra > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int((ra+999_999_999)/1_000_000_000)))
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(st)
	reason, params := ledger.ErrorReason(err)
	_ = json.NewEncoder(w).Encode(errorBody{Error: errorObject{
		ErrorObject: openai.NewError(ledger.ErrorMessage(err), typ, code).Error,
		Reason:      reason,
		Params:      params,
	}})
}

// errorBody is openai.ErrorBody plus the admin API's refinement of the code:
// reason (ledger's reason.go, absent when the code says it all) and params,
// the names and numbers of the message, so the dashboard can say the same
// in the operator's language and fall back to message for anything else.
type errorBody struct {
	Error errorObject `json:"error"`
}

type errorObject struct {
	openai.ErrorObject
	Reason string         `json:"reason,omitempty"`
	Params map[string]any `json:"params,omitempty"`
}

func writeJSON(w http.ResponseWriter, st int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(st)
	_ = json.NewEncoder(w).Encode(v)
}
