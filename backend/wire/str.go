package wire

import (
	"bytes"
	"encoding/json"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// String decodes a JSON string exactly as json.Unmarshal does, for any raw
// (FuzzJSONString).
func String(raw []byte, s *string) error {
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' && literalInside(raw[1:n-1]) {
		return BodyString(raw, s)
	}
	return json.Unmarshal(raw, s)
}

// BodyString is String for a value of a body already known to be valid
// UTF-8 and valid JSON, so a string is unescaped in one pass (json.Unmarshal
// would validate every message content a second time: half of the parse of
// a 600 KB conversation).
func BodyString(raw []byte, s *string) error {
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' {
		if v, ok := unquote(raw[1 : n-1]); ok {
			*s = v
			return nil
		}
	}
	return json.Unmarshal(raw, s)
}

// literalInside reports whether b is valid UTF-8 with no control byte and
// no quote that is not escaped: the inside of a string literal, as far as
// unquote needs (it declines a malformed escape itself).
func literalInside(b []byte) bool {
	ascii := true
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c < 0x20 || c == '"':
			return false
		case c == '\\':
			i++ // the escaped byte; unquote checks the escape
		case c >= 0x80:
			ascii = false
		}
	}
	return ascii || utf8.Valid(b)
}

// unquote unescapes the inside of a JSON string literal that is valid JSON
// and valid UTF-8, as encoding/json does (a lone or broken surrogate escape
// is U+FFFD); ok is false for a malformed escape, which the caller leaves
// to encoding/json. FuzzUnquote holds it to json.Unmarshal.
func unquote(body []byte) (string, bool) {
	esc := bytes.IndexByte(body, '\\')
	if esc < 0 {
		return string(body), true
	}
	out := make([]byte, 0, len(body))
	for i := 0; ; {
		if esc < 0 {
			return string(append(out, body[i:]...)), true
		}
		out = append(out, body[i:i+esc]...)
		i += esc
		if i+1 >= len(body) {
			return "", false
		}
		switch c := body[i+1]; c {
		case '"', '\\', '/':
			out = append(out, c)
			i += 2
		case 'b':
			out, i = append(out, '\b'), i+2
		case 'f':
			out, i = append(out, '\f'), i+2
		case 'n':
			out, i = append(out, '\n'), i+2
		case 'r':
			out, i = append(out, '\r'), i+2
		case 't':
			out, i = append(out, '\t'), i+2
		case 'u':
			r := hex4(body[i+2:])
			if r < 0 {
				return "", false
			}
			i += 6
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if i+1 < len(body) && body[i] == '\\' && body[i+1] == 'u' {
					r2 = hex4(body[i+2:])
				}
				if dec := utf16.DecodeRune(r, r2); dec != unicode.ReplacementChar {
					r, i = dec, i+6
				} else {
					r = unicode.ReplacementChar
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", false
		}
		esc = bytes.IndexByte(body[i:], '\\')
	}
}

// hex4 reads the four hex digits of a \u escape, or returns -1.
func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}
