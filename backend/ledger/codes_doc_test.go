package ledger_test

import (
	"os"
	"regexp"
	"testing"
)

// TestEveryCodeDocumented: each error code a response may carry is named
// in docs/api.md (its Errors section gives each its status).
func TestEveryCodeDocumented(t *testing.T) {
	src, err := os.ReadFile("error.go")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	codes := regexp.MustCompile(`(?m)^\s*Code\w+\s*=\s*"([a-z_]+)"`).FindAllSubmatch(src, -1)
	if len(codes) < 20 {
		t.Fatalf("only %d codes found in error.go", len(codes))
	}
	for _, c := range codes {
		if !regexp.MustCompile("`" + string(c[1]) + "`").Match(doc) {
			t.Errorf("the code %s is not in docs/api.md", c[1])
		}
	}
}
