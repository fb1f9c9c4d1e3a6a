package audit_test

import (
	"testing"

	"github.com/quotagate/quotagate/backend/internal/depcheck"
)

// TestDeps keeps audit an inner package (STYLE §2).
func TestDeps(t *testing.T) {
	depcheck.Forbid(t, ".", map[string]string{
		"net/http":     "audit writes to an io.Writer; HTTP belongs to admin",
		"database/sql": "audit reads through ledger.Store; storage is an adapter",
	})
}
