package sqlite_test

import (
	"flag"
	"path/filepath"
	"testing"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/ledger/ledgertest"
	"github.com/quotagate/quotagate/backend/sqlite"
)

var keep = flag.Bool("keep", false, "print the path of each test ledger and keep it")

// MustOpenStore opens a real SQLite ledger in a temporary directory.
func MustOpenStore(tb testing.TB, opts sqlite.Options) *sqlite.Store {
	tb.Helper()
	dir := tb.TempDir()
	if *keep {
		var err error
		if dir, err = mkdirKeep(tb); err != nil {
			tb.Fatal(err)
		}
	}
	st, err := sqlite.Open(filepath.Join(dir, "ledger.db"), opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := st.Close(); err != nil {
			tb.Error(err)
		}
	})
	return st
}

func TestContract(t *testing.T) {
	ledgertest.Run(t, func(tb testing.TB) ledger.Store { return MustOpenStore(tb, sqlite.Options{}) })
}
