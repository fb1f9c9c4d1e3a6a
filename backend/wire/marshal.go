package wire

import (
	"bytes"
	"encoding/json"
)

// Marshal is v as the providers write JSON: HTML characters as they are
// (json.Marshal would write <, > and & as \u003c, \u003e and \u0026) and no
// trailing newline.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}
