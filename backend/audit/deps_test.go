package audit_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDeps keeps audit an inner package (STYLE §2).
func TestDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/quotagate/quotagate/backend/audit").Output()
	if err != nil {
		t.Skipf("go list unavailable: %v", err)
	}
	banned := map[string]string{
		"net/http":     "audit writes to an io.Writer; HTTP belongs to admin",
		"database/sql": "audit reads through ledger.Store; storage is an adapter",
	}
	for _, dep := range strings.Fields(string(out)) {
		if why, ok := banned[dep]; ok {
			t.Errorf("imports %s: %s", dep, why)
		}
	}
}
