package wire

import (
	"bytes"
	"encoding/json"
)

// Compact is raw without insignificant space, or raw itself when it is not
// JSON: the form a meter counts, so that a client's indentation costs it
// nothing.
func Compact(raw json.RawMessage) []byte {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

// CompactArray is each item's raw JSON, compacted, as one JSON array, or nil
// when there are no items: the tool definitions as a provider bills them as
// prompt.
func CompactArray[T any](items []T, raw func(T) json.RawMessage) []byte {
	if len(items) == 0 {
		return nil
	}
	raws := make([]json.RawMessage, len(items))
	for i, it := range items {
		raws[i] = Compact(raw(it))
	}
	b, _ := json.Marshal(raws)
	return b
}
