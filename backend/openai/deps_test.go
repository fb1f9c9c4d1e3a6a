package openai

import (
	"testing"

	"github.com/quotagate/quotagate/backend/internal/depcheck"
)

// TestDependencies keeps openai a wire package: the chat-completions shapes
// and parsers, importing nothing of ours but ledger, with no I/O of its own.
func TestDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	depcheck.WireOnly(t, ".")
	depcheck.ForbidImports(t, ".", map[string]string{
		"net/http":     "a wire package does no network I/O: only upstream calls out",
		"net":          "a wire package does no network I/O",
		"os":           "a wire package reads only what it is handed",
		"os/exec":      "a wire package runs nothing",
		"database/sql": "storage is an adapter (sqlite)",
	})
}
