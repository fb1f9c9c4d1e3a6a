package ledgertest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/quotagate/quotagate/backend/ledger"
)

// RunFailover checks what a store keeps of a call that fails over from one
// target of its route to the next (DESIGN "Routes"): each attempt a run on
// its own hold, the earlier released before the later is admitted.
func RunFailover(t *testing.T, open Opener) {
	t.Run("AttemptsAndLink", func(t *testing.T) { testFailoverLink(t, open(t)) })
	t.Run("ConcurrentCallsBudget", func(t *testing.T) { testFailoverConcurrent(t, open(t)) })
}

// attemptAt is the admission of a call's attempt n at upstream, after the
// attempt prev.
func attemptAt(id ledger.RunID, tenant, upstream string, reserve ledger.Units, n int, prev ledger.RunID) ledger.AdmitRequest {
	return ledger.AdmitRequest{RunID: id, TenantID: tenant, Upstream: upstream, Model: "flash", ReserveUnits: reserve,
		Actor: ledger.TenantActor(tenant), Door: "chat", UpstreamProtocol: "chat", Attempt: n, FailoverOf: prev}
}

func testFailoverLink(t *testing.T, st ledger.Store) {
	ctx := context.Background()
	MustApply(t, st, Tenant("a", 1000, 2))
	MustAdmit(t, st, attemptAt("r1", "a", "free", 40, 0, ""))
	if _, err := st.ReleaseHold(ctx, "r1", ledger.RunFailed, "upstream_status=500", ledger.TenantActor("a")); err != nil {
		t.Fatal(err)
	}
	admitted := MustAdmit(t, st, attemptAt("r2", "a", "paid", 40, 2, "r1"))
	if d := lastAudit(t, st, "a").Detail; !strings.HasSuffix(d, " attempts=2 failover_of=r1") {
		t.Fatalf("admit row detail %q does not name the attempt before", d)
	}
	first, second := mustRun(t, st, "r1"), mustRun(t, st, "r2")
	if first.Attempts != 1 || first.FailoverOf != "" || second.Attempts != 2 || second.FailoverOf != "r1" ||
		admitted.Attempts != 2 || admitted.FailoverOf != "r1" || second.Upstream != "paid" {
		t.Fatalf("first %+v\nsecond %+v\nadmitted %+v", first, second, admitted)
	}
	listed, err := st.Runs(ctx, ledger.RunFilter{TenantID: "a"})
	if err != nil || len(listed) != 2 {
		t.Fatalf("Runs = %+v, %v", listed, err)
	}
	for _, r := range listed {
		if r.ID == "r2" && (r.Attempts != 2 || r.FailoverOf != "r1") {
			t.Fatalf("listed %+v", r)
		}
	}
	WantBalance(t, st, ledger.Balance{TenantID: "a", BudgetUnits: 1000, HeldUnits: 40, AvailableUnits: 960, Active: 1})
	WantVerified(t, st)
}

// testFailoverConcurrent: 200 calls at once over a two-target route whose
// first target refuses every attempt, with budget for exactly n calls (each
// spends its whole reserve): exactly n are served, by the second target,
// and no call ever held twice — the ledger admitted each second attempt
// after the first's release.
func testFailoverConcurrent(t *testing.T, st ledger.Store) {
	const calls, n, reserve = 200, 37, 30
	MustApply(t, st, Tenant("t", n*reserve, calls))
	var wg sync.WaitGroup
	served := make(chan ledger.RunID, calls)
	for i := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if id, ok := failoverCall(t, st, i, reserve); ok {
				served <- id
			}
		}()
	}
	wg.Wait()
	close(served)
	if len(served) != n {
		t.Fatalf("%d calls served, want exactly %d", len(served), n)
	}
	WantBalance(t, st, ledger.Balance{TenantID: "t", BudgetUnits: n * reserve, SpentUnits: n * reserve})
	seq := map[string]int64{} // "kind run" → seq
	for _, e := range tenantAudit(t, st, "t") {
		seq[string(e.Kind)+" "+string(e.RunID)] = e.Seq
	}
	for id := range served {
		run := mustRun(t, st, id)
		released, admitted := seq["release "+string(run.FailoverOf)], seq["admit "+string(id)]
		if run.Upstream != "paid" || run.Attempts != 2 || released == 0 || released > admitted {
			t.Fatalf("served run %+v: its first attempt released at seq %d, it was admitted at seq %d", run, released, admitted)
		}
	}
	WantVerified(t, st)
}

// failoverCall is one call as the gateway makes it: an attempt at the
// first target, refused and released, then one at the second, settled at
// its reserve. It reports the answering run.
func failoverCall(t *testing.T, st ledger.Store, i int, reserve ledger.Units) (ledger.RunID, bool) {
	ctx := context.Background()
	first := ledger.RunID(fmt.Sprintf("c%03d-1", i))
	if _, err := st.Admit(ctx, attemptAt(first, "t", "free", reserve, 1, "")); err != nil {
		wantRefused(t, err)
		return "", false
	}
	if _, err := st.ReleaseHold(ctx, first, ledger.RunFailed, "upstream_status=500", ledger.TenantActor("t")); err != nil {
		t.Error(err)
		return "", false
	}
	second := ledger.RunID(fmt.Sprintf("c%03d-2", i))
	if _, err := st.Admit(ctx, attemptAt(second, "t", "paid", reserve, 2, first)); err != nil {
		wantRefused(t, err)
		return "", false
	}
	if _, err := st.SettleUsage(ctx, second, ledger.Settlement{Units: reserve, Evidence: "usage"}, ledger.TenantActor("t")); err != nil {
		t.Error(err)
		return "", false
	}
	return second, true
}

// wantRefused fails t unless err refuses the admission for want of
// budget. A store that reads the tenant's row after its conditional update
// failed may find it moved on and name the concurrency limit instead
// (backend/postgres admitRefusal); that is still a refusal.
func wantRefused(t *testing.T, err error) {
	switch ledger.ErrorCode(err) {
	case ledger.CodeInsufficientBudget, ledger.CodeConcurrencyLimit:
	default:
		t.Errorf("admit: %v, want a refusal", err)
	}
}
