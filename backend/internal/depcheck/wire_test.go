package depcheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// wirePackages are the wire-format packages, one per API protocol; each
// keeps an allow-list deps test of its own (the standard library and
// backend/wire). Each must exist and must have that test: a renamed or
// moved one fails here rather than drop out of the rule.
var wirePackages = []string{"openai", "responses", "anthropic"}

func TestWirePackagesKeepAllowLists(t *testing.T) {
	for _, name := range wirePackages {
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("..", "..", name, "deps_test.go"))
			if err != nil {
				t.Fatalf("wire package backend/%s: %v", name, err)
			}
			if !strings.Contains(string(b), "depcheck.Allow(") || !strings.Contains(string(b), "depcheck.AllowStandard(") {
				t.Errorf("backend/%s/deps_test.go has no depcheck.Allow and AllowStandard: a wire package lists all it may import", name)
			}
		})
	}
}

// wire, shared by the wire packages, is standard library only.
func TestWireImportsNothingOfOurs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	for _, dep := range deps(t, Module+"/backend/wire") {
		if strings.HasPrefix(dep, Module) {
			t.Errorf("backend/wire imports %s: the wire packages' shared kit is standard library only", dep)
		}
	}
}
