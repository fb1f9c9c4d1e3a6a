package admin

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestDuplicateKey(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"None", `{"units":1,"evidence":"x"}`, ""},
		{"Top", `{"units":1,"units":900}`, "units"},
		{"Nested", `{"a":{"b":1,"b":2}}`, "b"},
		{"InArray", `{"a":[{"x":1},{"x":1,"x":2}]}`, "x"},
		{"SameKeyInSiblings", `{"a":{"x":1},"b":{"x":2}}`, ""},
		{"EscapedEqual", `{"u":1,"\u0075":2}`, "u"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := duplicateKey([]byte(c.body))
			if err != nil || got != c.want {
				t.Fatalf("duplicateKey(%s) = %q, %v; want %q", c.body, got, err, c.want)
			}
		})
	}
}

// FuzzDuplicateKey: never panics, and a body it passes decodes to the same
// object as a map (no key was silently dropped).
func FuzzDuplicateKey(f *testing.F) {
	for _, s := range []string{`{"units":1,"units":2}`, `{"a":[{"b":{}}]}`, `[]`, `"x"`, `{`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		k, err := duplicateKey(data)
		if err != nil || k != "" || !json.Valid(data) {
			return
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(data, &m) == nil {
			var n int
			dec := json.NewDecoder(bytesReader(data))
			if tok, _ := dec.Token(); tok == json.Delim('{') {
				for dec.More() {
					_, _ = dec.Token()
					var v json.RawMessage
					_ = dec.Decode(&v)
					n++
				}
			}
			if n != len(m) {
				t.Fatalf("%s: %d keys, %d distinct, but no duplicate reported", data, n, len(m))
			}
		}
	})
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
