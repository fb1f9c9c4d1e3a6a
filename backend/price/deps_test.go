package price

import (
	"testing"

	"github.com/quotagate/quotagate/backend/internal/depcheck"
)

// TestDependencies keeps price a leaf that every part of quotagate may use
// (the ledger, the doors, the configuration): it imports the standard
// library and nothing else — an allow-list, so a new import is a decision.
func TestDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	depcheck.StandardOnly(t, ".", "so that the ledger, doors and configuration can all import it")
	depcheck.ForbidImports(t, ".", map[string]string{
		"net/http":     "pricing does no network I/O: a new table comes by `quotagate prices update`",
		"net":          "pricing does no network I/O",
		"os/exec":      "pricing runs nothing",
		"database/sql": "storage is an adapter (sqlite, postgres)",
	})
}
