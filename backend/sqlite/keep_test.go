package sqlite_test

import (
	"os"
	"strings"
	"testing"
)

func mkdirKeep(tb testing.TB) (string, error) {
	dir, err := os.MkdirTemp("", "quotagate-"+strings.NewReplacer("/", "_", " ", "_").Replace(tb.Name())+"-")
	if err == nil {
		tb.Logf("ledger kept in %s", dir)
	}
	return dir, err
}
