package ledger_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/ledger"
)

// TestAuditKindsAreEveryKind: AuditKinds lists every AuditKind constant the
// package declares, in file and declaration order — the order the
// dashboard's filter reads from the same source (frontend auditkinds.test.ts).
func TestAuditKindsAreEveryKind(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	decl := regexp.MustCompile(`(?m)^\s*(?:const\s+)?Audit\w+\s+AuditKind\s*=\s*"([a-z_]+)"`)
	var want []ledger.AuditKind
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range decl.FindAllStringSubmatch(string(src), -1) {
			want = append(want, ledger.AuditKind(m[1]))
		}
	}
	if len(want) == 0 || !slices.Equal(ledger.AuditKinds, want) {
		t.Fatalf("AuditKinds = %v, the declared kinds are %v", ledger.AuditKinds, want)
	}
}
