package sqlite_test

import (
	"context"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/sqlite"
)

// Bulk writes every call or none: a refusal of one rolls back those before
// it and is returned naming the run; the calls written are the runs,
// audit rows and balance Admit and Settle leave.
func TestBulkAllOrNone(t *testing.T) {
	ctx := context.Background()
	st := MustOpenStore(t, sqlite.Options{Synchronous: "OFF"})
	if err := st.ApplyTenants(ctx, []ledger.Tenant{{ID: "a", BudgetUnits: 1000, MaxConcurrent: 10}}, ledger.ActorConfig); err != nil {
		t.Fatal(err)
	}
	call := func(id, tenant string) sqlite.BulkCall {
		return sqlite.BulkCall{Admit: ledger.AdmitRequest{RunID: ledger.RunID(id), TenantID: tenant, Upstream: "u", Model: "m",
			ReserveUnits: 100}, Spent: 40, Evidence: "usage"}
	}
	err := st.Bulk(ctx, []sqlite.BulkCall{call("r1", "a"), call("r2", "nobody")})
	if ledger.ErrorCode(err) != ledger.CodeInvalidAPIKey || !strings.Contains(err.Error(), "r2") {
		t.Fatalf("bulk with an unknown tenant: %v, want invalid_api_key naming r2", err)
	}
	if runs, err := st.Runs(ctx, ledger.RunFilter{}); err != nil || len(runs) != 0 {
		t.Fatalf("after a refused bulk: %d runs (%v), want none", len(runs), err)
	}
	if err := st.Bulk(ctx, []sqlite.BulkCall{call("r1", "a"), call("r2", "a")}); err != nil {
		t.Fatal(err)
	}
	b, err := st.Balance(ctx, "a")
	if err != nil || b.SpentUnits != 80 || b.HeldUnits != 0 || b.Active != 0 {
		t.Fatalf("balance %+v (%v), want 80 spent, nothing held or active", b, err)
	}
	rows, err := st.Audit(ctx, ledger.AuditFilter{RunID: "r2"})
	if err != nil || len(rows) != 2 || rows[0].Kind != ledger.AuditAdmit || rows[1].Kind != ledger.AuditSettle ||
		rows[1].Actor != ledger.TenantActor("a") {
		t.Fatalf("r2's audit rows %+v (%v), want admit then settle by tenant:a", rows, err)
	}
	if problems, err := st.Verify(ctx); err != nil || len(problems) > 0 {
		t.Fatalf("verify: %v %v", problems, err)
	}
}
