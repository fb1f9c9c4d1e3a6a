package wire

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzScanObject: on every valid JSON object the scan splits exactly as
// encoding/json's decoder does (keys, order, raw values), and a valid array
// into the decoder's elements.
func FuzzScanObject(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1}`, ` { "model" : "m" , "messages":[{"role":"user","content":"hi \"x\" ]}"}], "n":null, "t":true, "f":-1.5e3 } `,
		`{"a":{"b":[1,{"c":"}"}]},"d":"\\"}`, `[1, "a", {"b":[]}, [ ]]`, `[]`, `{"a\u0062":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		if got, ok := ScanObject(data); ok {
			want, err := decodeFields(data)
			if err != nil {
				t.Fatalf("scan took %q, the decoder refused it: %v", data, err)
			}
			if len(got) != len(want) {
				t.Fatalf("%q: scan %d members, decoder %d", data, len(got), len(want))
			}
			for i := range got {
				if got[i].Key != want[i].Key || !bytes.Equal(got[i].Val, want[i].Val) {
					t.Fatalf("%q member %d: scan %q=%s, decoder %q=%s", data, i, got[i].Key, got[i].Val, want[i].Key, want[i].Val)
				}
			}
		}
		if got, ok := ScanArray(data); ok {
			var want []json.RawMessage
			if err := json.Unmarshal(data, &want); err != nil {
				t.Fatalf("scan took %q, the decoder refused it: %v", data, err)
			}
			if len(got) != len(want) {
				t.Fatalf("%q: scan %d elements, decoder %d", data, len(got), len(want))
			}
			for i := range got {
				if !bytes.Equal(got[i], want[i]) {
					t.Fatalf("%q element %d: scan %s, decoder %s", data, i, got[i], want[i])
				}
			}
		}
	})
}
