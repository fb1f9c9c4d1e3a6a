package meter

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/internal/depcheck"
)

// TestDependencies keeps meter in ring 0 (STYLE.md §2): pure, stdlib plus
// the named tokenizer, no I/O of its own, and no wire protocol: a door
// turns its protocol into meter.Request and Observations.
func TestDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	depcheck.ForbidImports(t, ".", map[string]string{
		"net/http":     "meter does no network I/O: only upstream calls out",
		"net":          "meter does no network I/O",
		"os":           "meter reads only embedded files",
		"os/exec":      "meter runs nothing",
		"database/sql": "storage is an adapter (sqlite)",
	})
	out, err := exec.Command("go", "list", "-f", "{{join .Imports \"\\n\"}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, imp := range strings.Fields(string(out)) {
		if strings.HasPrefix(imp, depcheck.Module+"/") && imp != depcheck.Module+"/backend/ledger" {
			t.Errorf("meter imports %s: ring 0 depends only on ledger", imp)
		}
	}
	// Transitively too: the meter counts with its own copy of the BPE ranks
	// (bpe.go), so tiktoken-go, whose default loader downloads over
	// net/http, is linked only into the tests that hold counts to it.
	depcheck.Forbid(t, ".", map[string]string{
		"net/http":                         "meter does no network I/O",
		"github.com/pkoukk/tiktoken-go":    "the library is the tests' reference; counting uses bpe.go",
		"database/sql":                     "storage is an adapter (sqlite)",
		"github.com/wailsapp/wails/v2/...": "only app imports Wails",
		"modernc.org/sqlite":               "storage is an adapter (sqlite)",
		"github.com/quotagate/quotagate/backend/gateway/...":  "ring 0 does not know the gateway",
		"github.com/quotagate/quotagate/backend/upstream/...": "ring 0 does not know upstreams",
		"github.com/quotagate/quotagate/backend/openai":       "metering knows no wire protocol: a door translates",
		"github.com/quotagate/quotagate/backend/responses":    "metering knows no wire protocol: a door translates",
		"github.com/quotagate/quotagate/backend/anthropic":    "metering knows no wire protocol: a door translates",
	})
}
