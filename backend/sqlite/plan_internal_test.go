package sqlite

import (
	"context"
	"database/sql"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/quotagate/quotagate/backend/ledger"
)

// TestWriterPlans runs every kind of change the writer makes, then asks
// SQLite for the plan of each statement the writer ran: none may walk an
// index or a table that grows with the history, so that CPU per call stays
// flat up to 1,000,000 recorded calls. On runs and audit a statement may use a
// key (one row, or the last), runs_holding (the open holds), runs_idempotency or
// runs_fingerprint (one key's runs) and audit_refusal (one tenant's
// refusals of one code); never a SCAN, nor runs_created,
// runs_tenant_created, audit_at or audit_tenant, which hold every row.
// SQLite's planner has no table statistics here (no ANALYZE), so an empty
// ledger is planned as a full one. Nor may a statement build a temporary
// b-tree each time it runs (OpenEphemeral): a CHECK's `IN` list of three or
// more constants did so, four on every run insert and update (0006). Only
// the refusal count may: RETURNING keeps its one row in one.
func TestWriterPlans(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	st, err := Open(path, Options{Synchronous: "OFF"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	refused := func(_ any, err error) {
		t.Helper()
		if ledger.ErrorCode(err) == "" || ledger.ErrorCode(err) == ledger.CodeInternal {
			t.Fatalf("want a refusal, got %v", err)
		}
	}
	if err := st.ApplyTenants(ctx, []ledger.Tenant{{ID: "t", BudgetUnits: 1000, MaxConcurrent: 8}}, ledger.System("test")); err != nil {
		t.Fatal(err)
	}
	quota := &ledger.QuotaCheck{Day: "2026-12-01", LimitUnits: 10000}
	admit := func(id, key, fingerprint string, retry int) (ledger.Run, error) {
		return st.Admit(ctx, ledger.AdmitRequest{RunID: ledger.RunID(id), TenantID: "t", Upstream: "u", Model: "m",
			ReserveUnits: 100, Quota: quota, IdempotencyKey: key, Fingerprint: fingerprint, RetryCount: retry})
	}
	must(admit("r1", "key-1", "fp", 0))
	must(admit("r2", "", "fp", 1))
	must(admit("r3", "", "", 0))
	must(admit("r4", "", "", 0))
	refused(admit("r1", "", "", 0))      // the id is taken
	refused(admit("r5", "key-1", "", 0)) // the key is in use
	refused(admit("r5", "key-1", "", 0)) // counted on the first refusal's row
	must(st.Settle(ctx, "r1", 40, "usage", ledger.TenantActor("t")))
	must(st.KeepHold(ctx, "r2", ledger.RunInterrupted, "cut", ledger.TenantActor("t")))
	must(st.Reconcile(ctx, "r2", 30, "provider bill", ledger.Operator("test")))
	must(st.ReleaseHold(ctx, "r3", ledger.RunFailed, "HTTP 500 before any output", ledger.TenantActor("t")))
	must(st.RecoverInterrupted(ctx, ledger.System("test")))
	if err := st.AppendAudit(ctx, ledger.AuditEntry{Kind: ledger.AuditSync, Actor: ledger.System("test")}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	// The writer has stopped: its statement cache is this goroutine's now.
	queries := append(slices.Collect(maps.Keys(st.stmts.ready)), slices.Collect(maps.Keys(st.stmts.wanted))...)
	for _, want := range []string{keyedRunsQuery, retriedRunQuery, refusalCountQuery} {
		if !slices.Contains(queries, want) {
			t.Errorf("the workload did not run %q", want)
		}
	}

	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=query_only(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	narrow := regexp.MustCompile(`^(SEARCH (runs|audit) USING (INTEGER PRIMARY KEY|(COVERING )?INDEX (sqlite_autoindex_runs_1 \(id=\?\)|runs_idempotency|runs_fingerprint|audit_refusal))` +
		`|(SCAN|SEARCH) runs USING (COVERING )?INDEX runs_holding` + // the open holds
		`|SEARCH audit$)`) // max(seq): the last rowid
	grows := regexp.MustCompile(`^(SCAN|SEARCH) (runs|audit)\b`)
	skip := regexp.MustCompile(`^\s*(SAVEPOINT|RELEASE|ROLLBACK|PRAGMA)\b`)
	for _, q := range queries {
		if skip.MatchString(q) {
			continue
		}
		rows, err := db.Query("EXPLAIN QUERY PLAN "+q, make([]any, countParams(q))...)
		if err != nil {
			t.Fatalf("explain %q: %v", q, err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
			if grows.MatchString(detail) && !narrow.MatchString(detail) {
				t.Errorf("%s\nwalks what grows with the ledger: %s", q, detail)
			}
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
		if n := ephemeralTables(t, db, q); n > 0 && q != refusalCountQuery {
			t.Errorf("%s\nbuilds %d temporary b-trees each time it runs", q, n)
		}
		t.Logf("%.60q: %q", q, plan)
	}
}

// ephemeralTables counts the OpenEphemeral instructions of q's program.
func ephemeralTables(t *testing.T, db *sql.DB, q string) int {
	t.Helper()
	rows, err := db.Query("EXPLAIN "+q, make([]any, countParams(q))...)
	if err != nil {
		t.Fatalf("explain %q: %v", q, err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		if op, _ := rowValues(t, rows)[1].(string); op == "OpenEphemeral" {
			n++
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

// countParams is the number of arguments q takes: its highest ?N, or its ?s.
func countParams(q string) int {
	n := 0
	for _, m := range regexp.MustCompile(`\?(\d*)`).FindAllStringSubmatch(q, -1) {
		if m[1] == "" {
			n++
			continue
		}
		var k int
		for _, c := range m[1] {
			k = 10*k + int(c-'0')
		}
		n = max(n, k)
	}
	return n
}
