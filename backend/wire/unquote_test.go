package wire

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

var unquoteCases = []string{
	``, `plain`, `line\nbreak\ttab\r\b\f`, `quote \" backslash \\ slash \/`,
	`\u00e9t\u00C9`, `emoji \ud83d\ude00 pair`, `lone \ud800 high`, `lone \udc00 low`,
	`high then letter \ud800\u0041`, `two highs \ud800\ud800\udc00`, `low high \udc00\ud800`,
	`中文 and \u4e2d\u6587`, `\\u0041 is not an escape`, `end \ud83d`, `\u0000 nul`,
}

// TestUnquoteEqualsEncodingJSON: every valid literal unescapes exactly as
// json.Unmarshal unescapes it.
func TestUnquoteEqualsEncodingJSON(t *testing.T) {
	for _, c := range unquoteCases {
		checkUnquote(t, []byte(c))
	}
}

func checkUnquote(t *testing.T, body []byte) {
	t.Helper()
	lit := append(append([]byte{'"'}, body...), '"')
	got, ok := unquote(body)
	if !json.Valid(lit) || !utf8.Valid(body) {
		return // jsonString only sees valid JSON in valid UTF-8; no panic on the rest
	}
	var want string
	if err := json.Unmarshal(lit, &want); err != nil {
		t.Fatalf("json.Unmarshal(%s): %v", lit, err)
	}
	if !ok || got != want {
		t.Fatalf("unquote(%s) = %q, %v; json.Unmarshal %q", body, got, ok, want)
	}
}

// FuzzUnquote: unquote never panics and agrees with encoding/json on every
// valid string literal.
func FuzzUnquote(f *testing.F) {
	for _, c := range unquoteCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkUnquote(t, body) })
}

// FuzzJSONString: the fast path of String agrees with json.Unmarshal.
func FuzzJSONString(f *testing.F) {
	for _, s := range []string{`"hi"`, `"问题"`, `"a\"b"`, `"\u00e9"`, "\"\xff\"", "\"tab\there\"", `""`, `"a`, `"\/"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var want, got string
		werr := json.Unmarshal(raw, &want)
		gerr := String(raw, &got)
		if (werr == nil) != (gerr == nil) || got != want {
			t.Fatalf("String(%q) = %q, %v; json.Unmarshal = %q, %v", raw, got, gerr, want, werr)
		}
	})
}
