package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// MaxCount bounds every count a body gives (an output cap, a usage figure):
// 2^53 − 1, the ledger's MaxUnits, so that a count stays exact as a JSON
// number in any reader and sums of counts stay far from overflow. A test
// in backend/translate holds the two equal.
const MaxCount = 1<<53 - 1

// Count reads a JSON integer in [0, MaxCount]. Fractions, exponents,
// strings and negatives are refused rather than rounded: a count that
// needs interpreting is neither a valid cap nor evidence.
func Count(raw json.RawMessage) (int64, error) {
	s := string(bytes.TrimSpace(raw))
	switch {
	case s == "":
		return 0, errors.New("empty")
	case s[0] == '-':
		return 0, fmt.Errorf("negative number %s", s)
	case strings.ContainsAny(s, ".eE"):
		return 0, fmt.Errorf("not an integer: %.40s", s)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("not a number: %.40s", s)
		}
	}
	if len(s) > 1 && s[0] == '0' {
		return 0, fmt.Errorf("not a JSON number: %s", s)
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v > MaxCount {
		return 0, fmt.Errorf("too large: %.40s (at most %d)", s, int64(MaxCount))
	}
	return v, nil
}
