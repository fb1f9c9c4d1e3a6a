package anthropic

import (
	"encoding/json"
	"strings"
)

// Anthropic error types (the SDK's ErrorType); backend/translate says which
// one each of quotagate's codes is.
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

// ErrorBody is the Anthropic-shaped error body,
// {"type":"error","error":{"type":typ,"message":message}}. The HTTP status,
// Retry-After and x-should-retry are the door's.
func ErrorBody(typ, message string) []byte {
	b, _ := Marshal(errorJSON(typ, message))
	return b
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
