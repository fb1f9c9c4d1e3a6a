package admin

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestDuplicateKey(t *testing.T) {
	for _, tc := range []struct {
		name, in, key string
	}{
		{"ReconcileUnitsTwice", `{"units":22,"units":0,"evidence":"bill"}`, "units"},
		{"Nested", `{"a":{"b":1,"b":2}}`, "b"},
		{"InArray", `[{"x":1},{"x":2,"x":3}]`, "x"},
		{"AfterNestedValue", `{"a":{"z":1},"b":[1,{"a":2}],"a":3}`, "a"},
		{"SameKeyInSiblings", `{"a":{"k":1},"b":{"k":2}}`, ""},
		{"StringValueEqualsKey", `{"a":"a","b":"a"}`, ""},
		{"Plain", `{"units":22,"evidence":"bill"}`, ""},
		{"Malformed", `{"units":`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, dup := duplicateKey([]byte(tc.in))
			if k != tc.key || dup != (tc.key != "") {
				t.Errorf("duplicateKey(%s) = %q, %v; want %q", tc.in, k, dup, tc.key)
			}
		})
	}
}

// FuzzDuplicateKey: never panics, and a JSON object with no duplicate
// reported decodes to a map with as many keys as the text has at its top.
func FuzzDuplicateKey(f *testing.F) {
	for _, s := range []string{`{"units":22,"units":0}`, `{"a":{"b":[1,{"b":2}]},"c":"d"}`, `[]`, `"x"`, `{`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		k, dup := duplicateKey(b)
		if dup && k == "" && !json.Valid(b) {
			return
		}
		var top map[string]json.RawMessage
		if dup || json.Unmarshal(b, &top) != nil {
			return
		}
		var raw []json.RawMessage
		dec := json.NewDecoder(bytesReader(b))
		if _, err := dec.Token(); err != nil {
			return
		}
		n := 0
		for dec.More() {
			if _, err := dec.Token(); err != nil { // the key
				return
			}
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				return
			}
			raw = append(raw, v)
			n++
		}
		if n != len(top) {
			t.Fatalf("%q: %d keys in the text, %d distinct, but no duplicate reported", b, n, len(top))
		}
	})
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
