package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"unicode/utf8"
)

// RequestError is a request body a format refuses: Message is a sentence
// for the person who sent it. The doors answer it with quotagate's
// invalid_request.
type RequestError struct{ Message string }

func (e *RequestError) Error() string { return e.Message }

// Invalidf is a *RequestError with a formatted message.
func Invalidf(format string, args ...any) error {
	return &RequestError{Message: fmt.Sprintf(format, args...)}
}

// Reason is the message of err's *RequestError, for a refusal that names
// where in the body it happened ("messages[2]: role is required"); another
// error's own text.
func Reason(err error) string {
	var e *RequestError
	if errors.As(err, &e) {
		return e.Message
	}
	return err.Error()
}

// ForbiddenFields are the top-level members every door refuses in a
// request body, with why: accounting fields (a client cannot name its own
// identity or price) and fields that would redirect the call or its key
// elsewhere (RELIABILITY T29). One list, so the doors cannot drift apart.
var ForbiddenFields = map[string]string{
	"usage":         "a client cannot report its own usage",
	"tenant":        "the tenant comes from the API key, not the body",
	"tenant_id":     "the tenant comes from the API key, not the body",
	"api_key":       "upstream keys are configured by the operator",
	"api_base":      "upstream addresses are configured by the operator",
	"base_url":      "upstream addresses are configured by the operator",
	"extra_headers": "upstream headers are configured by the operator",
}

// Body says how a format reads the top level of its request body.
type Body struct {
	// Known are the members the format reads, in their one spelling.
	Known map[string]bool
	// Required are members whose null the format judges itself ("model
	// must be a non-empty string"); any other null member means "not
	// given" and is left out.
	Required []string
}

// Read reads a request body's top-level object strictly, the same way at
// every door: it calls each with every member but the null ones in body
// order, and returns all the members (a format that rewrites the body
// keeps them). It refuses, as a *RequestError:
//   - bytes that are not UTF-8: encoding/json would quietly read them as
//     U+FFFD while the raw body goes upstream as sent, so the gateway
//     would meter one text and forward another;
//   - anything but one JSON object;
//   - a member given twice, in any letter case: a case-insensitive
//     upstream could read the one the gateway did not;
//   - a ForbiddenFields member, in any letter case;
//   - a known member spelled in other letter case, for the same reason.
//
// An error from each ends the reading and is returned as it is.
func (b Body) Read(body []byte, each func(f Field) error) ([]Field, error) {
	if !utf8.Valid(body) {
		return nil, Invalidf("the request body is not valid UTF-8")
	}
	fields, err := Fields(body)
	if err != nil {
		return nil, Invalidf("the request body is not a JSON object: %v", err)
	}
	seen := make(map[string]string, len(fields))
	for _, f := range fields {
		folded := FoldKey(f.Key)
		if prev, dup := seen[folded]; dup {
			return nil, Invalidf("the field %q appears twice (also as %q); send it once", f.Key, prev)
		}
		seen[folded] = f.Key
		if why, bad := ForbiddenFields[folded]; bad {
			return nil, Invalidf("the field %q is not allowed: %s", f.Key, why)
		}
		if b.Known[folded] && f.Key != folded {
			return nil, Invalidf("the field %q must be spelled %q", f.Key, folded)
		}
		if IsNull(f.Val) && !slices.Contains(b.Required, f.Key) {
			continue // null means "not given" for optional members
		}
		if err := each(f); err != nil {
			return nil, err
		}
	}
	return fields, nil
}

// Require refuses, as a *RequestError, the first of names that is not
// among a body's members (Read's result): "model is required".
func Require(fields []Field, names ...string) error {
	for _, name := range names {
		if !slices.ContainsFunc(fields, func(f Field) bool { return f.Key == name }) {
			return Invalidf("%s is required", name)
		}
	}
	return nil
}

// Unique is Fields refusing a member given twice in any letter case, for
// an object inside a body (a message, an item); what names it in the
// refusal.
func Unique(data []byte, what string) ([]Field, error) {
	fields, err := Fields(data)
	if err != nil {
		return nil, Invalidf("%s is not a JSON object: %v", what, err)
	}
	seen := make(map[string]string, len(fields))
	for _, f := range fields {
		k := FoldKey(f.Key)
		if prev, dup := seen[k]; dup {
			return nil, Invalidf("%s: the field %q appears twice (also as %q); send it once", what, f.Key, prev)
		}
		seen[k] = f.Key
	}
	return fields, nil
}

// Model reads a request body's model member: a non-empty string.
func Model(f Field) (string, error) {
	var m string
	if err := json.Unmarshal(f.Val, &m); err != nil || m == "" {
		return "", Invalidf("%s must be a non-empty string", f.Key)
	}
	return m, nil
}

// Flag reads a member that is true or false.
func Flag(f Field) (bool, error) {
	var b bool
	if err := json.Unmarshal(f.Val, &b); err != nil {
		return false, Invalidf("%s must be true or false", f.Key)
	}
	return b, nil
}
