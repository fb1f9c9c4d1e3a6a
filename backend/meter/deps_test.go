package meter

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/internal/depcheck"
)

// TestDependencies keeps meter in ring 0 (STYLE.md §2): pure, stdlib plus
// the named tokenizer, no I/O of its own.
func TestDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-f", "{{join .Imports \"\\n\"}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	why := map[string]string{
		"net/http":     "meter does no network I/O: only upstream calls out",
		"net":          "meter does no network I/O",
		"os":           "meter reads only embedded files",
		"os/exec":      "meter runs nothing",
		"database/sql": "storage is an adapter (sqlite)",
	}
	for _, imp := range strings.Fields(string(out)) {
		if r, bad := why[imp]; bad {
			t.Errorf("meter imports %s: %s", imp, r)
		}
		if strings.HasPrefix(imp, "github.com/quotagate/quotagate/") && imp != "github.com/quotagate/quotagate/backend/ledger" {
			t.Errorf("meter imports %s: ring 0 depends only on ledger", imp)
		}
	}
	// Transitively: tiktoken-go links net/http for its default loader (never
	// used: New installs the offline loader), so only these are forbidden.
	depcheck.Forbid(t, ".", map[string]string{
		"database/sql":                                        "storage is an adapter (sqlite)",
		"github.com/wailsapp/wails/v2/...":                    "only app imports Wails",
		"modernc.org/sqlite":                                  "storage is an adapter (sqlite)",
		"github.com/quotagate/quotagate/backend/gateway/...":  "ring 0 does not know the gateway",
		"github.com/quotagate/quotagate/backend/upstream/...": "ring 0 does not know upstreams",
	})
}
