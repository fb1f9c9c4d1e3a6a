package responses_test

import (
	"testing"

	"github.com/quotagate/quotagate/backend/internal/depcheck"
)

// TestDependencies keeps responses a wire package: the Responses API shapes
// and parsers on the standard library and the wire kit, with no I/O of its
// own and nothing of quotagate's domain (translation to chat is
// backend/translate's).
func TestDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	depcheck.Allow(t, ".", map[string]string{
		depcheck.Module + "/backend/wire": "the strict object reader, the integer check and the member scanner every format shares",
	})
	depcheck.AllowStandard(t, ".", map[string]string{
		"bytes":         "byte-level parsing",
		"encoding/json": "the wire format is JSON",
		"fmt":           "error context",
		"strings":       "text assembly",
		"unicode/utf8":  "a body must be valid UTF-8",
	})
}
