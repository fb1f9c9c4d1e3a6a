package openai

import (
	"encoding/json"
)

// ErrorBody is the OpenAI error shape, {"error":{"message","type","param","code"}}:
// what quotagate answers on /v1 and the admin API, what an OpenAI-compatible
// upstream answers, and the terminal event of a stream that failed after its
// first byte.
type ErrorBody struct {
	Error ErrorObject `json:"error"`
}

// ErrorObject is the member of an ErrorBody. Param is written as null when
// nil; an upstream's error may omit any member.
type ErrorObject struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    string  `json:"code"`
}

// NewError returns the error body of message, type and code.
func NewError(message, typ, code string) ErrorBody {
	return ErrorBody{Error: ErrorObject{Message: message, Type: typ, Code: code}}
}

// ErrorMessage returns the message of an OpenAI-shaped error body, or ""
// when body is not one (or its message is empty). Only the message is read:
// providers send codes as numbers, strings or null.
func ErrorMessage(body []byte) string {
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	return objectMessage(e.Error)
}

// objectMessage is the message member of an error object, or "".
func objectMessage(raw json.RawMessage) string {
	var o struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &o) != nil {
		return ""
	}
	return o.Message
}

// SSEData frames one JSON payload as an SSE data event.
func SSEData(payload []byte) []byte {
	out := make([]byte, 0, len(payload)+8)
	out = append(out, "data: "...)
	out = append(out, payload...)
	return append(out, "\n\n"...)
}
