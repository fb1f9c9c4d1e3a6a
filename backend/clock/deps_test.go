package clock

import (
	"os/exec"
	"strings"
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
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep != depcheck.Module+"/backend/clock" {
			t.Errorf("clock imports %s: it imports the standard library only, so that every package reading the time can import it", dep)
		}
	}
	depcheck.ForbidImports(t, ".", map[string]string{
		"os": "the environment is read by the caller (FromEnv takes os.LookupEnv), so tests need no process state",
	})
}
