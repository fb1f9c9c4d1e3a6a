package sqlite_test

import (
	"context"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/ledger/ledgertest"
	"github.com/quotagate/quotagate/backend/sqlite"
)

// TestOneEventRowStoresNoLastAt: an audit row of one event stores last_at
// 0, which SQLite's record holds in no bytes, and reads back with its at;
// a reject row that counted a second refusal stores the second's time.
func TestOneEventRowStoresNoLastAt(t *testing.T) {
	ctx := context.Background()
	path := t.TempDir() + "/ledger.db"
	st, err := sqlite.Open(path, sqlite.Options{Synchronous: "OFF"})
	if err != nil {
		t.Fatal(err)
	}
	ledgertest.MustApply(t, st, ledgertest.Tenant("t", 100, 1))
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for _, d := range []time.Duration{0, time.Second} {
		if err := st.AppendAudit(ctx, ledger.AuditEntry{At: at.Add(d), Kind: ledger.AuditReject, TenantID: "t",
			Actor: ledger.System("gateway"), Reason: ledger.CodeRateLimited}); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := st.Audit(ctx, ledger.AuditFilter{TenantID: "t"})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range rows {
		want := e.At
		if e.Kind == ledger.AuditReject {
			want = at.Add(time.Second)
		}
		if !e.LastAt.Equal(want) {
			t.Fatalf("%s row %d: last_at %v, want %v", e.Kind, e.Seq, e.LastAt, want)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	var n, zero, counted int
	if err := openRaw(t, path).QueryRow(`SELECT count(*), count(*) FILTER (WHERE last_at = 0),
		count(*) FILTER (WHERE count = 2 AND last_at = ?) FROM audit`, at.Add(time.Second).UnixNano()).Scan(&n, &zero, &counted); err != nil {
		t.Fatal(err)
	}
	if n < 2 || zero != n-1 || counted != 1 {
		t.Fatalf("%d rows: %d store last_at 0, %d the second refusal's time; want %d and 1", n, zero, counted, n-1)
	}
}
