package anthropic_test

import (
	"testing"

	"github.com/quotagate/quotagate/backend/internal/depcheck"
)

// TestDependencies keeps anthropic pure: the Messages wire format and
// nothing else, on ledger's types only (issue 11).
func TestDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	depcheck.Forbid(t, ".", map[string]string{
		"net/http":     "anthropic does no I/O: the gateway's door does",
		"net":          "anthropic does no I/O",
		"database/sql": "storage is an adapter (sqlite)",
		"github.com/quotagate/quotagate/backend/meter":        "anthropic counts segments with the door's meter, passed in as a func",
		"github.com/quotagate/quotagate/backend/openai":       "each wire format stands alone",
		"github.com/quotagate/quotagate/backend/gateway/...":  "the door uses anthropic, not the reverse",
		"github.com/quotagate/quotagate/backend/upstream/...": "anthropic does no I/O",
	})
}
