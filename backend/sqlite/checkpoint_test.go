package sqlite_test

import (
	"context"
	"database/sql"
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
	raw, err := sql.Open("sqlite", path)
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

// TestCheckpointReplaysOnlyWhatCameAfter: a clean verify leaves a
// checkpoint; the next starts from it and still finds a difference in what
// came after; a full replay agrees with the checkpoint.
func TestCheckpointReplaysOnlyWhatCameAfter(t *testing.T) {
	path := tamperLedger(t)
	if p := verifyAt(t, path, ledger.VerifyOptions{Checkpoint: true}); len(p) > 0 {
		t.Fatalf("first verify: %q", p)
	}
	st, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ledgertest.MustAdmit(t, st, ledger.AdmitRequest{RunID: "later", TenantID: "t", ReserveUnits: 5})
	if _, err := st.Settle(context.Background(), "later", 3, "usage", ledger.System("test")); err != nil {
		t.Fatal(err)
	}
	st.Close()
	for _, opts := range []ledger.VerifyOptions{{}, {Full: true}} {
		if p := verifyAt(t, path, opts); len(p) > 0 {
			t.Fatalf("verify %+v after the checkpoint: %q", opts, p)
		}
	}
	rawExec(t, path, `UPDATE runs SET spent_units = 2 WHERE id = 'later'`)
	wantLine(t, verifyAt(t, path, ledger.VerifyOptions{}), "run later: usage trusted, spent 2, but 1 settle/reconcile audit rows (units 3)")
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

// TestCheckpointNotWrittenWhenDirty: a verify that found a difference
// leaves the last checkpoint as it was.
func TestCheckpointNotWrittenWhenDirty(t *testing.T) {
	path := tamperLedger(t)
	rawExec(t, path, `UPDATE quota_days SET usage_units = usage_units + 5`)
	if p := verifyAt(t, path, ledger.VerifyOptions{Checkpoint: true}); len(p) == 0 {
		t.Fatal("verify of a tampered ledger found nothing")
	}
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var n int
	if err := raw.QueryRow(`SELECT count(*) FROM verify_checkpoints`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d checkpoints (%v), want none", n, err)
	}
}
