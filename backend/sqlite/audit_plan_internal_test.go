package sqlite

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
)

// TestAuditPagePlans: the dashboard's audit page, newest first below a
// cursor, is an index search for every filter the store serves, and, but
// for a time range (audit_at, then sorted), walks its index in seq order
// instead of sorting what it found: a page reads about the rows it returns.
func TestAuditPagePlans(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	st, err := Open(path, Options{Synchronous: "OFF"})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=query_only(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// audit_text's rowids below the cursor, newest first (192: ordered by
	// rowid, descending), each row then read by its seq, merged with the
	// rows above the index's mark, read by seq.
	const textPlan = "MERGE (UNION ALL)"
	const textIndexPlan = "SCAN audit_text VIRTUAL TABLE INDEX 192:M1<"
	day := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		f      ledger.AuditFilter
		search string // the plan's one line
	}{
		{"none", ledger.AuditFilter{}, "SEARCH audit USING INTEGER PRIMARY KEY (rowid<?)"},
		{"tenant", ledger.AuditFilter{TenantID: "t"}, "SEARCH audit USING INDEX audit_tenant (tenant_id=? AND rowid<?)"},
		{"kind", ledger.AuditFilter{Kind: ledger.AuditSettle}, "SEARCH audit USING INDEX audit_kind (kind=? AND rowid<?)"},
		{"tenant+kind", ledger.AuditFilter{TenantID: "t", Kind: ledger.AuditReject},
			"SEARCH audit USING INDEX audit_tenant_kind (tenant_id=? AND kind=? AND rowid<?)"},
		{"run", ledger.AuditFilter{RunID: "r1"}, "SEARCH audit USING INDEX audit_run (run_id=? AND rowid<?)"},
		{"range", ledger.AuditFilter{From: day, To: day.Add(24 * time.Hour)}, "SEARCH audit USING INDEX audit_at (at>? AND at<?)"},
		{"tenant actor", ledger.AuditFilter{Actor: ledger.TenantActor("t")},
			"SEARCH audit USING INDEX audit_tenant (tenant_id=? AND rowid<?)"},
		{"operator actor", ledger.AuditFilter{Actor: ledger.ActorAdmin}, "SEARCH audit USING INDEX audit_actor (actor=? AND rowid<?)"},
		{"text", ledger.AuditFilter{Text: "quota exceeded"}, textPlan},
		{"text+tenant+kind", ledger.AuditFilter{Text: "needle", TenantID: "t", Kind: ledger.AuditSettle}, textPlan},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.f
			f.Newest, f.BeforeSeq, f.Limit = true, 1000, 51
			q, args := auditQuery(f)
			rows, err := db.Query("EXPLAIN QUERY PLAN "+q, args...)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var plan []string
			for rows.Next() {
				var id, parent, unused int
				var detail string
				if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, detail)
			}
			if len(plan) == 0 || plan[0] != tc.search {
				t.Errorf("plan %q, want %q first", plan, tc.search)
			}
			if tc.search == textPlan && (len(plan) < 6 || plan[2] != textIndexPlan || !strings.HasSuffix(plan[5], "rowid>? AND rowid<?)")) {
				t.Errorf("plan %q, want the index's rows by %q, the others by seq", plan, textIndexPlan)
			}
			sorted := strings.Contains(strings.Join(plan, "\n"), "TEMP B-TREE")
			if sorted != (tc.name == "range" || tc.name == "operator actor") {
				t.Errorf("plan %q sorts: %v", plan, sorted)
			}
		})
	}
}
