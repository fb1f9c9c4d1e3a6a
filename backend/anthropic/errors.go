package anthropic

import (
	"encoding/json"
	"strings"

	"github.com/quotagate/quotagate/backend/ledger"
)

// Anthropic error types (the SDK's ErrorType).
const (
	ErrInvalidRequest  = "invalid_request_error"
	ErrAuthentication  = "authentication_error"
	ErrBilling         = "billing_error"
	ErrPermission      = "permission_error"
	ErrNotFound        = "not_found_error"
	ErrRequestTooLarge = "request_too_large"
	ErrRateLimit       = "rate_limit_error"
	ErrTimeout         = "timeout_error"
	ErrOverloaded      = "overloaded_error"
	ErrAPI             = "api_error"
)

// ErrorType is the Anthropic error type for one of quotagate's codes.
func ErrorType(code string) string {
	switch code {
	case ledger.CodeInvalidRequest, ledger.CodeRunEnded, ledger.CodeNotHeld, ledger.CodeConflict, ledger.CodeDuplicateRequest:
		return ErrInvalidRequest
	case ledger.CodeInvalidAPIKey:
		return ErrAuthentication
	case ledger.CodeInsufficientBudget:
		return ErrBilling
	case ledger.CodeForbidden:
		return ErrPermission
	case ledger.CodeModelNotFound, ledger.CodeRunNotFound:
		return ErrNotFound
	case ledger.CodeRequestTooLarge:
		return ErrRequestTooLarge
	case ledger.CodeConcurrencyLimit, ledger.CodeRateLimited, ledger.CodeQuotaGuard:
		return ErrRateLimit
	case ledger.CodeUpstreamBusy, ledger.CodeLedgerUnavailable:
		return ErrOverloaded
	case ledger.CodeUpstreamTimeout:
		return ErrTimeout
	}
	return ErrAPI // upstream_error, upstream_interrupted, internal
}

type errorBody struct {
	Type  string `json:"type"`
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

func errorJSON(typ, message string) errorBody {
	var e errorBody
	e.Type, e.Error.Type, e.Error.Message = "error", typ, message
	return e
}

// ErrorMessage is the message of a refusal at this door: the person's
// sentence followed by quotagate's code, so that someone reading Claude
// Code's screen can act on it (and search the README for it).
func ErrorMessage(code, message string) string {
	return message + " (quotagate: " + code + ")"
}

// ErrorBody is the Anthropic-shaped body for err:
// {"type":"error","error":{"type":…,"message":"… (quotagate: code)"}}.
// The HTTP status, Retry-After and x-should-retry are the door's.
func ErrorBody(err error) []byte {
	code := ledger.ErrorCode(err)
	b, _ := marshal(errorJSON(ErrorType(code), ErrorMessage(code, ledger.ErrorMessage(err))))
	return b
}

// ErrorEventFor is the in-stream error event for err (a cut stream:
// api_error with upstream_interrupted in the message).
func ErrorEventFor(err error) []byte {
	code := ledger.ErrorCode(err)
	return ErrorEvent(ErrorType(code), ErrorMessage(code, ledger.ErrorMessage(err)))
}

// UpstreamErrorMessage is the message of an Anthropic-shaped (or
// OpenAI-shaped) error body an upstream answered with, else its first line.
func UpstreamErrorMessage(b []byte) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(b, &e) == nil && e.Error.Message != "" {
		return e.Error.Message
	}
	s := strings.TrimSpace(string(b))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if s == "" {
		return "(empty body)"
	}
	if len(s) > 500 {
		n := 500
		for n > 0 && (s[n]&0xC0) == 0x80 {
			n--
		}
		s = s[:n] + "…"
	}
	return s
}
