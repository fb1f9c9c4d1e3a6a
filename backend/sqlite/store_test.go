package sqlite_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/ledger/ledgertest"
	"github.com/quotagate/quotagate/backend/sqlite"
)

var keep = flag.Bool("keep", false, "print the path of each test ledger and keep it")

// MustOpenStore opens a real SQLite ledger in a temporary directory and
// closes it when the test ends.
func MustOpenStore(tb testing.TB, opts sqlite.Options) *sqlite.Store {
	tb.Helper()
	st := MustOpenStoreNoCleanup(tb, opts)
	tb.Cleanup(func() {
		if err := st.Close(); err != nil {
			tb.Error(err)
		}
	})
	return st
}

// MustOpenStoreNoCleanup opens a ledger whose Close is the caller's job.
func MustOpenStoreNoCleanup(tb testing.TB, opts sqlite.Options) *sqlite.Store {
	tb.Helper()
	st, err := sqlite.Open(filepath.Join(ledgerDir(tb), "ledger.db"), opts)
	if err != nil {
		tb.Fatal(err)
	}
	return st
}

// ledgerDir is the test's temporary directory or, with -keep, one that
// outlives the test and whose path is logged.
func ledgerDir(tb testing.TB) string {
	tb.Helper()
	if !*keep {
		return tb.TempDir()
	}
	dir, err := os.MkdirTemp("", "quotagate-"+strings.NewReplacer("/", "_", " ", "_").Replace(tb.Name())+"-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Logf("ledger kept in %s", dir)
	return dir
}

func TestContract(t *testing.T) {
	ledgertest.Run(t, func(tb testing.TB) ledger.Store { return MustOpenStore(tb, sqlite.Options{}) })
}

func TestIdempotencyWindow(t *testing.T) {
	ledgertest.RunIdempotencyWindow(t, func(tb testing.TB, now func() time.Time) ledger.Store {
		return MustOpenStore(tb, sqlite.Options{Now: now})
	})
}
