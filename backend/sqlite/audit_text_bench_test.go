package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/sqlite"
)

// BenchmarkAuditText times the audit page filtered by a text as the admin
// handler reads it (newest first, chunks of candidates below the cursor
// until 50 rows match), on an empty ledger, on one of 1,000 settled runs
// and on the ledger file QUOTAGATE_TEXT_LEDGER names (one built by
// BenchmarkBooks or the ledger generator; its first open builds
// audit_text), and logs what audit_text costs in bytes per run (dbstat).
// The texts: a run's id (rare: its two rows),
// "usage" (every settlement), a tenant's actor (a tenth of the rows), and a
// text no row holds.
//
//	QUOTAGATE_TEXT_LEDGER=/work/big/x/books-1000000.db go test -run '^$' -bench BenchmarkAuditText -benchtime 200x ./backend/sqlite/
func BenchmarkAuditText(b *testing.B) {
	path := os.Getenv("QUOTAGATE_TEXT_LEDGER")
	if path == "" {
		b.Skip("QUOTAGATE_TEXT_LEDGER names no ledger file")
	}
	empty := map[string]float64{}
	for _, size := range []int{0, 1000, -1} {
		var st *sqlite.Store
		if size >= 0 {
			st = MustOpenStore(b, sqlite.Options{Synchronous: "OFF"})
			settleRuns(b, st, size)
		} else {
			t0 := time.Now()
			var err error
			if st, err = sqlite.Open(path, sqlite.Options{Synchronous: "OFF"}); err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { st.Close() })
			b.Logf("open %s (with any migration): %s", path, time.Since(t0).Round(time.Millisecond))
			size = textIndexBytes(b, path)
		}
		rare := runID(b, st)
		for i, text := range []string{rare, "usage", "tenant:t3", "no row holds this"} {
			name := []string{"run-id", "usage", "tenant", "nowhere"}[i]
			b.Run(fmt.Sprintf("runs=%d/text=%s", size, name), func(b *testing.B) {
				took := make([]time.Duration, 0, b.N)
				for range b.N {
					t0 := time.Now()
					textPage(b, st, text)
					took = append(took, time.Since(t0))
				}
				slices.Sort(took)
				per := float64(took[len(took)/2].Nanoseconds())
				b.ReportMetric(per/1e6, "p50-ms")
				b.ReportMetric(float64(took[len(took)*99/100].Nanoseconds())/1e6, "p99-ms")
				if size == 0 {
					empty[name] = per
				} else if e := empty[name]; e > 0 {
					b.ReportMetric(per/e, "x-empty")
				}
			})
		}
	}
}

// runID is the id of a run some 250 below the newest ("r0" on an empty
// ledger): a rare text, whose page reads every row that may hold it
// wherever it is.
func runID(tb testing.TB, st *sqlite.Store) string {
	runs, err := st.Runs(context.Background(), ledger.RunFilter{Limit: 500})
	if err != nil {
		tb.Fatal(err)
	}
	if len(runs) == 0 {
		return "r0"
	}
	return string(runs[len(runs)/2].ID)
}

// textPage reads one page of 50 rows holding text as the admin handler
// does: chunks of candidates, newest first, each below the last.
func textPage(tb testing.TB, st *sqlite.Store, text string) {
	f := ledger.AuditFilter{Text: text, Newest: true, Limit: 51}
	found := 0
	for {
		rows, err := st.Audit(context.Background(), f)
		if err != nil {
			tb.Fatal(err)
		}
		for _, e := range rows {
			if ledger.AuditMatches(f, e) {
				found++
			}
		}
		if found > 50 || len(rows) < f.Limit {
			return
		}
		f.BeforeSeq, f.Limit = rows[len(rows)-1].Seq, min(2*f.Limit, 1000)
	}
}

// textIndexBytes logs audit_text's bytes per run of the ledger at path and
// returns its runs.
func textIndexBytes(tb testing.TB, path string) int {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=query_only(1)")
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	var runs int
	if err := db.QueryRow(`SELECT count(*) FROM runs`).Scan(&runs); err != nil {
		tb.Fatal(err)
	}
	rows, err := db.Query(`SELECT name, sum(pgsize) FROM dbstat WHERE name LIKE 'audit_text%' OR name IN ('audit', 'runs') GROUP BY name ORDER BY 2 DESC`)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var size int64
		if err := rows.Scan(&name, &size); err != nil {
			tb.Fatal(err)
		}
		tb.Logf("bytes/run %-20s %7.1f", name, float64(size)/float64(runs))
	}
	return runs
}

// BenchmarkAuditTextBatches times the writer's batches of the text index on
// the ledger file QUOTAGATE_TEXT_LEDGER names: its index is emptied, then
// rebuilt DefaultAuditTextBatch rows a transaction, as the writer indexes
// them, and it reports the median, the 99th percentile and the longest
// batch. A batch holds the writer: every admission waits for it. The
// index's merges happen inside these batches; how they are paced
// (0019_audit_text_merge.sql) decides the longest one. The ledger is
// changed only in how its index is laid out.
//
//	QUOTAGATE_TEXT_LEDGER=/work/big/x/books-800000.db go test -run '^$' -bench BenchmarkAuditTextBatches -benchtime 1x ./backend/sqlite/
func BenchmarkAuditTextBatches(b *testing.B) {
	path := os.Getenv("QUOTAGATE_TEXT_LEDGER")
	if path == "" {
		b.Skip("QUOTAGATE_TEXT_LEDGER names no ledger file")
	}
	ctx := context.Background()
	st, err := sqlite.Open(path, sqlite.Options{Synchronous: "OFF", AuditTextBatch: -1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	var rows int64
	for _, q := range []string{`INSERT INTO audit_text (audit_text) VALUES ('delete-all')`, `UPDATE audit_text_mark SET seq = 0`} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM audit`).Scan(&rows); err != nil {
		b.Fatal(err)
	}
	var took []time.Duration
	t0 := time.Now()
	for left := rows; left > 0; left -= sqlite.DefaultAuditTextBatch {
		t := time.Now()
		if err := st.IndexAuditText(ctx, sqlite.DefaultAuditTextBatch); err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(t))
	}
	total := time.Since(t0)
	slices.Sort(took)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }
	b.ReportMetric(ms(took[len(took)/2]), "p50-ms")
	b.ReportMetric(ms(took[len(took)*99/100]), "p99-ms")
	b.ReportMetric(ms(took[len(took)-1]), "max-ms")
	b.Logf("%d audit rows in %d batches, %s; longest five: %v", rows, len(took), total.Round(time.Millisecond), took[len(took)-5:])
	// rank 1: the index against the text of every audit row.
	if _, err := db.ExecContext(ctx, `INSERT INTO audit_text (audit_text, rank) VALUES ('integrity-check', 1)`); err != nil {
		b.Fatalf("audit_text against audit: %v", err)
	}
}
