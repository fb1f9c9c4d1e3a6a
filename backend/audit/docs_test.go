package audit_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/audit"
)

// TestHeaderDocumented: docs/dashboard.md names the CSV's columns, in the
// export's order.
func TestHeaderDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/dashboard.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(doc), "Its columns, in this order:")
	if !ok {
		t.Fatal(`docs/dashboard.md has no "Its columns, in this order:"`)
	}
	para, _, _ := strings.Cut(after, "\n\n")
	// The columns are the paragraph's backticked words that are column names
	// (it also quotes an endpoint).
	var named []string
	for _, m := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(para, -1) {
		if slices.Contains(audit.Header, m[1]) && !slices.Contains(named, m[1]) {
			named = append(named, m[1])
		}
	}
	if !slices.Equal(named, audit.Header) {
		t.Fatalf("docs name the columns %v, the export writes %v", named, audit.Header)
	}
}
