package ledgertest

import (
	"bytes"
	"context"
	"testing"

	"github.com/quotagate/quotagate/backend/audit"
	"github.com/quotagate/quotagate/backend/ledger"
)

// LegacyRows appends audit rows as a quotagate from before typed actors
// wrote them: it runs
//
//	INSERT INTO audit (at, kind, tenant_id, run_id, actor) VALUES <values>
//
// on the store's database, with values as given (SQL literals that both
// SQLite and PostgreSQL read alike).
type LegacyRows func(values string) error

// ActorsReadApart checks, on a fresh store st, that every audit row reads
// as the actor that wrote it, through Audit and through the CSV export: a
// tenant named "quota" and the quota guard read apart, in rows written now
// and in rows an older version wrote (legacy, run before st writes anything)
// with a bare actor word.
func ActorsReadApart(t *testing.T, st ledger.Store, legacy LegacyRows) {
	t.Helper()
	ctx := context.Background()
	err := legacy(`(1, 'admit', 'quota', 'old-1', 'quota'),
		(2, 'settle', 'quota', 'old-1', 'quota'),
		(3, 'evict', '', '', 'quota'),
		(4, 'sync', '', '', 'quota'),
		(5, 'sync', 'filler', '', 'quota-topup'),
		(6, 'reconcile', 'admin', 'old-2', 'admin'),
		(7, 'config', 'quota', '', 'config'),
		(8, 'sync', '', '', 'volcengine'),
		(9, 'cancel', 'a', 'old-3', 'operator:admin'),
		(10, 'recover', 'a', 'old-4', 'system:recovery'),
		(11, 'sync', '', '', 'manual')`)
	if err != nil {
		t.Fatalf("legacy rows: %v", err)
	}
	if err := st.ApplyTenants(ctx, []ledger.Tenant{Tenant("quota", 1000, 1)}, ledger.ActorConfig); err != nil {
		t.Fatal(err)
	}
	MustAdmit(t, st, ledger.AdmitRequest{RunID: "new-1", TenantID: "quota", ReserveUnits: 10})
	if err := st.AppendAudit(ctx, ledger.AuditEntry{Kind: ledger.AuditEvict, Actor: ledger.ActorQuotaGuard, Reason: "usage_wall"}); err != nil {
		t.Fatal(err)
	}
	tenantQuota, guard := ledger.TenantActor("quota").String(), ledger.ActorQuotaGuard.String()
	want := []string{
		tenantQuota, tenantQuota, guard, guard, "system:quota-topup", "operator:admin", "operator:config",
		"system:volcengine", "operator:admin", "system:recovery", "operator:admin", // the legacy rows
		"operator:config", tenantQuota, guard, // written now
	}
	rows, err := st.Audit(ctx, ledger.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(want) {
		t.Fatalf("%d audit rows, want %d: %+v", len(rows), len(want), rows)
	}
	for i, e := range rows {
		if e.Actor.String() != want[i] {
			t.Errorf("row %d (%s, tenant %q): actor %q, want %q", i+1, e.Kind, e.TenantID, e.Actor, want[i])
		}
	}
	var buf bytes.Buffer
	if err := audit.WriteCSV(ctx, &buf, st, audit.Query{}); err != nil {
		t.Fatal(err)
	}
	cells, err := audit.ParseCSV(buf.String())
	if err != nil {
		t.Fatal(err)
	}
	const actorCol = 5
	if cells[0][actorCol] != "actor" {
		t.Fatalf("CSV column %d is %q, want actor", actorCol, cells[0][actorCol])
	}
	for i, r := range cells[1:] {
		if i < len(want) && r[actorCol] != want[i] {
			t.Errorf("CSV row %d: actor %q, want %q", i+1, r[actorCol], want[i])
		}
	}
}
