package depcheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// wirePackages are the wire-format packages, one per API protocol: each
// imports nothing of ours but backend/ledger. Each must exist: a renamed or
// moved one fails here rather than drop out of the rule.
var wirePackages = []string{"openai", "responses", "anthropic"}

func TestWirePackagesImportOnlyLedger(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	for _, name := range wirePackages {
		t.Run(name, func(t *testing.T) {
			if _, err := os.Stat(filepath.Join("..", "..", name)); err != nil {
				t.Fatalf("wire package backend/%s: %v", name, err)
			}
			WireOnly(t, Module+"/backend/"+name)
		})
	}
}

// jsonobj, shared by the wire packages, is standard library only.
func TestJSONObjImportsNothingOfOurs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	for _, dep := range deps(t, Module+"/backend/internal/jsonobj") {
		if strings.HasPrefix(dep, Module) {
			t.Errorf("backend/internal/jsonobj imports %s: the wire packages' shared reader is standard library only", dep)
		}
	}
}
