package period

import (
	"os/exec"
	"strings"
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
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep != depcheck.Module+"/backend/period" {
			t.Errorf("period imports %s: it imports the standard library only, so that the ledger and the configuration can both import it", dep)
		}
	}
	depcheck.ForbidImports(t, ".", map[string]string{
		"os":  "the calendar reads no environment or files: its zone and week start are given",
		"net": "the calendar does no I/O",
	})
}
