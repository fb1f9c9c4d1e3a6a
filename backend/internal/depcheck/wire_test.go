package depcheck

import (
	"os"
	"path/filepath"
	"testing"
)

// wirePackages are the wire-format packages, one per API protocol: each
// imports nothing of ours but backend/ledger (a package not written yet is
// skipped).
var wirePackages = []string{"openai", "responses", "anthropic"}

func TestWirePackagesImportOnlyLedger(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	for _, name := range wirePackages {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("..", "..", name)
			if _, err := os.Stat(dir); os.IsNotExist(err) {
				t.Skipf("backend/%s does not exist yet", name)
			}
			WireOnly(t, Module+"/backend/"+name)
		})
	}
}
