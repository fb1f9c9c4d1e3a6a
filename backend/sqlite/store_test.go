package sqlite_test

import (
	"context"
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

// TestIdempotencyKeySurvivesRestart: the key is in the ledger, so a retry
// after a restart (the run recovered interrupted, its hold kept) is still
// a duplicate of it.
func TestIdempotencyKeySurvivesRestart(t *testing.T) {
	path := filepath.Join(ledgerDir(t), "ledger.db")
	st, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ledgertest.MustApply(t, st, ledgertest.Tenant("a", 100, 4))
	req := ledger.AdmitRequest{RunID: "r1", TenantID: "a", Upstream: "demo", Model: "demo-model", ReserveUnits: 10, IdempotencyKey: "k"}
	ledgertest.MustAdmit(t, st, req)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st, err = sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if n, err := st.RecoverInterrupted(context.Background(), ledger.ActorRecovery); err != nil || n != 1 {
		t.Fatalf("recovered %d, %v", n, err)
	}
	req.RunID = "r2"
	_, err = st.Admit(context.Background(), req)
	ledgertest.WantCode(t, err, ledger.CodeDuplicateRequest)
	if ledger.ErrorRunID(err) != "r1" {
		t.Fatalf("refusal names %q", ledger.ErrorRunID(err))
	}
}

func TestPeriods(t *testing.T) {
	ledgertest.RunPeriods(t, func(tb testing.TB, now func() time.Time) ledger.Store {
		return MustOpenStore(tb, sqlite.Options{Now: now})
	})
}
