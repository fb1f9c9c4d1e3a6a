package anthropic_test

import (
	"testing"

	"github.com/quotagate/quotagate/backend/internal/depcheck"
)

// TestDependencies keeps anthropic a wire package: the Messages API shapes
// and parsers on the standard library and the wire kit, with no I/O of its
// own and nothing of quotagate's domain (translation to chat, and which
// Anthropic error type each of quotagate's codes is, are backend/translate's).
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
		"errors":        "ErrBadUsage",
		"fmt":           "error context",
		"strings":       "text assembly",
	})
}
