package openai

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/quotagate/quotagate/backend/wire"
)

// scanChunk reads a chunk (or a non-streaming body) into w without
// encoding/json's reflection (json.Unmarshal into wireChunk was a fifth of
// the gateway's CPU on a stream). It takes only what it can read
// exactly as json.Unmarshal would — valid JSON in valid UTF-8, keys without
// escapes, no repeated member, each member of the expected type — and
// returns false for anything else, which parseBody then hands to
// json.Unmarshal. FuzzScanChunk holds the two to the same result.
func scanChunk(d []byte, w *wireChunk) bool {
	if !utf8.Valid(d) || !wire.Valid(d) {
		return false
	}
	return wire.EachKnownMember(d, []string{"choices", "usage", "error", "id"}, func(which int, val []byte) bool {
		switch which {
		case 0:
			return scanChoices(val, w)
		case 1:
			w.Usage = json.RawMessage(val)
		case 2:
			w.Error = json.RawMessage(val)
		case 3:
			w.ID = json.RawMessage(val)
		}
		return true
	})
}

// scanElements fills *out with one T per element of the JSON array raw (a
// null array is a nil slice, a null element a zero T), reading each other
// element with scan.
func scanElements[T any](raw []byte, out *[]T, scan func(item []byte, t *T) bool) bool {
	if wire.IsNull(raw) {
		*out = nil
		return true
	}
	n, ok := wire.EachElement(raw, func(int, []byte) bool { return true })
	if !ok {
		return false
	}
	*out = make([]T, n)
	_, ok = wire.EachElement(raw, func(i int, item []byte) bool {
		return wire.IsNull(item) || scan(item, &(*out)[i])
	})
	return ok
}

func scanChoices(raw []byte, w *wireChunk) bool {
	return scanElements(raw, &w.Choices, func(item []byte, c *wireChoice) bool {
		return wire.EachKnownMember(item, []string{"delta", "message"}, func(which int, val []byte) bool {
			d := &c.Delta
			if which == 1 {
				d = &c.Message
			}
			return scanDelta(val, d)
		})
	})
}

func scanDelta(raw []byte, d *wireDelta) bool {
	if wire.IsNull(raw) {
		return true
	}
	return wire.EachKnownMember(raw, []string{"content", "reasoning_content", "tool_calls"}, func(which int, val []byte) bool {
		if which == 2 {
			return scanToolCalls(val, d)
		}
		p := &d.Content
		if which == 1 {
			p = &d.ReasoningContent
		}
		if wire.IsNull(val) {
			*p = nil
			return true
		}
		s := new(string)
		if val[0] != '"' || wire.BodyString(val, s) != nil {
			return false
		}
		*p = s
		return true
	})
}

func scanToolCalls(raw []byte, d *wireDelta) bool {
	return scanElements(raw, &d.ToolCalls, func(item []byte, tc *wireToolCall) bool {
		return wire.EachKnownMember(item, []string{"function"}, func(_ int, val []byte) bool {
			if wire.IsNull(val) {
				return true
			}
			return wire.EachKnownMember(val, []string{"name", "arguments"}, func(which int, val []byte) bool {
				if wire.IsNull(val) {
					return true
				}
				p := &tc.Function.Name
				if which == 1 {
					p = &tc.Function.Arguments
				}
				return val[0] == '"' && wire.BodyString(val, p) == nil
			})
		})
	})
}
