package admin_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// constantTrue matches a WebSocket CheckOrigin that accepts every origin —
// the root of most cross-site WebSocket hijacking advisories (RELIABILITY T24).
var constantTrue = regexp.MustCompile(`CheckOrigin\s*[:=]\s*func\s*\([^)]*\)\s*bool\s*\{\s*return\s+true\s*\}`)

// TestNoConstantCheckOrigin fails the build if any Go file in the module
// disables the Origin check.
func TestNoConstantCheckOrigin(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	root := strings.TrimSpace(string(out))
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == ".git") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "lint_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if constantTrue.Match(src) {
			t.Errorf("%s: CheckOrigin returns a constant true; use the admin Origin policy", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !constantTrue.MatchString("CheckOrigin: func(r *http.Request) bool { return true }") {
		t.Fatal("the pattern no longer matches the thing it forbids")
	}
}
