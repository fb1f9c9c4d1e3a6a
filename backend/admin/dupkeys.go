package admin

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// duplicateKey returns the first object key that appears twice in the same
// JSON object of data ("" for none). encoding/json keeps the last of two
// equal keys silently, so {"units":1,"units":900} would reconcile at 900
// while a log or a proxy read 1: the admin API refuses such bodies.
func duplicateKey(data []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	key, err := dupValue(dec)
	return key, err
}

func dupValue(dec *json.Decoder) (string, error) {
	tok, err := dec.Token()
	if err != nil {
		return "", err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return "", nil
	}
	switch d {
	case '{':
		seen := map[string]bool{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return "", err
			}
			k, ok := kt.(string)
			if !ok {
				return "", fmt.Errorf("object key is not a string")
			}
			if seen[k] {
				return k, nil
			}
			seen[k] = true
			if dk, err := dupValue(dec); err != nil || dk != "" {
				return dk, err
			}
		}
	case '[':
		for dec.More() {
			if dk, err := dupValue(dec); err != nil || dk != "" {
				return dk, err
			}
		}
	}
	_, err = dec.Token() // the closing delimiter
	return "", err
}
