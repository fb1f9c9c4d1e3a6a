package ledger

import (
	"errors"
	"fmt"
	"time"
)

// Error codes of the external contract (DESIGN.md, error table). One spelling
// from Go to the wire to the dashboard.
const (
	CodeInvalidRequest     = "invalid_request"
	CodeInvalidAPIKey      = "invalid_api_key"
	CodeInsufficientBudget = "insufficient_budget"
	CodeModelNotFound      = "model_not_found"
	CodeRunNotFound        = "run_not_found"
	CodeRequestTooLarge    = "request_too_large"
	CodeConcurrencyLimit   = "concurrency_limit"
	CodeRateLimited        = "rate_limited"
	CodeUpstreamBusy       = "upstream_busy"
	CodeQuotaGuard         = "quota_guard"
	CodeUpstreamError      = "upstream_error"
	CodeUpstreamTimeout    = "upstream_timeout"
	CodeUpstreamInterrupt  = "upstream_interrupted"
	CodeLedgerUnavailable  = "ledger_unavailable" // 503: the ledger could not record an admission; nothing charged
	CodeRunEnded           = "run_ended"          // 409: the run already ended
	CodeNotHeld            = "not_held"           // 409: reconcile of a run that holds nothing
	CodeConflict           = "conflict"           // 409: any other state conflict
	CodeDuplicateRequest   = "duplicate_request"  // 409: the Idempotency-Key was used by an earlier run (Error.RunID)
	CodeForbidden          = "forbidden"          // 403
	CodeInternal           = "internal"           // 500; the message never carries SQL or secrets
)

// Error is the one domain error: a code from the table above and a sentence
// a person can act on. RetryAfter is set for the 429 family; RunID names
// the run the error is about when it is another than the caller's
// (CodeDuplicateRequest: the earlier run with the same Idempotency-Key).
type Error struct {
	Code       string
	Message    string
	RetryAfter time.Duration
	RunID      RunID
	// Reason refines Code with a stable key from reason.go that a dashboard
	// renders in its own language; Params carries the names and numbers of
	// Message. Empty when Code says it all.
	Reason string
	Params map[string]any
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Errorf builds an *Error with a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Because gives e a reason from reason.go and its parameters.
func (e *Error) Because(reason string, params map[string]any) *Error {
	e.Reason, e.Params = reason, params
	return e
}

// ErrorReason returns the reason and parameters of err's *Error, or "", nil.
func ErrorReason(err error) (string, map[string]any) {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason, e.Params
	}
	return "", nil
}

// ErrorCode returns the code of the first *Error in err's chain, or
// CodeInternal for any other non-nil error.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	return public(err).Code
}

// ErrorMessage returns the person-readable message of err; internal errors
// become "internal error" so that no SQL or secret reaches a client.
func ErrorMessage(err error) string {
	if err == nil {
		return ""
	}
	return public(err).Message
}

// public is what a client may be told of a non-nil err: its *Error, or for
// any other error one that names nothing of it.
func public(err error) *Error {
	if e, ok := errors.AsType[*Error](err); ok {
		return e
	}
	return &Error{Code: CodeInternal, Message: "internal error"}
}

// ErrorRunID returns the run named by err's *Error (Error.RunID), or "".
func ErrorRunID(err error) RunID {
	var e *Error
	if errors.As(err, &e) {
		return e.RunID
	}
	return ""
}

// RetryAfter returns the Retry-After carried by err, or 0.
func RetryAfter(err error) time.Duration {
	var e *Error
	if errors.As(err, &e) {
		return e.RetryAfter
	}
	return 0
}
