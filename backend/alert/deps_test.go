package alert

import (
	"os/exec"
	"strings"
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
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep != depcheck.Module+"/backend/alert" {
			t.Errorf("alert imports %s: it imports the standard library only, so that the configuration and the stores can both import it", dep)
		}
	}
	depcheck.ForbidImports(t, ".", map[string]string{
		"net/http":     "alert only encodes and checks: only upstream makes outbound HTTP calls, and the delivering loop sends",
		"net":          "a webhook host is checked as written, never resolved",
		"os":           "alert reads no environment or files",
		"database/sql": "the outbox is the stores' (sqlite, postgres)",
	})
}
