package ledger_test

import (
	"testing"

	"github.com/quotagate/quotagate/backend/internal/depcheck"
)

func TestDependencies(t *testing.T) {
	depcheck.Forbid(t, ".", map[string]string{
		"database/sql": "storage is an adapter (backend/sqlite); the domain must not know it",
		"net/http":     "the ledger is the domain; HTTP belongs to gateway and admin",
		"github.com/quotagate/quotagate/backend/...": "ledger is the innermost package; others import it, never the reverse",
	})
}
