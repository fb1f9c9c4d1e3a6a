// Package depcheck keeps the arrows of STYLE.md §2 pointing inward: a test in
// an inner package lists what it must never import, with the reason.
package depcheck

import (
	"os/exec"
	"strings"
	"testing"
)

// Forbid fails t when pkg (an import path, or "." for the package under test)
// transitively imports any key of forbidden; the value says why it must not.
// A key ending in "/..." forbids the whole subtree.
func Forbid(t *testing.T, pkg string, forbidden map[string]string) {
	t.Helper()
	self, err := exec.Command("go", "list", pkg).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", pkg, err)
	}
	out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep == strings.TrimSpace(string(self)) {
			continue
		}
		for bad, why := range forbidden {
			if dep == bad || (strings.HasSuffix(bad, "/...") && strings.HasPrefix(dep, strings.TrimSuffix(bad, "..."))) {
				t.Errorf("%s imports %s: %s", pkg, dep, why)
			}
		}
	}
}
