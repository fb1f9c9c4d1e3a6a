package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/sqlite"
)

// BenchmarkBooks times every read the dashboard makes on a ledger of N
// settled runs against the same read on an empty ledger (x-empty) and on
// one of 1,000 runs, whose pages are as full as N's (x-1k): the
// audit page (no filter, tenant+kind, an operator's actor, a text), the
// runs and holds lists (first page and below a cursor), the state's
// ledger reads, the spend chart's month of hours and the quota chart's
// day; and the startup (Open) of each ledger. Each figure is the median
// call (p50-ms, and its x-empty), which the machine's other work moves
// less than the mean; p99-ms beside it. N is 100,000, or
// QUOTAGATE_BOOKS_RUNS (make bench-books: 1,000,000 and 20,000,000). A
// ledger of N runs is built once into /tmp/quotagate-books-N.db through
// the store's own Admit and Settle, and reused by later runs.
//
//	go test -run '^$' -bench BenchmarkBooks -benchtime 200x ./backend/sqlite/
func BenchmarkBooks(b *testing.B) {
	n := 100_000
	if s := os.Getenv("QUOTAGATE_BOOKS_RUNS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	empty, full := map[string]float64{}, map[string]float64{}
	for _, size := range []int{0, 1000, n} {
		st, path := booksLedger(b, size)
		t0 := time.Now()
		reopened, err := sqlite.Open(path, sqlite.Options{Synchronous: "OFF"})
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("runs=%d: open (startup) %s", size, time.Since(t0).Round(time.Microsecond))
		if err := reopened.Close(); err != nil {
			b.Fatal(err)
		}
		if size > 1000 {
			booksBytes(b, path, size)
		}
		for _, r := range booksReads(b, st) {
			b.Run(fmt.Sprintf("runs=%d/%s", size, r.name), func(b *testing.B) {
				ctx := context.Background()
				took := make([]time.Duration, 0, b.N)
				for range b.N {
					t0 := time.Now()
					if err := r.read(ctx); err != nil {
						b.Fatal(err)
					}
					took = append(took, time.Since(t0))
				}
				slices.Sort(took)
				per := float64(took[len(took)/2].Nanoseconds())
				b.ReportMetric(per/1e6, "p50-ms")
				b.ReportMetric(float64(took[len(took)*99/100].Nanoseconds())/1e6, "p99-ms")
				switch size {
				case 0:
					empty[r.name] = per
				case 1000:
					full[r.name] = per
				}
				if e := empty[r.name]; size > 0 && e > 0 {
					b.ReportMetric(per/e, "x-empty")
				}
				if k := full[r.name]; size > 1000 && k > 0 {
					b.ReportMetric(per/k, "x-1k")
				}
			})
		}
	}
}

type booksRead struct {
	name string
	read func(ctx context.Context) error
}

func booksReads(tb testing.TB, st *sqlite.Store) []booksRead {
	ctx := context.Background()
	newest, err := st.Runs(ctx, ledger.RunFilter{Limit: 1000})
	if err != nil {
		tb.Fatal(err)
	}
	var cursor ledger.RunID
	if len(newest) > 0 {
		cursor = newest[len(newest)-1].ID
	}
	now := time.Now()
	audit := func(f ledger.AuditFilter) func(context.Context) error {
		f.Newest, f.Limit = true, 51
		return func(ctx context.Context) error { _, err := st.Audit(ctx, f); return err }
	}
	runs := func(f ledger.RunFilter) func(context.Context) error {
		return func(ctx context.Context) error { _, err := st.Runs(ctx, f); return err }
	}
	return []booksRead{
		{"audit/none", audit(ledger.AuditFilter{})},
		{"audit/tenant+kind", audit(ledger.AuditFilter{TenantID: "t3", Kind: ledger.AuditSettle})},
		{"audit/actor-operator", audit(ledger.AuditFilter{Actor: ledger.ActorConfig})},
		{"audit/actor-tenant", audit(ledger.AuditFilter{Actor: ledger.TenantActor("t3")})},
		{"runs/first", runs(ledger.RunFilter{Limit: 51})},
		{"runs/below-cursor", runs(ledger.RunFilter{Limit: 51, Before: cursor})},
		{"runs/tenant", runs(ledger.RunFilter{TenantID: "t3", Limit: 51})},
		{"holds", runs(ledger.RunFilter{HoldingOnly: true, Limit: 501})},
		{"state-ledger", func(ctx context.Context) error {
			if _, err := st.Balances(ctx); err != nil {
				return err
			}
			if _, err := st.Runs(ctx, ledger.RunFilter{Limit: 50}); err != nil {
				return err
			}
			_, err := st.Runs(ctx, ledger.RunFilter{HoldingOnly: true, Limit: 500})
			return err
		}},
		{"spend-chart-month", func(ctx context.Context) error {
			_, err := st.SpendHours(ctx, now.Add(-31*24*time.Hour), now.Add(time.Hour))
			return err
		}},
		{"quota-chart-day", func(ctx context.Context) error {
			if _, err := st.QuotaUsage(ctx, "demo", "demo-model", now.UTC().Format(time.DateOnly)); err != nil {
				return err
			}
			_, err := st.UsageSeries(ctx, "demo", "demo-model", now.Add(-24*time.Hour), now)
			return err
		}},
	}
}

// booksLedger opens the ledger of n settled runs, building it first when
// /tmp has none (an empty one is always fresh).
func booksLedger(tb testing.TB, n int) (*sqlite.Store, string) {
	tb.Helper()
	opts := sqlite.Options{Synchronous: "OFF"}
	if n <= 1000 {
		st := MustOpenStore(tb, opts)
		settleRuns(tb, st, n)
		return st, st.Path()
	}
	path := fmt.Sprintf("/tmp/quotagate-books-%d.db", n)
	if _, err := os.Stat(path); err != nil {
		tmp := path + ".building"
		os.Remove(tmp)
		st, err := sqlite.Open(tmp, opts)
		if err != nil {
			tb.Fatal(err)
		}
		t0 := time.Now()
		settleRuns(tb, st, n)
		tb.Logf("a ledger of %d settled runs built in %s", n, time.Since(t0).Round(time.Second))
		if err := st.Close(); err != nil {
			tb.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			tb.Fatal(err)
		}
	}
	st, err := sqlite.Open(path, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	return st, path
}

// booksBytes logs what the file holds per run, by table and index
// (SQLite's dbstat), and in all.
func booksBytes(tb testing.TB, path string, n int) {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=query_only(1)")
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC`)
	if err != nil {
		tb.Logf("dbstat: %v", err)
		return
	}
	defer rows.Close()
	var total int64
	for rows.Next() {
		var name string
		var size int64
		if err := rows.Scan(&name, &size); err != nil {
			tb.Fatal(err)
		}
		total += size
		if size*100 >= int64(n) { // at least 0.01 byte a run
			tb.Logf("bytes/run %-28s %7.1f", name, float64(size)/float64(n))
		}
	}
	tb.Logf("bytes/run %-28s %7.1f", "(all)", float64(total)/float64(n))
}
