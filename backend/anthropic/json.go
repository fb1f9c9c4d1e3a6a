package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/quotagate/quotagate/backend/ledger"
)

// field is one member of a JSON object, its value kept raw.
type field struct {
	key string
	val json.RawMessage
}

// objectFields decodes one JSON object into its members in order. Unlike
// json.Unmarshal into a struct it sees duplicate and differently-cased
// keys — how a body could say one thing to the gateway and another to the
// upstream. Trailing data is an error.
func objectFields(data []byte) ([]field, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("malformed JSON: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("expected an object")
	}
	var out []field
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("malformed JSON: %w", err)
		}
		key, ok := tok.(string)
		if !ok {
			return nil, errors.New("malformed JSON: object key is not a string")
		}
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, fmt.Errorf("malformed JSON: %w", err)
		}
		out = append(out, field{key: key, val: val})
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("malformed JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("malformed JSON: data after the object")
	}
	return out, nil
}

// arrayItems decodes one JSON array into its raw items.
func arrayItems(data []byte) ([]json.RawMessage, error) {
	d := bytes.TrimSpace(data)
	if len(d) == 0 || d[0] != '[' {
		return nil, errors.New("expected an array")
	}
	var items []json.RawMessage
	if err := json.Unmarshal(d, &items); err != nil {
		return nil, fmt.Errorf("malformed JSON: %w", err)
	}
	return items, nil
}

func isNull(raw json.RawMessage) bool {
	return bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

func isObject(raw json.RawMessage) bool {
	d := bytes.TrimSpace(raw)
	return len(d) > 0 && d[0] == '{'
}

// foldKey is the form under which encoding/json — and so any upstream
// written in Go — matches a member name: case-insensitively, with Unicode
// folding.
func foldKey(k string) string { return strings.ToLower(strings.ToUpper(k)) }

// count reads a JSON integer in [0, ledger.MaxUnits]. Fractions, exponents,
// strings and negatives are refused rather than rounded: a count that needs
// interpreting is neither a valid cap nor evidence.
func count(raw json.RawMessage) (int64, error) {
	s := string(bytes.TrimSpace(raw))
	switch {
	case s == "":
		return 0, errors.New("empty")
	case s[0] == '-':
		return 0, fmt.Errorf("negative number %s", s)
	case strings.ContainsAny(s, ".eE"):
		return 0, fmt.Errorf("not an integer: %.40s", s)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("not a number: %.40s", s)
		}
	}
	if len(s) > 1 && s[0] == '0' {
		return 0, fmt.Errorf("not a JSON number: %s", s)
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v > int64(ledger.MaxUnits) {
		return 0, fmt.Errorf("too large: %.40s (at most %d)", s, ledger.MaxUnits)
	}
	return v, nil
}

func invalid(format string, args ...any) error {
	return ledger.Errorf(ledger.CodeInvalidRequest, format, args...)
}
