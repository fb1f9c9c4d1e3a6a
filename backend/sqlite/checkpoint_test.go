package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/ledger/ledgertest"
	"github.com/quotagate/quotagate/backend/sqlite"
)

// verifyAt opens the ledger at path, verifies it with opts and closes it.
func verifyAt(t *testing.T, path string, opts ledger.VerifyOptions) []string {
	t.Helper()
	st, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	problems, err := st.VerifyWith(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return problems
}

func rawExec(t *testing.T, path, query string) {
	t.Helper()
	// The store stays open: its writer may be indexing audit text after a
	// commit, so the raw write waits for the lock as the store's own do.
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(query); err != nil {
		t.Fatal(err)
	}
}

func wantLine(t *testing.T, problems []string, want string) {
	t.Helper()
	for _, p := range problems {
		if strings.Contains(p, want) {
			return
		}
	}
	t.Fatalf("verify said %q, want a line containing %q", problems, want)
}

// TestCheckpoint runs the checkpoint suite of backend/ledger/ledgertest.
func TestCheckpoint(t *testing.T) {
	ledgertest.RunCheckpoint(t, func(t *testing.T) ledgertest.CheckpointLedger {
		path := filepath.Join(t.TempDir(), "ledger.db")
		st, err := sqlite.Open(path, sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return ledgertest.CheckpointLedger{Store: st,
			Verify: func(t *testing.T, opts ledger.VerifyOptions) ([]string, int64, int) {
				t.Helper()
				problems, resumed, replayed, err := sqlite.VerifyFrom(context.Background(), st, opts)
				if err != nil {
					t.Fatal(err)
				}
				return problems, resumed, replayed
			},
			Exec: func(t *testing.T, query string) { rawExec(t, path, query) }}
	})
}

// TestCheckpointThatDisagrees: a checkpoint edited behind the store's back
// is reported by the replay that starts from it, and by a full one.
func TestCheckpointThatDisagrees(t *testing.T) {
	path := tamperLedger(t)
	if p := verifyAt(t, path, ledger.VerifyOptions{Checkpoint: true}); len(p) > 0 {
		t.Fatalf("first verify: %q", p)
	}
	rawExec(t, path, `UPDATE verify_checkpoints SET chains = replace(chains, '"spent":7', '"spent":8')`)
	wantLine(t, verifyAt(t, path, ledger.VerifyOptions{}),
		"tenant t: spent 7 but its settle and reconcile audit rows add up to 8 (replayed from the checkpoint at seq")
	wantLine(t, verifyAt(t, path, ledger.VerifyOptions{Full: true}), "tenant t stood at available 51 spent 8")
}
