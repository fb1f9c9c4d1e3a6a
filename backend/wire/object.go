package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Field is one object member: its key as written and its raw value.
type Field struct {
	Key string
	Val json.RawMessage
}

// Fields splits one JSON object into its members in order, duplicate and
// differently-cased keys included. Trailing data is an error. A valid
// object is scanned without decoding or copying its values (a 600 KB
// conversation otherwise took three json.Decoder passes, each copying every
// message); anything else goes to encoding/json, whose error says what is
// malformed.
func Fields(data []byte) ([]Field, error) {
	if Valid(data) {
		if out, ok := ScanObject(data); ok {
			return out, nil
		}
	}
	return decodeFields(data)
}

// decodeFields is Fields by encoding/json's decoder.
func decodeFields(data []byte) ([]Field, error) {
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

// Items splits one JSON array into its raw elements.
func Items(data []byte) ([]json.RawMessage, error) {
	d := bytes.TrimSpace(data)
	if len(d) == 0 || d[0] != '[' {
		return nil, errors.New("expected an array")
	}
	if Valid(d) {
		if out, ok := ScanArray(d); ok {
			return out, nil
		}
	}
	var items []json.RawMessage
	if err := json.Unmarshal(d, &items); err != nil {
		return nil, fmt.Errorf("malformed JSON: %w", err)
	}
	return items, nil
}

// Get is the value of the member key, unless it is absent or null.
func Get(fields []Field, key string) (json.RawMessage, bool) {
	for _, f := range fields {
		if f.Key == key && !IsNull(f.Val) {
			return f.Val, true
		}
	}
	return nil, false
}

// IsNull reports whether raw is the JSON literal null.
func IsNull(raw json.RawMessage) bool {
	return bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

// IsObject reports whether raw starts as a JSON object.
func IsObject(raw json.RawMessage) bool {
	d := bytes.TrimSpace(raw)
	return len(d) > 0 && d[0] == '{'
}

// FoldKey is the form under which encoding/json — and so any upstream
// written in Go — matches a member name to a field: case-insensitively,
// with Unicode folding ("ſ" is "s", the Kelvin sign "K" is "k").
func FoldKey(k string) string { return strings.ToLower(strings.ToUpper(k)) }

// Array reads data as a JSON array, each element with read, which is given
// the element's index to name it in a refusal; notArray is the refusal when
// data is not an array. The first element read refuses ends it.
func Array[T any](data []byte, notArray string, read func(i int, item json.RawMessage) (T, error)) ([]T, error) {
	items, err := Items(data)
	if err != nil {
		return nil, Invalidf("%s", notArray)
	}
	out := make([]T, 0, len(items))
	for i, item := range items {
		v, err := read(i, item)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// Elements is Array for an element reader whose refusals do not say where
// they happened: Elements names the place, "name[i]: reason".
func Elements[T any](data []byte, name, notArray string, read func(item json.RawMessage) (T, error)) ([]T, error) {
	return Array(data, notArray, func(i int, item json.RawMessage) (T, error) {
		v, err := read(item)
		if err != nil {
			return v, Invalidf("%s[%d]: %s", name, i, Reason(err))
		}
		return v, nil
	})
}
