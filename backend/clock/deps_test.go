package clock

import (
	"testing"

	"github.com/quotagate/quotagate/backend/internal/depcheck"
)

// TestDependencies keeps clock a leaf: every part of the gateway that reads
// the time takes its Now, so it imports the standard library and nothing
// else — an allow-list, so a new import is a decision.
func TestDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	depcheck.StandardOnly(t, ".", "so that every package reading the time can import it")
	depcheck.ForbidImports(t, ".", map[string]string{
		"os": "the environment is read by the caller (FromEnv takes os.LookupEnv), so tests need no process state",
	})
}
