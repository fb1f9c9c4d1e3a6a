package responses

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/quotagate/quotagate/backend/internal/jsonobj"
	"github.com/quotagate/quotagate/backend/ledger"
)

type field struct {
	key string
	val json.RawMessage
}

func invalid(format string, args ...any) error {
	return ledger.Errorf(ledger.CodeInvalidRequest, format, args...)
}

// foldKey is how encoding/json (and so any upstream written in Go) matches a
// member name to a field: case-insensitively, with Unicode folding.
func foldKey(k string) string { return strings.ToLower(strings.ToUpper(k)) }

func isNull(raw json.RawMessage) bool { return jsonobj.IsNull(raw) }

// objectFields decodes one JSON object into its members in order
// (jsonobj.Fields: duplicate and differently-cased keys are seen).
func objectFields(data []byte) ([]field, error) {
	fs, err := jsonobj.Fields(data)
	out := make([]field, len(fs))
	for i, f := range fs {
		out[i] = field{key: f.Key, val: f.Val}
	}
	return out, err
}

// uniqueFields is objectFields refusing a member given twice (in any case).
func uniqueFields(data []byte, what string) ([]field, error) {
	fields, err := objectFields(data)
	if err != nil {
		return nil, invalid("%s is not a JSON object: %v", what, err)
	}
	seen := make(map[string]string, len(fields))
	for _, f := range fields {
		k := foldKey(f.key)
		if prev, dup := seen[k]; dup {
			return nil, invalid("%s: the field %q appears twice (also as %q); send it once", what, f.key, prev)
		}
		seen[k] = f.key
	}
	return fields, nil
}

func get(fields []field, key string) (json.RawMessage, bool) {
	for _, f := range fields {
		if f.key == key && !isNull(f.val) {
			return f.val, true
		}
	}
	return nil, false
}

func getString(fields []field, key, what string) (string, error) {
	raw, ok := get(fields, key)
	if !ok {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", invalid("%s.%s must be a string", what, key)
	}
	return s, nil
}

// validJSON reports whether b is UTF-8 JSON; encoding/json would quietly
// turn invalid bytes into U+FFFD while the raw body goes upstream as sent.
func validUTF8JSON(b []byte) bool { return utf8.Valid(b) && json.Valid(b) }
