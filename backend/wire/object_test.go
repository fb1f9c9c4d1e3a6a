package wire_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/quotagate/quotagate/backend/wire"
)

func TestFields(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		keys     []string // nil: an error
	}{
		{"OK", `{"model":"m","stream":true}`, []string{"model", "stream"}},
		{"DuplicateSeen", `{"model":"a","model":"b"}`, []string{"model", "model"}},
		{"CaseSeen", `{"model":"a","Model":"b"}`, []string{"model", "Model"}},
		{"Empty", ` {} `, []string{}},
		{"TrailingData", `{"a":1} {"a":2}`, nil},
		{"NotAnObject", `[1]`, nil},
		{"Unclosed", `{"a":1`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs, err := wire.Fields([]byte(tc.in))
			if tc.keys == nil {
				if err == nil {
					t.Fatalf("Fields(%s) = %v, want an error", tc.in, fs)
				}
				return
			}
			keys := []string{}
			for _, f := range fs {
				keys = append(keys, f.Key)
			}
			if err != nil || !slices.Equal(keys, tc.keys) {
				t.Fatalf("keys %v (%v), want %v", keys, err, tc.keys)
			}
		})
	}
	if !wire.IsNull(json.RawMessage(" null ")) || wire.IsNull(json.RawMessage(`"null"`)) {
		t.Fatal("IsNull")
	}
}

// FuzzFields: never panics; an object it reads, written back member by
// member, reads back the same.
func FuzzFields(f *testing.F) {
	for _, s := range []string{`{"a":1,"A":[2],"a":{"b":null}}`, `{}`, `{"a":1}x`, `[]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fs, err := wire.Fields(data)
		if err != nil {
			return
		}
		var b bytes.Buffer
		b.WriteByte('{')
		for i, fl := range fs {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(fl.Key)
			b.Write(k)
			b.WriteByte(':')
			b.Write(fl.Val)
		}
		b.WriteByte('}')
		again, err := wire.Fields(b.Bytes())
		if err != nil || len(again) != len(fs) {
			t.Fatalf("%s read back as %v (%v)", b.Bytes(), again, err)
		}
		for i := range fs {
			if again[i].Key != fs[i].Key || !bytes.Equal(again[i].Val, fs[i].Val) {
				t.Fatalf("member %d: %q=%s, read back %q=%s", i, fs[i].Key, fs[i].Val, again[i].Key, again[i].Val)
			}
		}
	})
}
