package ledgertest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
)

// SpendRollup is the spend chart's rollup a store keeps (ledger.SpendHour).
type SpendRollup interface {
	SpendHours(ctx context.Context, from, to time.Time) ([]ledger.SpendHour, error)
	SpendHoursFromRuns(ctx context.Context, from, to time.Time) ([]ledger.SpendHour, error)
}

// RunBooks is the contract of the dashboard's paged reads: the audit log
// by actor (its rows a superset that AuditMatches narrows to the actor's
// exactly), by text likewise; runs and holds paged below a run cursor,
// which an unknown run refuses with CodeRunNotFound; and the spend rollup,
// equal to its recomputation from runs after settlements and a reconcile.
func RunBooks(t *testing.T, open Opener) {
	t.Run("AuditByActorAndText", func(t *testing.T) { testAuditByActor(t, open(t)) })
	t.Run("RunsBelowCursor", func(t *testing.T) { testRunsBelowCursor(t, open(t)) })
	t.Run("SpendRollup", func(t *testing.T) { testSpendRollup(t, open(t)) })
}

func testAuditByActor(t *testing.T, st ledger.Store) {
	ctx := context.Background()
	MustApply(t, st, Tenant("a", 1000, 10), Tenant("b", 1000, 10))
	for i := range 3 {
		for _, tenant := range []string{"a", "b"} {
			id := ledger.RunID(fmt.Sprintf("%s-run-%d", tenant, i))
			MustAdmit(t, st, admitReq(id, tenant, 10))
			reason := "usage Needle"
			if i == 2 && tenant == "b" {
				reason = `usage 内存膨胀 "q*" NEEDLE`
			}
			if _, err := st.Settle(ctx, id, 4, reason, ledger.TenantActor(tenant)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := st.Reconcile(ctx, "missing", 1, "x", ledger.ActorAdmin); err == nil {
		t.Fatal("reconcile of a missing run succeeded")
	}
	for _, f := range []ledger.AuditFilter{
		{Actor: ledger.TenantActor("a")},
		{Actor: ledger.ActorConfig},
		{Actor: ledger.TenantActor("b"), Kind: ledger.AuditSettle},
		{Text: "needle"},
		{Text: "B-RUN-1"},
		{Text: "ab"},
		{Text: "内存膨胀"},
		{Text: `"q*"`},
		{Text: "needle", TenantID: "b"},
		{Text: "run-1", Kind: ledger.AuditSettle},
		{Actor: ledger.ActorAdmin},
	} {
		all, err := st.Audit(ctx, ledger.AuditFilter{})
		if err != nil {
			t.Fatal(err)
		}
		var want []int64
		for _, e := range all {
			if ledger.AuditMatches(f, e) {
				want = append(want, e.Seq)
			}
		}
		for _, newest := range []bool{false, true} {
			f.Newest = newest
			rows, err := st.Audit(ctx, f)
			if err != nil {
				t.Fatalf("%+v: %v", f, err)
			}
			var got []int64
			for _, e := range rows {
				if ledger.AuditMatches(f, e) {
					got = append(got, e.Seq)
				}
			}
			if newest {
				slices.Reverse(got)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%+v: seqs %v, want %v", f, got, want)
			}
		}
		if paged := auditPaged(t, st, f); !slices.Equal(paged, want) {
			t.Errorf("%+v two rows a page, newest first: seqs %v, want %v", f, paged, want)
		}
	}
}

// auditPaged reads f's rows newest first two at a time below the last
// row read, as the dashboard pages, and returns the seqs that match,
// oldest first.
func auditPaged(t *testing.T, st ledger.Store, f ledger.AuditFilter) []int64 {
	t.Helper()
	f.Newest, f.Limit, f.BeforeSeq = true, 2, 0
	var got []int64
	for {
		rows, err := st.Audit(context.Background(), f)
		if err != nil {
			t.Fatalf("%+v: %v", f, err)
		}
		if len(rows) == 0 {
			slices.Reverse(got)
			return got
		}
		for _, e := range rows {
			if ledger.AuditMatches(f, e) {
				got = append(got, e.Seq)
			}
		}
		f.BeforeSeq = rows[len(rows)-1].Seq
	}
}

func admitReq(id ledger.RunID, tenant string, reserve ledger.Units) ledger.AdmitRequest {
	return ledger.AdmitRequest{RunID: id, TenantID: tenant, Upstream: "demo", Model: "demo-model",
		ReserveUnits: reserve, Actor: ledger.TenantActor(tenant)}
}

func testRunsBelowCursor(t *testing.T, st ledger.Store) {
	ctx := context.Background()
	MustApply(t, st, Tenant("a", 1000, 100), Tenant("b", 1000, 100))
	for i := range 7 {
		tenant := []string{"a", "b"}[i%2]
		id := ledger.RunID(fmt.Sprint("r", i))
		MustAdmit(t, st, admitReq(id, tenant, 10))
		if i%3 == 0 {
			if _, err := st.Settle(ctx, id, 1, "usage", ledger.TenantActor(tenant)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, f := range []ledger.RunFilter{{}, {TenantID: "a"}, {HoldingOnly: true}} {
		f.Limit = 100
		all, err := st.Runs(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var paged []ledger.RunID
		page := f
		page.Limit = 2
		for {
			runs, err := st.Runs(ctx, page)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range runs {
				paged = append(paged, r.ID)
			}
			if len(runs) < page.Limit {
				break
			}
			page.Before = runs[len(runs)-1].ID
		}
		var want []ledger.RunID
		for _, r := range all {
			want = append(want, r.ID)
		}
		if !slices.Equal(paged, want) {
			t.Errorf("%+v paged %v, want %v", f, paged, want)
		}
	}
	_, err := st.Runs(ctx, ledger.RunFilter{Before: "nope"})
	if ledger.ErrorCode(err) != ledger.CodeRunNotFound {
		t.Errorf("a cursor naming no run: %v, want %s", err, ledger.CodeRunNotFound)
	}
}

func testSpendRollup(t *testing.T, st ledger.Store) {
	sr, ok := st.(SpendRollup)
	if !ok {
		t.Skip("the store keeps no spend rollup")
	}
	ctx := context.Background()
	MustApply(t, st, Tenant("a", 1000, 10), Tenant("b", 1000, 10))
	for i, step := range []struct {
		tenant string
		settle ledger.Units // -1: keep the hold, then reconcile at 3
	}{{"a", 4}, {"a", 5}, {"b", -1}, {"b", 0}} {
		id := ledger.RunID(fmt.Sprint("s", i))
		MustAdmit(t, st, admitReq(id, step.tenant, 10))
		actor := ledger.TenantActor(step.tenant)
		var err error
		if step.settle >= 0 {
			_, err = st.Settle(ctx, id, step.settle, "usage", actor)
		} else if _, err = st.KeepHold(ctx, id, ledger.RunInterrupted, "lost", actor); err == nil {
			_, err = st.Reconcile(ctx, id, 3, "invoice", ledger.ActorAdmin)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	from, to := time.Now().Add(-48*time.Hour), time.Now().Add(48*time.Hour)
	rollup, err := sr.SpendHours(ctx, from, to)
	if err != nil {
		t.Fatal(err)
	}
	fromRuns, err := sr.SpendHoursFromRuns(ctx, from, to)
	if err != nil {
		t.Fatal(err)
	}
	if p := ledger.SpendProblems(rollup, fromRuns); len(p) > 0 {
		t.Errorf("rollup differs from the runs: %q", p)
	}
	spent := map[string]ledger.Units{}
	for _, h := range rollup {
		spent[h.TenantID] += h.SpentUnits
	}
	if spent["a"] != 9 || spent["b"] != 3 {
		t.Errorf("rollup spent %v, want a 9, b 3", spent)
	}
}
