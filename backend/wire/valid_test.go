package wire_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/wire"
)

var validCases = []string{
	``, ` `, `{}`, `[]`, `{"a":1}`, `{"a":1,}`, `[1,]`, `[1 2]`, `{"a" 1}`, `{1:2}`,
	`"s"`, `"\u00e9\n\/"`, `"\x"`, `"\u12"`, "\"tab\there\"", "\"\xff\"", `"open`,
	`0`, `-0`, `01`, `-`, `1.`, `1.5`, `1e5`, `1E+5`, `1e`, `.5`, `-1.5e-3`, `+1`,
	`true`, `tru`, `false`, `null`, `nul`, `nullx`, ` {"a" : [ true , null ] } `,
	`{"a":1} {"b":2}`, `[[[[]]]]`, `[[[`, strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	strings.Repeat(`{"a":`, 10001) + "1" + strings.Repeat("}", 10001),
}

func TestValidEqualsEncodingJSON(t *testing.T) {
	for _, c := range validCases {
		if got, want := wire.Valid([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("Valid(%.40q) = %v, json.Valid %v", c, got, want)
		}
	}
}

// FuzzValid: Valid and json.Valid agree on every input.
func FuzzValid(f *testing.F) {
	for _, c := range validCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := wire.Valid(data), json.Valid(data); got != want {
			t.Fatalf("Valid(%q) = %v, json.Valid %v", data, got, want)
		}
	})
}
