package ledger

// Codes of the HTTP surfaces (/v1 and /admin/api) that name no ledger
// condition, only what the request asked of the server. They are here so
// that the one status table below covers every code a client can read.
const (
	CodeNotFound             = "not_found"              // 404: no such endpoint (or object of the admin API)
	CodeMethodNotAllowed     = "method_not_allowed"     // 405, with Allow
	CodeRequestTimeout       = "request_timeout"        // 408: the body did not arrive in time
	CodeUnsupportedMediaType = "unsupported_media_type" // 415: the admin API reads JSON only
)

// HTTPStatus is the HTTP status of an error code, the same on /v1 and on
// the admin API (DESIGN.md's error table); any other code is 500. The
// numbers are spelled out because the ledger imports no net/http.
func HTTPStatus(code string) int {
	switch code {
	case CodeInvalidRequest, CodeModelUnpriced:
		return 400
	case CodeInvalidAPIKey:
		return 401
	case CodeInsufficientBudget:
		return 402
	case CodeForbidden:
		return 403
	case CodeModelNotFound, CodeRunNotFound, CodeNotFound:
		return 404
	case CodeMethodNotAllowed:
		return 405
	case CodeRequestTimeout:
		return 408
	case CodeRunEnded, CodeNotHeld, CodeConflict, CodeDuplicateRequest:
		return 409
	case CodeRequestTooLarge:
		return 413
	case CodeUnsupportedMediaType:
		return 415
	case CodeConcurrencyLimit, CodeRateLimited, CodeUpstreamBusy, CodeQuotaGuard:
		return 429
	case CodeUpstreamError, CodeUpstreamInterrupt:
		return 502
	case CodeLedgerUnavailable:
		return 503
	case CodeUpstreamTimeout:
		return 504
	}
	return 500
}
