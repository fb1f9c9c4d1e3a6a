package alert

import (
	"testing"

	"github.com/quotagate/quotagate/backend/internal/depcheck"
)

// TestDependencies keeps alert a leaf that the configuration, both stores
// and the delivering loop can import: the standard library and nothing
// else — an allow-list, so a new import is a decision.
func TestDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	depcheck.StandardOnly(t, ".", "so that the configuration and the stores can both import it")
	depcheck.ForbidImports(t, ".", map[string]string{
		"net/http":     "alert only encodes and checks: only upstream makes outbound HTTP calls, and the delivering loop sends",
		"net":          "a webhook host is checked as written, never resolved",
		"os":           "alert reads no environment or files",
		"database/sql": "the outbox is the stores' (sqlite, postgres)",
	})
}
