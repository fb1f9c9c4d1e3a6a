// Package jsonobj reads a JSON object member by member, values raw, for the
// wire packages (openai, responses, anthropic). Unlike json.Unmarshal into a
// struct it sees duplicate and differently-cased keys, which is how a body
// could say one thing to the gateway and another to the upstream. Standard
// library only: the wire packages import nothing else of ours but ledger.
package jsonobj

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Field is one object member: its key as written and its raw value.
type Field struct {
	Key string
	Val json.RawMessage
}

// Fields decodes one JSON object into its members in order. Trailing data
// is an error.
func Fields(data []byte) ([]Field, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("malformed JSON: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("expected an object")
	}
	var out []Field
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("malformed JSON: %w", err)
		}
		key, ok := tok.(string)
		if !ok {
			return nil, errors.New("malformed JSON: object key is not a string")
		}
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, fmt.Errorf("malformed JSON: %w", err)
		}
		out = append(out, Field{Key: key, Val: val})
	}
	if _, err := dec.Token(); err != nil { // closing '}'
		return nil, fmt.Errorf("malformed JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("malformed JSON: data after the object")
	}
	return out, nil
}

// IsNull reports whether raw is the JSON literal null.
func IsNull(raw json.RawMessage) bool {
	return bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}
