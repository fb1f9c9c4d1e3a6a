package sqlite_test

import (
	"context"
	"testing"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/ledger/ledgertest"
	"github.com/quotagate/quotagate/backend/sqlite"
)

// TestApplyTenantsAuditsKeyChanges: a key swapped on a configured tenant is
// audited as one added and one removed; a tenant dropped from the config
// loses its keys under its own config row.
func TestApplyTenantsAuditsKeyChanges(t *testing.T) {
	st := MustOpenStore(t, sqlite.Options{})
	a := ledger.Tenant{ID: "a", BudgetUnits: 10, MaxConcurrent: 1, KeyHashes: []string{ledger.HashKey("key-a")}}
	b := ledger.Tenant{ID: "b", BudgetUnits: 10, MaxConcurrent: 1, KeyHashes: []string{ledger.HashKey("key-b")}}
	ledgertest.MustApply(t, st, a, b)
	a.KeyHashes = []string{ledger.HashKey("key-a2")}
	ledgertest.MustApply(t, st, a)
	last := func(tenant string) ledger.AuditEntry {
		t.Helper()
		rows, err := st.Audit(context.Background(), ledger.AuditFilter{TenantID: tenant})
		if err != nil || len(rows) == 0 {
			t.Fatalf("audit of %s: %d rows, %v", tenant, len(rows), err)
		}
		return rows[len(rows)-1]
	}
	if e := last("a"); e.Kind != ledger.AuditConfig || e.Detail != "keys +1 -1" || e.Reason != "" {
		t.Fatalf("config row of a = %+v, want detail %q", e, "keys +1 -1")
	}
	if e := last("b"); e.Kind != ledger.AuditConfig || e.Detail != "keys -1" || e.Reason != "tenant no longer configured" {
		t.Fatalf("config row of b = %+v, want detail %q", e, "keys -1")
	}
	ledgertest.WantVerified(t, st)
}
