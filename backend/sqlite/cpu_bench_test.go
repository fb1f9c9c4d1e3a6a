package sqlite_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/sqlite"
)

// BenchmarkAdmitSettleCPU measures what the gateway pays per call in the
// ledger: one durable Admit and one durable Settle (synchronous=FULL), 64
// callers (QUOTAGATE_BENCH_CALLERS sets another count: with 1, every
// operation is a commit of its own), reported as the process's CPU microseconds per call (user+system,
// from getrusage): on a shared machine CPU per call means more than wall time.
// ids=keyed is ids=time-ordered with an Idempotency-Key on
// every call, which admission looks up. Each case first records prefill calls straight into the file
// (prefillLedger: one transaction, seconds for a million), to see whether
// the cost grows with the ledger; QUOTAGATE_BENCH_PREFILL lists other
// prefills (the cost should stay flat from 0 to 1,000,000), and
// QUOTAGATE_BENCH_DIR keeps the prefilled ledgers there for the next run
// (they are migrated when opened):
//
//	go test -run '^$' -bench BenchmarkAdmitSettleCPU -benchtime 4000x ./backend/sqlite/
//	QUOTAGATE_BENCH_PREFILL=0,100000,1000000 go test -run '^$' -bench 'BenchmarkAdmitSettleCPU/.*/ids=time' -benchtime 4000x ./backend/sqlite/
func BenchmarkAdmitSettleCPU(b *testing.B) {
	prefills := []int{0, 20000}
	if env := os.Getenv("QUOTAGATE_BENCH_PREFILL"); env != "" {
		prefills = nil
		for _, f := range strings.Split(env, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 0 {
				b.Fatalf("QUOTAGATE_BENCH_PREFILL=%q: want calls as a comma-separated list", env)
			}
			prefills = append(prefills, n)
		}
	}
	type benchCase struct {
		prefill int
		ids     string
	}
	var cases []benchCase
	for _, n := range prefills {
		cases = append(cases, benchCase{n, "time-ordered"}, benchCase{n, "keyed"})
	}
	cases = append(cases, benchCase{prefills[len(prefills)-1], "random"})
	// Each prefilled ledger is built once and copied for every run of its case.
	templates := map[int]string{}
	templateDir := os.Getenv("QUOTAGATE_BENCH_DIR")
	if templateDir == "" {
		templateDir = b.TempDir()
	}
	for _, tc := range cases {
		b.Run(fmt.Sprintf("prefill=%d/ids=%s", tc.prefill, tc.ids), func(b *testing.B) {
			path, ok := templates[tc.prefill]
			if !ok {
				path = filepath.Join(templateDir, fmt.Sprintf("prefill-%d.db", tc.prefill))
				if _, err := os.Stat(path); err != nil {
					buildBenchLedger(b, path, tc.prefill)
				}
				templates[tc.prefill] = path
			}
			dbPath := filepath.Join(ledgerDir(b), "ledger.db")
			copyFile(b, path, dbPath)
			st, err := sqlite.Open(dbPath, sqlite.Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { st.Close() })
			ctx := context.Background()
			var next atomic.Int64
			next.Store(int64(tc.prefill))
			calls := func(n int64) {
				var wg sync.WaitGroup
				for range benchCallers(b) {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for {
							i := next.Add(1)
							if i > n {
								return
							}
							id := ledger.RunID(fmt.Sprintf("run_%016x", i)) // as the gateway's: time first
							if tc.ids == "random" {
								var r [12]byte
								_, _ = rand.Read(r[:])
								id = ledger.RunID(fmt.Sprintf("run_%x", r))
							}
							req := ledger.AdmitRequest{RunID: id, TenantID: "t", Upstream: "u", Model: "m", ReserveUnits: 100}
							if tc.ids == "keyed" {
								req.IdempotencyKey = "key-" + string(id)
							}
							if _, err := st.Admit(ctx, req); err != nil {
								b.Error(err)
								return
							}
							if _, err := st.Settle(ctx, id, 40, "usage", ledger.TenantActor("t")); err != nil {
								b.Error(err)
								return
							}
						}
					}()
				}
				wg.Wait()
			}
			calls(int64(tc.prefill) + 200) // warm: statements prepared, books and page cache loaded
			cpu0 := cpuTime()
			b.ResetTimer()
			calls(int64(tc.prefill) + 200 + int64(b.N))
			b.StopTimer()
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/call")
		})
	}
}

// benchCallers is QUOTAGATE_BENCH_CALLERS, else 64.
func benchCallers(b *testing.B) int {
	env := os.Getenv("QUOTAGATE_BENCH_CALLERS")
	if env == "" {
		return 64
	}
	n, err := strconv.Atoi(env)
	if err != nil || n < 1 {
		b.Fatalf("QUOTAGATE_BENCH_CALLERS=%q: want a positive count", env)
	}
	return n
}

// buildBenchLedger creates the bench's ledger at path, with tenant t and n
// calls recorded before it (built aside and renamed, so that a kept ledger
// is always whole).
func buildBenchLedger(tb testing.TB, path string, n int) {
	tb.Helper()
	building := path + ".building"
	for _, p := range []string{building, building + "-wal", building + "-shm"} {
		_ = os.Remove(p)
	}
	st, err := sqlite.Open(building, sqlite.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	err = st.ApplyTenants(context.Background(), []ledger.Tenant{{ID: "t", BudgetUnits: ledger.MaxUnits, MaxConcurrent: 1 << 30}}, ledger.System("bench"))
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		tb.Fatal(err)
	}
	start := time.Now()
	if err := prefillLedger(building, "t", n, time.Now().Add(-time.Duration(n)*time.Millisecond)); err != nil {
		tb.Fatal(err)
	}
	if err := os.Rename(building, path); err != nil {
		tb.Fatal(err)
	}
	tb.Logf("prefilled %d calls in %v", n, time.Since(start).Round(time.Millisecond))
}

// prefillLedger records n settled calls of tenantID straight into the ledger
// file at path (its store closed), one a millisecond from since, as the
// writer would have: run_%016x ids 1…n, an admit and a settle audit row each
// (seq 2i−1, 2i, with their available figures chained), the tenant's spent
// units moved; then checkpoints the WAL away. One transaction: a million
// calls take seconds instead of the hour a benchmark would need.
func prefillLedger(path, tenantID string, n int, since time.Time) error {
	if n == 0 {
		return nil
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=synchronous(OFF)&_pragma=cache_size(-262144)")
	if err != nil {
		return err
	}
	defer db.Close()
	const reserve, spent = 100, 40
	var budget, spentBefore, seqBefore int64
	err = db.QueryRow(`SELECT budget_units, spent_units, (SELECT coalesce(max(seq), 0) FROM audit) FROM tenants WHERE id = ?`,
		tenantID).Scan(&budget, &spentBefore, &seqBefore)
	if err != nil {
		return fmt.Errorf("prefill: read tenant %s: %w", tenantID, err)
	}
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	t0 := since.UnixNano()
	const series = `WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < ?1) `
	stmts := []string{
		series + `INSERT INTO runs (id, tenant_id, upstream, model, status, usage, reserve_units, spent_units,
			held_units, created_at, updated_at, door, upstream_protocol)
		SELECT printf('run_%016x', i), ?2, 'u', 'm', 'completed', 'trusted', ?3, ?4, 0,
			?5 + i * 1000000, ?5 + i * 1000000 + 500000, 'chat', 'chat' FROM c`,
		series + `INSERT INTO audit (seq, at, kind, tenant_id, run_id, actor, units, available_before,
			available_after, detail, balance, count, last_at)
		SELECT ?6 + 2 * i - 1, ?5 + i * 1000000, 'admit', ?2, printf('run_%016x', i), ?2, ?3,
			?7 - ?4 * (i - 1), ?7 - ?4 * (i - 1) - ?3, 'u/m door=chat upstream_protocol=chat', 1, 1, ?5 + i * 1000000 FROM c`,
		series + `INSERT INTO audit (seq, at, kind, tenant_id, run_id, actor, reason, units, available_before,
			available_after, detail, balance, count, last_at)
		SELECT ?6 + 2 * i, ?5 + i * 1000000 + 500000, 'settle', ?2, printf('run_%016x', i), ?2, 'usage', ?4,
			?7 - ?4 * (i - 1) - ?3, ?7 - ?4 * i, 'active/pending → completed/trusted', 1, 1, ?5 + i * 1000000 + 500000 FROM c`,
		`UPDATE tenants SET spent_units = spent_units + ?1 * ?4 WHERE id = ?2`,
	}
	for _, q := range stmts {
		if _, err := tx.Exec(q, n, tenantID, reserve, spent, t0, seqBefore, budget-spentBefore); err != nil {
			return fmt.Errorf("prefill: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("prefill: %w", err)
	}
	if _, err := db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		return fmt.Errorf("prefill: checkpoint: %w", err)
	}
	return nil
}

func copyFile(tb testing.TB, from, to string) {
	tb.Helper()
	src, err := os.Open(from)
	if err != nil {
		tb.Fatal(err)
	}
	defer src.Close()
	dst, err := os.Create(to)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		tb.Fatal(err)
	}
	// On disk before the timer starts: else the ledger's first checkpoint
	// fsyncs the whole copy (500 MB for a million calls) inside the run.
	if err := dst.Sync(); err != nil {
		tb.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		tb.Fatal(err)
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
