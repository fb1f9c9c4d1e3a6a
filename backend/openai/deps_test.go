package openai

import (
	"testing"

	"github.com/quotagate/quotagate/backend/internal/depcheck"
)

// TestDependencies keeps openai a wire package: the chat-completions shapes
// and parsers on the standard library and the wire kit, with no I/O of its
// own (no net, no os) and nothing of quotagate's domain.
func TestDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	depcheck.Allow(t, ".", map[string]string{
		depcheck.Module + "/backend/wire": "the strict object reader, the integer check and the member scanner every format shares",
	})
	depcheck.AllowStandard(t, ".", map[string]string{
		"bufio":         "SSE framing reads what it is handed",
		"bytes":         "byte-level parsing",
		"encoding/json": "the wire format is JSON",
		"errors":        "ErrBadUsage and the reader's errors",
		"fmt":           "error context",
		"io":            "SSEReader reads an io.Reader it is handed",
		"strings":       "text assembly",
		"sync":          "SSEReader pools its buffers",
		"unicode/utf8":  "the chunk scan takes valid UTF-8 only",
	})
}
