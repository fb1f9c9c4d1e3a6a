package period

import (
	"testing"

	"github.com/quotagate/quotagate/backend/internal/depcheck"
)

// TestDependencies keeps period a leaf that the ledger's rules, both stores,
// the configuration and the admin API can all import: the standard library
// and nothing else — an allow-list, so a new import is a decision.
func TestDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	depcheck.StandardOnly(t, ".", "so that the ledger and the configuration can both import it")
	depcheck.ForbidImports(t, ".", map[string]string{
		"os":  "the calendar reads no environment or files: its zone and week start are given",
		"net": "the calendar does no I/O",
	})
}
