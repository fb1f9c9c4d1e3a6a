// Package depcheck keeps the arrows of STYLE.md §2 pointing inward: a test in
// an inner package lists what it must never import (Forbid), or everything
// it may import (Allow, AllowStandard), with the reason.
package depcheck

import (
	"os/exec"
	"strings"
	"testing"
)

// Module is quotagate's module path.
const Module = "github.com/quotagate/quotagate"

// Forbid fails t when pkg (an import path, or "." for the package under test)
// transitively imports any key of forbidden; the value says why it must not.
// A key ending in "/..." forbids the whole subtree.
func Forbid(t *testing.T, pkg string, forbidden map[string]string) {
	t.Helper()
	for _, dep := range deps(t, pkg) {
		for bad, why := range forbidden {
			if dep == bad || (strings.HasSuffix(bad, "/...") && strings.HasPrefix(dep, strings.TrimSuffix(bad, "..."))) {
				t.Errorf("%s imports %s: %s", pkg, dep, why)
			}
		}
	}
}

// ForbidImports fails t when pkg imports a key of forbidden directly (the
// standard library's I/O packages, say, which everything imports
// transitively); the value says why it must not.
func ForbidImports(t *testing.T, pkg string, forbidden map[string]string) {
	t.Helper()
	for _, imp := range imports(t, pkg) {
		if why, bad := forbidden[imp]; bad {
			t.Errorf("%s imports %s: %s", pkg, imp, why)
		}
	}
}

// deps lists what pkg imports transitively, without pkg itself (and
// without its tests' imports).
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	own := self(t, pkg)
	out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
	}
	var list []string
	for _, dep := range strings.Fields(string(out)) {
		if dep != own {
			list = append(list, dep)
		}
	}
	return list
}

// self is pkg's import path ("." resolved).
func self(t *testing.T, pkg string) string {
	t.Helper()
	out, err := exec.Command("go", "list", pkg).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", pkg, err)
	}
	return strings.TrimSpace(string(out))
}

// imports lists what pkg imports directly.
func imports(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{join .Imports \"\\n\"}}", pkg).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}
