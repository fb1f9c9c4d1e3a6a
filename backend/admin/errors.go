package admin

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/openai"
)

// The admin API's own error codes (ledger's status table has them).
const (
	codeNotFound             = ledger.CodeNotFound
	codeUnsupportedMediaType = ledger.CodeUnsupportedMediaType
)

// status is an error code's HTTP status, from ledger's one table (the
// gateway answers the same), and the OpenAI error type that goes with it.
func status(code string) (int, string) {
	st := ledger.HTTPStatus(code)
	switch st {
	case http.StatusUnauthorized:
		return st, "authentication_error"
	case http.StatusPaymentRequired:
		return st, "insufficient_quota"
	case http.StatusForbidden:
		return st, "permission_error"
	case http.StatusNotFound:
		return st, "not_found_error"
	case http.StatusTooManyRequests:
		return st, "rate_limit_error"
	case http.StatusBadGateway, http.StatusGatewayTimeout:
		return st, "upstream_error" // as the gateway types a provider's failure
	}
	if st >= 500 {
		return st, "server_error"
	}
	return st, "invalid_request_error"
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

// answer writes v with status st, unless the handler's call failed: then
// err goes back to the handler's caller, which writes the error.
func answer(w http.ResponseWriter, st int, v any, err error) error {
	if err != nil {
		return err
	}
	writeJSON(w, st, v)
	return nil
}

func writeJSON(w http.ResponseWriter, st int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(st)
	_ = json.NewEncoder(w).Encode(v)
}
