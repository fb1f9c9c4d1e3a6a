package sqlite_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/ledger/ledgertest"
	"github.com/quotagate/quotagate/backend/sqlite"
)

// waitQueued polls until n writes wait for the writer.
func waitQueued(t *testing.T, st *sqlite.Store, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for st.Queued() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d writes queued, want %d", st.Queued(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestGroupCommitIsolatesOps lines up one batch in which some writes are
// refused: the refusals (and their audit rows) must not undo the others, and
// the whole batch must cost one transaction.
func TestGroupCommitIsolatesOps(t *testing.T) {
	ctx := context.Background()
	st := MustOpenStore(t, sqlite.Options{})
	ledgertest.MustApply(t, st, ledgertest.Tenant("t", 100, 3))
	ledgertest.MustAdmit(t, st, ledger.AdmitRequest{RunID: "held", TenantID: "t", ReserveUnits: 10})
	if _, err := st.KeepHold(ctx, "held", ledger.RunInterrupted, "cut", ledger.System("test")); err != nil {
		t.Fatal(err)
	}
	release := st.BlockWriter()
	before := st.Stats()

	type result struct {
		name string
		err  error
	}
	results := make(chan result)
	ops := []struct {
		name string
		code string
		fn   func() error
	}{
		{"admit a", "", func() error { _, err := st.Admit(ctx, req("a", 30)); return err }},
		{"admit a again", ledger.CodeConflict, func() error { _, err := st.Admit(ctx, req("a", 30)); return err }},
		{"admit too big", ledger.CodeInsufficientBudget, func() error { _, err := st.Admit(ctx, req("big", 91)); return err }},
		{"reconcile over reserve", ledger.CodeInvalidRequest, func() error { _, err := st.Reconcile(ctx, "held", 11, "bill", ledger.ActorAdmin); return err }},
		{"reconcile", "", func() error { _, err := st.Reconcile(ctx, "held", 4, "bill", ledger.ActorAdmin); return err }},
		{"reconcile again", ledger.CodeNotHeld, func() error { _, err := st.Reconcile(ctx, "held", 4, "bill", ledger.ActorAdmin); return err }},
		{"admit b", "", func() error { _, err := st.Admit(ctx, req("b", 20)); return err }},
	}
	for i, op := range ops {
		go func() { results <- result{op.name, op.fn()} }()
		waitQueued(t, st, i+1) // keeps the batch in this order
	}
	release()
	got := map[string]error{}
	for range ops {
		r := <-results
		got[r.name] = r.err
	}
	for _, op := range ops {
		if code := ledger.ErrorCode(got[op.name]); code != op.code {
			t.Errorf("%s: code %q (%v), want %q", op.name, code, got[op.name], op.code)
		}
	}
	// The blocking write and the seven queued ones: at most two transactions.
	if s := st.Stats(); s.Batches-before.Batches > 2 || s.Writes-before.Writes != int64(len(ops))+1 {
		t.Fatalf("stats went from %+v to %+v: the queued writes were not grouped", before, s)
	}
	ledgertest.WantBalance(t, st, ledger.Balance{TenantID: "t", BudgetUnits: 100, SpentUnits: 4, HeldUnits: 50, AvailableUnits: 46, Active: 2})
	rejects := 0
	for _, e := range mustAudit(t, st) {
		if e.Kind == ledger.AuditReject {
			rejects++
		}
	}
	if rejects != 2 {
		t.Fatalf("%d reject audit rows, want 2 (conflict, insufficient_budget)", rejects)
	}
	ledgertest.WantVerified(t, st)
}

// TestCancelledCallerIsNotApplied: a write whose caller gave up before the
// writer reached it is not applied, so the caller's error is the truth.
func TestCancelledCallerIsNotApplied(t *testing.T) {
	st := MustOpenStore(t, sqlite.Options{})
	ledgertest.MustApply(t, st, ledgertest.Tenant("t", 100, 3))
	release := st.BlockWriter()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { _, err := st.Admit(ctx, req("gone", 10)); done <- err }()
	waitQueued(t, st, 1)
	cancel()
	release()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("admit after cancel: %v", err)
	}
	_, err := st.Run(context.Background(), "gone")
	ledgertest.WantCode(t, err, ledger.CodeRunNotFound)
	ledgertest.WantBalance(t, st, ledger.Balance{TenantID: "t", BudgetUnits: 100, AvailableUnits: 100})
}

func req(id ledger.RunID, reserve ledger.Units) ledger.AdmitRequest {
	return ledger.AdmitRequest{RunID: id, TenantID: "t", Upstream: "demo", Model: "demo-model", ReserveUnits: reserve, Actor: ledger.System("test")}
}

func mustAudit(t *testing.T, st ledger.Store) []ledger.AuditEntry {
	t.Helper()
	rows, err := st.Audit(context.Background(), ledger.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}
