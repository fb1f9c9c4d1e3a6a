package ledgertest

import (
	"context"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/ledger"
)

// CheckpointLedger is a store whose verify keeps a checkpoint, as the
// checkpoint tests drive it.
type CheckpointLedger struct {
	Store ledger.Store
	// Verify verifies with opts: what it found, the seq its replay started
	// after (0: the first row) and how many audit rows it replayed.
	Verify func(t *testing.T, opts ledger.VerifyOptions) (problems []string, resumed int64, replayed int)
	// Exec runs a statement on the ledger behind the store's back (the
	// same text on either store).
	Exec func(t *testing.T, query string)
}

// RunCheckpoint checks verify's checkpoint on TamperBooks in a fresh
// ledger from open: the replay after it reads only what came after and
// still finds a difference there; a dirty verify leaves none; a run
// edited below it is found by a full replay.
func RunCheckpoint(t *testing.T, open func(t *testing.T) CheckpointLedger) {
	start := func(t *testing.T) CheckpointLedger {
		l := open(t)
		TamperBooks(t, l.Store)
		return l
	}
	t.Run("ReplaysOnlyWhatCameAfter", func(t *testing.T) {
		l := start(t)
		if _, resumed, replayed := l.clean(t, ledger.VerifyOptions{Checkpoint: true}); resumed != 0 || replayed == 0 {
			t.Fatalf("first verify started after %d and replayed %d rows, want every row", resumed, replayed)
		}
		MustAdmit(t, l.Store, ledger.AdmitRequest{RunID: "later", TenantID: "t", ReserveUnits: 5})
		if _, err := l.Store.Settle(context.Background(), "later", 3, "usage", ledger.System("test")); err != nil {
			t.Fatal(err)
		}
		if _, resumed, replayed := l.clean(t, ledger.VerifyOptions{}); resumed == 0 || replayed != 2 {
			t.Fatalf("verify after the checkpoint started after %d and replayed %d rows, want the checkpoint and the 2 rows of run later",
				resumed, replayed)
		}
		l.clean(t, ledger.VerifyOptions{Full: true})
		l.Exec(t, `UPDATE runs SET spent_units = 2 WHERE id = 'later'`)
		l.wantLine(t, ledger.VerifyOptions{}, "run later: usage trusted, spent 2, but 1 settle/reconcile audit rows (units 3)")
	})
	t.Run("NotWrittenWhenDirty", func(t *testing.T) {
		l := start(t)
		l.Exec(t, `UPDATE quota_days SET usage_units = usage_units + 5`)
		if problems, _, _ := l.Verify(t, ledger.VerifyOptions{Checkpoint: true}); len(problems) == 0 {
			t.Fatal("verify of a tampered ledger found nothing")
		}
		l.Exec(t, `UPDATE quota_days SET usage_units = usage_units - 5`)
		if _, resumed, _ := l.clean(t, ledger.VerifyOptions{}); resumed != 0 {
			t.Fatalf("verify started from a checkpoint at %d that a dirty verify wrote", resumed)
		}
	})
	t.Run("RunEditedBelowIt", func(t *testing.T) {
		// The checkpoint vouches for the runs that had ended by then: only
		// a full replay reads them again.
		l := start(t)
		l.clean(t, ledger.VerifyOptions{Checkpoint: true})
		l.Exec(t, `UPDATE runs SET spent_units = 6, cost_micros = 12 WHERE id = 'settled'`)
		l.clean(t, ledger.VerifyOptions{})
		l.wantLine(t, ledger.VerifyOptions{Full: true}, "tenant t: spent 7 but its runs spent 6")
	})
}

func (l CheckpointLedger) clean(t *testing.T, opts ledger.VerifyOptions) ([]string, int64, int) {
	t.Helper()
	problems, resumed, replayed := l.Verify(t, opts)
	if len(problems) > 0 {
		t.Fatalf("verify %+v: %q", opts, problems)
	}
	return problems, resumed, replayed
}

func (l CheckpointLedger) wantLine(t *testing.T, opts ledger.VerifyOptions, want string) {
	t.Helper()
	problems, _, _ := l.Verify(t, opts)
	for _, p := range problems {
		if strings.Contains(p, want) {
			return
		}
	}
	t.Fatalf("verify %+v said %q, want a line containing %q", opts, problems, want)
}
