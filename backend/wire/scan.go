package wire

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// The scanner reads JSON that Valid (or encoding/json) already accepted:
// it finds where members and elements begin and end, and never decodes or
// copies a value. Each function returns ok false for what it does not
// take (an escaped key, another shape); the caller then asks
// encoding/json, whose reading is the one that counts.

// ScanObject splits a valid JSON object into its members without decoding
// or copying the values. ok is false when data is not an object or a key
// needs unescaping or is not UTF-8 (encoding/json makes such bytes U+FFFD):
// the decoder's reading of the key is then the one to take.
func ScanObject(data []byte) (out []Field, ok bool) {
	ok = EachMember(data, func(key, val []byte) bool {
		if !utf8.Valid(key) {
			return false
		}
		out = append(out, Field{Key: string(key), Val: json.RawMessage(val)})
		return true
	})
	if !ok {
		return nil, false
	}
	return out, true
}

// ScanArray splits a valid JSON array into its elements, like ScanObject.
func ScanArray(data []byte) (out []json.RawMessage, ok bool) {
	_, ok = EachElement(data, func(_ int, val []byte) bool {
		out = append(out, json.RawMessage(val))
		return true
	})
	if !ok {
		return nil, false
	}
	return out, true
}

// EachMember calls each with every member of the valid JSON object raw, in
// order, until each returns false; ok is false when raw is not an object,
// a key has an escape, or each declined.
func EachMember(raw []byte, each func(key, val []byte) bool) (ok bool) {
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

// EachElement calls each with every element of the valid JSON array raw;
// n is how many it was given.
func EachElement(raw []byte, each func(i int, val []byte) bool) (n int, ok bool) {
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

// EachKnownMember calls each with the index among names and the value of
// every member of the object raw named one of them, skipping the others.
// It declines (false) a key that differs from one of names only in case and
// a name given twice: json.Unmarshal's rules for those are its own.
func EachKnownMember(raw []byte, names []string, each func(which int, val []byte) bool) bool {
	var seen uint64 // by index: names are a handful
	return EachMember(raw, func(key, val []byte) bool {
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
// would take it; the scan leaves such input to it).
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
	folded := FoldKey(string(key))
	for _, n := range names {
		if folded == n {
			return -2
		}
	}
	return -1
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the valid JSON value that starts at data[i].
func skipValue(data []byte, i int) int {
	switch data[i] {
	case '"':
		// The next quote not escaped by an odd run of backslashes;
		// IndexByte scans long contents many bytes at a time.
		for j := i + 1; j < len(data); {
			q := bytes.IndexByte(data[j:], '"')
			if q < 0 {
				return len(data)
			}
			j += q
			k := j - 1
			for k > i && data[k] == '\\' {
				k--
			}
			if (j-1-k)%2 == 0 {
				return j + 1
			}
			j++
		}
		return len(data)
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				j = skipValue(data, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(data)
	}
	j := i
	for ; j < len(data); j++ {
		switch data[j] {
		case ' ', '\t', '\r', '\n', ',', ']', '}':
			return j
		}
	}
	return j
}
