package responses

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/quotagate/quotagate/backend/wire"
)

var invalid = wire.Invalidf

// getString is the string member key of fields ("" when absent or null);
// what names the object in the refusal.
func getString(fields []wire.Field, key, what string) (string, error) {
	raw, ok := wire.Get(fields, key)
	if !ok {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", invalid("%s.%s must be a string", what, key)
	}
	return s, nil
}

// validUTF8JSON reports whether b is UTF-8 JSON; encoding/json would quietly
// turn invalid bytes into U+FFFD while the raw body goes upstream as sent.
func validUTF8JSON(b []byte) bool { return utf8.Valid(b) && json.Valid(b) }
