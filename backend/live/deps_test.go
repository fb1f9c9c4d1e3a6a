package live_test

import (
	"testing"

	"github.com/quotagate/quotagate/backend/internal/depcheck"
)

// TestDeps keeps live an inner package (STYLE §2).
func TestDeps(t *testing.T) {
	depcheck.Forbid(t, ".", map[string]string{
		"net/http":     "live must not serve HTTP: the admin package owns the WebSocket",
		"database/sql": "live must not touch storage: sqlite is an adapter",
	})
}
