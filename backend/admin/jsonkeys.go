package admin

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// duplicateKey returns the first object key that appears twice in one
// object of the JSON text b. encoding/json keeps the last of them, so a
// reconcile body {"units":22,"units":0} would settle 0 while a person (or
// a log) reads 22 (issue 12); the admin API refuses it, as /v1 does.
func duplicateKey(b []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	// One frame per open container: the keys seen so far (nil for arrays)
	// and whether the next string token of an object is a key.
	type frame struct {
		keys      map[string]bool
		expectKey bool
	}
	var stack []frame
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return "", false
		}
		if err != nil {
			return "", false // malformed: the decoder says so next
		}
		top := len(stack) - 1
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				if top >= 0 && stack[top].keys != nil {
					stack[top].expectKey = true // the object is this key's value
				}
				stack = append(stack, frame{keys: map[string]bool{}, expectKey: true})
			case '[':
				if top >= 0 && stack[top].keys != nil {
					stack[top].expectKey = true
				}
				stack = append(stack, frame{})
			case '}', ']':
				stack = stack[:top]
			}
		case string:
			if top >= 0 && stack[top].keys != nil && stack[top].expectKey {
				if stack[top].keys[v] {
					return v, true
				}
				stack[top].keys[v] = true
				stack[top].expectKey = false
				continue
			}
			if top >= 0 && stack[top].keys != nil {
				stack[top].expectKey = true
			}
		default:
			if top >= 0 && stack[top].keys != nil {
				stack[top].expectKey = true
			}
		}
	}
}
