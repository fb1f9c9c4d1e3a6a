package admin_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/quotagate/quotagate/backend/ledger"
)

// The audit view's JSON gives each row's actor as its typed text, so that
// the dashboard, which shows it as given, tells a tenant named "quota" from
// the quota guard.
func TestAuditLogActors(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	if err := f.store.ApplyTenants(ctx, []ledger.Tenant{{ID: "quota", BudgetUnits: 100, MaxConcurrent: 1}}, ledger.ActorConfig); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.Admit(ctx, ledger.AdmitRequest{RunID: "r1", TenantID: "quota", Upstream: "demo", Model: "m", ReserveUnits: 10}); err != nil {
		t.Fatal(err)
	}
	if err := f.store.AppendAudit(ctx, ledger.AuditEntry{Kind: ledger.AuditEvict, Actor: ledger.ActorQuotaGuard, Reason: "usage_wall"}); err != nil {
		t.Fatal(err)
	}
	resp := f.do(t, "GET", "/admin/api/audit", "", token, "", "")
	var page struct {
		Rows []struct {
			Kind  string `json:"kind"`
			Actor string `json:"actor"`
		} `json:"rows"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil || resp.StatusCode != 200 {
		t.Fatalf("status %d: %v", resp.StatusCode, err)
	}
	want := map[string]string{"evict": "system:quota-guard", "admit": "tenant:quota", "config": "operator:config"}
	if len(page.Rows) != len(want) {
		t.Fatalf("rows %+v, want %d", page.Rows, len(want))
	}
	for _, r := range page.Rows {
		if r.Actor != want[r.Kind] {
			t.Errorf("%s row: actor %q, want %q", r.Kind, r.Actor, want[r.Kind])
		}
	}
}
