package live_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDeps keeps live an inner package (STYLE §2): it may know the ledger's
// nouns but no I/O adapters.
func TestDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/quotagate/quotagate/backend/live").Output()
	if err != nil {
		t.Skipf("go list unavailable: %v", err)
	}
	banned := map[string]string{
		"net/http":     "live must not serve HTTP: the admin package owns the WebSocket",
		"database/sql": "live must not touch storage: sqlite is an adapter",
	}
	for _, dep := range strings.Fields(string(out)) {
		if why, ok := banned[dep]; ok {
			t.Errorf("imports %s: %s", dep, why)
		}
	}
}
