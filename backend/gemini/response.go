package gemini

import (
	"encoding/json"
	"fmt"

	"github.com/quotagate/quotagate/backend/wire"
)

// The Gemini shapes the gateway writes: a GenerateContentResponse (a whole
// answer, or one chunk of a stream), its candidates and parts, and usage.
// backend/translate fills them from a chat-completions answer.
type (
	// Response is one GenerateContentResponse.
	Response struct {
		Candidates    []Candidate    `json:"candidates"`
		UsageMetadata *UsageMetadata `json:"usageMetadata,omitempty"`
		ModelVersion  string         `json:"modelVersion,omitempty"`
		ResponseID    string         `json:"responseId,omitempty"`
	}
	// Candidate is one answer; FinishReason only on the last chunk.
	Candidate struct {
		Content      AnswerContent `json:"content"`
		FinishReason string        `json:"finishReason,omitempty"`
		Index        int           `json:"index"`
	}
	// AnswerContent is a candidate's content: role "model".
	AnswerContent struct {
		Parts []AnswerPart `json:"parts"`
		Role  string       `json:"role"`
	}
	// AnswerPart is a text (or thought) part, or a functionCall.
	AnswerPart struct {
		Text         *string       `json:"text,omitempty"`
		Thought      bool          `json:"thought,omitempty"`
		FunctionCall *FunctionCall `json:"functionCall,omitempty"`
	}
	// FunctionCall is a functionCall part's call.
	FunctionCall struct {
		ID   string          `json:"id,omitempty"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	}
	// UsageMetadata is the usage an answer reports (see Usage for the rule).
	UsageMetadata struct {
		PromptTokenCount        int64 `json:"promptTokenCount"`
		CandidatesTokenCount    int64 `json:"candidatesTokenCount"`
		TotalTokenCount         int64 `json:"totalTokenCount"`
		CachedContentTokenCount int64 `json:"cachedContentTokenCount,omitempty"`
		ThoughtsTokenCount      int64 `json:"thoughtsTokenCount,omitempty"`
		ToolUsePromptTokenCount int64 `json:"toolUsePromptTokenCount,omitempty"`
	}
)

// Finish reasons the gateway writes.
const (
	FinishStop      = "STOP"
	FinishMaxTokens = "MAX_TOKENS"
	FinishSafety    = "SAFETY"
	FinishOther     = "OTHER"
)

// Marshal encodes v as Google writes JSON: no HTML escaping, no trailing
// newline.
func Marshal(v any) ([]byte, error) {
	b, err := wire.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("gemini: encode: %w", err)
	}
	return b, nil
}

// Chunk frames v (a Response, or an error body) as one SSE event of
// streamGenerateContent?alt=sse: "data: {…}\r\n\r\n", as Google writes it.
func Chunk(v any) []byte {
	b, err := Marshal(v)
	if err != nil { // only our own shapes are marshalled
		panic(err)
	}
	out := make([]byte, 0, len(b)+10)
	out = append(out, "data: "...)
	out = append(out, b...)
	return append(out, "\r\n\r\n"...)
}

// Google's error statuses (google.rpc.Code names) with their HTTP codes.
const (
	StatusInvalidArgument   = "INVALID_ARGUMENT"   // 400
	StatusUnauthenticated   = "UNAUTHENTICATED"    // 401
	StatusPermissionDenied  = "PERMISSION_DENIED"  // 403
	StatusNotFound          = "NOT_FOUND"          // 404
	StatusAborted           = "ABORTED"            // 409
	StatusResourceExhausted = "RESOURCE_EXHAUSTED" // 429
	StatusCancelled         = "CANCELLED"          // 499
	StatusInternal          = "INTERNAL"           // 500
	StatusUnavailable       = "UNAVAILABLE"        // 503
	StatusDeadlineExceeded  = "DEADLINE_EXCEEDED"  // 504
)

// ErrorJSON is Google's error body, {"error":{"code","message","status"}}.
type ErrorJSON struct {
	Error struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Status  string `json:"status"`
	} `json:"error"`
}

func errorJSON(code int, status, message string) ErrorJSON {
	var e ErrorJSON
	e.Error.Code, e.Error.Message, e.Error.Status = code, message, status
	return e
}

// ErrorMessage is the message of a refusal at this door: the person's
// sentence followed by quotagate's code, so that someone reading Gemini
// CLI's screen can act on it (and search the README for it).
func ErrorMessage(code, message string) string {
	return message + " (quotagate: " + code + ")"
}

// ErrorBody is the Google-shaped error body for HTTP status code.
func ErrorBody(code int, status, message string) []byte {
	b, _ := Marshal(errorJSON(code, status, message))
	return b
}

// ErrorEvent is the one event a stream ends with when it cannot finish
// (a cut upstream, a timeout): never a chunk with a made-up finishReason.
func ErrorEvent(code int, status, message string) []byte {
	return Chunk(errorJSON(code, status, message))
}

// StatusFor is Google's status for an HTTP status code, as Google pairs
// them (google.rpc.Code's HTTP mapping); a code Google does not use gets
// the status of its class.
func StatusFor(code int) string {
	switch code {
	case 401:
		return StatusUnauthenticated
	case 402, 429:
		return StatusResourceExhausted // a spent budget is a resource exhausted, not a bad argument
	case 403:
		return StatusPermissionDenied
	case 404:
		return StatusNotFound
	case 408, 504:
		return StatusDeadlineExceeded
	case 409:
		return StatusAborted
	case 499:
		return StatusCancelled
	case 502, 503:
		return StatusUnavailable
	}
	if code >= 500 {
		return StatusInternal
	}
	return StatusInvalidArgument
}
