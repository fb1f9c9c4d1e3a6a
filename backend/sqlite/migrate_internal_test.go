package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestRunsRebuildKeepsEveryRun: a ledger written before 0006 (runs rebuilt
// with its CHECKs as chains of `=`) opens with every run as it was, the
// books still verify, the rebuilt CHECKs refuse what the old ones did, and
// the indexes are the same.
func TestRunsRebuildKeepsEveryRun(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// The ledger as 0005 left it, made the way migrate does.
	mustExec(t, db, `CREATE TABLE schema_version (version TEXT PRIMARY KEY, applied_at INTEGER NOT NULL) STRICT`)
	files, err := filepath.Glob("migrations/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if filepath.Base(f) >= "0006" {
			continue
		}
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		mustExec(t, db, string(body))
		mustExec(t, db, `INSERT INTO schema_version VALUES (?, 0)`, filepath.Base(f))
	}
	indexesBefore := indexes(t, db)
	// A tenant and a run in every state a run can be in, with every door.
	mustExec(t, db, `INSERT INTO tenants (id, budget_units, max_concurrent, spent_units, held_units, active, created_at, updated_at)
		VALUES ('t', 100000, 10, 0, 0, 0, 0, 0)`)
	states := []struct{ status, usage string }{
		{"queued", "pending"}, {"active", "pending"}, {"completed", "trusted"}, {"interrupted", "unknown"},
		{"cancelled", "reconciled"}, {"failed", "released"}, {"completed", "unknown"},
	}
	doors := []string{"", "chat", "responses", "messages"}
	var spent, held, active int64
	for i, s := range states {
		reserve, spentUnits, heldUnits := int64(100+i), int64(0), int64(0)
		switch s.usage {
		case "pending", "unknown":
			heldUnits = reserve
		case "trusted", "reconciled":
			spentUnits = reserve / 2
		}
		if s.usage == "pending" {
			active++
		}
		spent, held = spent+spentUnits, held+heldUnits
		mustExec(t, db, `INSERT INTO runs (id, tenant_id, upstream, model, status, usage, reserve_units, spent_units,
			held_units, evidence, created_at, updated_at, overrun_units, door, upstream_protocol, idempotency_key,
			retry_count, retry_of, fingerprint, cached_tokens)
			VALUES (?, 't', 'u', 'm', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			fmt.Sprintf("run_%02d", i), s.status, s.usage, reserve, spentUnits, heldUnits, "evidence "+s.status,
			i, i+1, i%2, doors[i%4], doors[(i+1)%4], fmt.Sprintf("key-%d", i%3), i%2, "", fmt.Sprintf("fp-%d", i), i)
	}
	mustExec(t, db, `UPDATE tenants SET spent_units = ?, held_units = ?, active = ?`, spent, held, active)
	before := runRows(t, db)

	st, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	versions, err := st.SchemaVersions(ctx)
	if err != nil || !slices.Contains(versions, "0006_checks_in_place.sql") {
		t.Fatalf("schema versions %v, %v", versions, err)
	}
	if after := runRows(t, db); !reflect.DeepEqual(after, before) {
		t.Errorf("runs changed by the rebuild:\nbefore %v\nafter  %v", before, after)
	}
	if got := indexes(t, db); !reflect.DeepEqual(got, indexesBefore) {
		t.Errorf("indexes after the rebuild %v, before %v", got, indexesBefore)
	}
	if b, err := st.Balance(ctx, "t"); err != nil || int64(b.SpentUnits) != spent || int64(b.HeldUnits) != held || int64(b.Active) != active {
		t.Errorf("balance after the rebuild %+v, %v; want spent %d, held %d, active %d", b, err, spent, held, active)
	}
	for _, bad := range []string{
		`UPDATE runs SET status = 'lost' WHERE id = 'run_02'`,
		`UPDATE runs SET usage = 'guessed' WHERE id = 'run_02'`,
		`UPDATE runs SET door = 'grpc' WHERE id = 'run_02'`,
		`UPDATE runs SET upstream_protocol = 'grpc' WHERE id = 'run_02'`,
		`UPDATE runs SET status = 'completed' WHERE id = 'run_01'`, // pending usage on an ended run
		`UPDATE runs SET held_units = 0 WHERE id = 'run_03'`,       // unknown usage holds its reserve
		`UPDATE runs SET tenant_id = 'nobody' WHERE id = 'run_02'`, // the tenant must exist
		`UPDATE runs SET spent_units = reserve_units + 1 WHERE id = 'run_02'`,
	} {
		if _, err := db.Exec(bad); err == nil || !strings.Contains(err.Error(), "constraint failed") {
			t.Errorf("%s: %v, want a constraint failure", bad, err)
		}
	}
	// 0008 rebuilt runs again for the newer doors; every door is a door.
	for _, door := range []string{"gemini", "completions", "embeddings"} {
		mustExec(t, db, `UPDATE runs SET door = ?, upstream_protocol = ? WHERE id = 'run_02'`, door, door)
	}
	if got := indexes(t, db); !reflect.DeepEqual(got, indexesBefore) {
		t.Errorf("indexes after 0008 %v, before %v", got, indexesBefore)
	}
}

func mustExec(t *testing.T, db *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatalf("%.80s: %v", q, err)
	}
}

// rowValues scans the current row of rows, whatever its columns.
func rowValues(t *testing.T, rows *sql.Rows) []any {
	t.Helper()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	cells := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range cells {
		ptrs[i] = &cells[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		t.Fatal(err)
	}
	return cells
}

// runRows is every run, every column, in id order.
func runRows(t *testing.T, db *sql.DB) [][]any {
	t.Helper()
	// The columns runs had after 0006: later migrations add their own.
	rows, err := db.Query(`SELECT id, tenant_id, upstream, model, quota_day, status, usage, reserve_units,
		spent_units, held_units, evidence, created_at, updated_at, overrun_units, door, upstream_protocol,
		idempotency_key, retry_count, retry_of, fingerprint, cached_tokens FROM runs ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out [][]any
	for rows.Next() {
		out = append(out, append([]any{strings.Join(cols, ",")}, rowValues(t, rows)...))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// indexes is each index on runs with its SQL.
func indexes(t *testing.T, db *sql.DB) map[string]string {
	t.Helper()
	rows, err := db.Query(`SELECT name, coalesce(sql, '') FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'runs'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var name, q string
		if err := rows.Scan(&name, &q); err != nil {
			t.Fatal(err)
		}
		out[name] = q
	}
	return out
}
