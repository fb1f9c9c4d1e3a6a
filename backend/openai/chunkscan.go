package openai

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/quotagate/quotagate/backend/internal/jsonobj"
)

// scanChunk reads a chunk (or a non-streaming body) into w without
// encoding/json's reflection (issue 15: json.Unmarshal into wireChunk was a
// fifth of the gateway's CPU on a stream). It takes only what it can read
// exactly as json.Unmarshal would — valid JSON in valid UTF-8, keys without
// escapes, no repeated member, each member of the expected type — and
// returns false for anything else, which parseBody then hands to
// json.Unmarshal. FuzzScanChunk holds the two to the same result.
func scanChunk(d []byte, w *wireChunk) bool {
	if !utf8.Valid(d) || !jsonobj.Valid(d) {
		return false
	}
	return eachKnownMember(d, []string{"choices", "usage", "error"}, func(which int, val []byte) bool {
		switch which {
		case 0:
			return scanChoices(val, w)
		case 1:
			w.Usage = json.RawMessage(val)
		case 2:
			w.Error = json.RawMessage(val)
		}
		return true
	})
}

// eachKnownMember calls each with the index among names and the value of
// every member of the object raw named one of them, skipping the others.
// It declines (false) a key that differs from one of names only in case and
// a name given twice: json.Unmarshal's rules for those are its own.
func eachKnownMember(raw []byte, names []string, each func(which int, val []byte) bool) bool {
	var seen uint64 // by index: names are a handful
	return eachMember(raw, func(key, val []byte) bool {
		which := knownMember(key, names...)
		switch {
		case which == -1:
			return true
		case which == -2 || seen&(1<<which) != 0:
			return false
		}
		seen |= 1 << which
		return each(which, val)
	})
}

// knownMember returns the index of key among names, -1 for another key,
// and -2 for a key that differs from one of names only in case (json.Unmarshal
// would take it; scanChunk leaves such input to it).
func knownMember(key []byte, names ...string) int {
	for i, n := range names {
		if string(key) == n {
			return i
		}
	}
	plain := true // lowercase ASCII folds to itself
	for _, c := range key {
		if c >= 0x80 || 'A' <= c && c <= 'Z' {
			plain = false
			break
		}
	}
	if plain {
		return -1
	}
	folded := foldKey(string(key))
	for _, n := range names {
		if folded == n {
			return -2
		}
	}
	return -1
}

// eachMember calls each with every member of the valid JSON object raw, in
// order, until each returns false; ok is false when raw is not an object
// or a key has an escape (scanChunk then declines).
func eachMember(raw []byte, each func(key, val []byte) bool) (ok bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return false
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return true
	}
	for i < len(raw) {
		if raw[i] != '"' {
			return false
		}
		end := skipValue(raw, i)
		key := raw[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			return false
		}
		i = skipSpace(raw, skipSpace(raw, end)+1) // past the ':'
		vend := skipValue(raw, i)
		if !each(key, raw[i:vend]) {
			return false
		}
		i = skipSpace(raw, vend)
		if i < len(raw) && raw[i] == '}' {
			return true
		}
		i = skipSpace(raw, i+1) // past the ','
	}
	return false
}

// eachElement calls each with every element of the valid JSON array raw.
func eachElement(raw []byte, each func(i int, val []byte) bool) (n int, ok bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return 0, false
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == ']' {
		return 0, true
	}
	for i < len(raw) {
		end := skipValue(raw, i)
		if !each(n, raw[i:end]) {
			return n, false
		}
		n++
		i = skipSpace(raw, end)
		if i < len(raw) && raw[i] == ']' {
			return n, true
		}
		i = skipSpace(raw, i+1)
	}
	return n, false
}

// scanElements fills *out with one T per element of the JSON array raw (a
// null array is a nil slice, a null element a zero T), reading each other
// element with scan.
func scanElements[T any](raw []byte, out *[]T, scan func(item []byte, t *T) bool) bool {
	if isNull(raw) {
		*out = nil
		return true
	}
	n, ok := eachElement(raw, func(int, []byte) bool { return true })
	if !ok {
		return false
	}
	*out = make([]T, n)
	_, ok = eachElement(raw, func(i int, item []byte) bool {
		return isNull(item) || scan(item, &(*out)[i])
	})
	return ok
}

func scanChoices(raw []byte, w *wireChunk) bool {
	return scanElements(raw, &w.Choices, func(item []byte, c *wireChoice) bool {
		return eachKnownMember(item, []string{"delta", "message"}, func(which int, val []byte) bool {
			d := &c.Delta
			if which == 1 {
				d = &c.Message
			}
			return scanDelta(val, d)
		})
	})
}

func scanDelta(raw []byte, d *wireDelta) bool {
	if isNull(raw) {
		return true
	}
	return eachKnownMember(raw, []string{"content", "reasoning_content", "tool_calls"}, func(which int, val []byte) bool {
		if which == 2 {
			return scanToolCalls(val, d)
		}
		p := &d.Content
		if which == 1 {
			p = &d.ReasoningContent
		}
		if isNull(val) {
			*p = nil
			return true
		}
		s := new(string)
		if val[0] != '"' || bodyString(val, s) != nil {
			return false
		}
		*p = s
		return true
	})
}

func scanToolCalls(raw []byte, d *wireDelta) bool {
	return scanElements(raw, &d.ToolCalls, func(item []byte, tc *wireToolCall) bool {
		return eachKnownMember(item, []string{"function"}, func(_ int, val []byte) bool {
			if isNull(val) {
				return true
			}
			return eachKnownMember(val, []string{"name", "arguments"}, func(which int, val []byte) bool {
				if isNull(val) {
					return true
				}
				p := &tc.Function.Name
				if which == 1 {
					p = &tc.Function.Arguments
				}
				return val[0] == '"' && bodyString(val, p) == nil
			})
		})
	})
}
