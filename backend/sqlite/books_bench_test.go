package sqlite_test

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/internal/ledgergen"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/sqlite"
)

// BenchmarkBooks times every read the dashboard makes on a ledger of N
// settled runs against the same read on an empty ledger (x-empty) and on
// one of 1,000 runs, whose pages are as full as N's (x-1k): the
// audit page (no filter, tenant+kind, an operator's actor, a tenant's
// actor, a text found on the first page, a text found once deep down, a
// text found nowhere), the runs and holds lists (first page and below a
// cursor), the state's ledger reads, the spend chart's month of hours and
// the quota chart's day; the startup (Open, with its migrations check) of
// each ledger; and verify from a checkpoint after 1,000 more runs. Each
// figure is the median call (p50-ms, and its x-empty), which the machine's
// other work moves less than the mean; p99-ms beside it.
//
// Every ledger is built by ledgergen (the store's own statements, calls
// spread over the year before now, ten tenants). N is 100,000, or
// QUOTAGATE_BOOKS_RUNS; the ledger of N runs is built once into
// QUOTAGATE_BOOKS_DIR (default /tmp) as quotagate-books-N.db and reused,
// or QUOTAGATE_BOOKS_LEDGER names one built before (its N is what it holds):
//
//	go test -run '^$' -bench BenchmarkBooks -benchtime 200x ./backend/sqlite/
//	QUOTAGATE_BOOKS_LEDGER=/work/big/books.db go test -run '^$' -bench 'BenchmarkBooks$' -benchtime 1000x -timeout 2h ./backend/sqlite/
func BenchmarkBooks(b *testing.B) {
	empty, full := map[string]float64{}, map[string]float64{}
	for _, l := range booksLedgers(b) {
		booksStartup(b, l)
		st, err := sqlite.Open(l.path, sqlite.Options{Synchronous: "OFF"})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { st.Close() })
		if l.runs > 1000 {
			booksBytes(b, l.path)
		}
		for _, r := range booksReads(b, st) {
			b.Run(fmt.Sprintf("runs=%d/%s", l.runs, r.name), func(b *testing.B) {
				per := medianCall(b, r.read)
				switch l.runs {
				case 0:
					empty[r.name] = per
				case 1000:
					full[r.name] = per
				}
				if e := empty[r.name]; l.runs > 0 && e > 0 {
					b.ReportMetric(per/e, "x-empty")
				}
				if k := full[r.name]; l.runs > 1000 && k > 0 {
					b.ReportMetric(per/k, "x-1k")
				}
			})
		}
		booksVerify(b, st, l.runs)
	}
}

// medianCall calls read b.N times and reports the median and p99 call; it
// returns the median in nanoseconds.
func medianCall(b *testing.B, read func(context.Context) error) float64 {
	ctx := context.Background()
	took := make([]time.Duration, 0, b.N)
	for range b.N {
		t0 := time.Now()
		if err := read(ctx); err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(t0))
	}
	slices.Sort(took)
	per := float64(took[len(took)/2].Nanoseconds())
	b.ReportMetric(per/1e6, "p50-ms")
	b.ReportMetric(float64(took[len(took)*99/100].Nanoseconds())/1e6, "p99-ms")
	return per
}

// booksLedger is a ledger of runs settled runs at path.
type booksLedger struct {
	runs int
	path string
}

// booksLedgers builds the empty ledger and the one of 1,000 runs, and
// builds or finds the big one (see BenchmarkBooks).
func booksLedgers(b *testing.B) []booksLedger {
	ctx := context.Background()
	dir := b.TempDir()
	var out []booksLedger
	for _, n := range []int{0, 1000} {
		path := filepath.Join(dir, fmt.Sprintf("books-%d.db", n))
		if _, err := ledgergen.Build(ctx, path, booksYear(n)); err != nil {
			b.Fatal(err)
		}
		out = append(out, booksLedger{n, path})
	}
	if path := os.Getenv("QUOTAGATE_BOOKS_LEDGER"); path != "" {
		runs, _, err := ledgergen.Sizes(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		return append(out, booksLedger{int(runs), path})
	}
	n := 100_000
	if s := os.Getenv("QUOTAGATE_BOOKS_RUNS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	path := filepath.Join(cmp.Or(os.Getenv("QUOTAGATE_BOOKS_DIR"), os.TempDir()), fmt.Sprintf("quotagate-books-%d.db", n))
	if _, err := os.Stat(path); err != nil {
		tmp := path + ".building"
		os.Remove(tmp)
		rep, err := ledgergen.Build(ctx, tmp, booksYear(n))
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("a ledger of %d settled runs built in %s (%.0f runs/s, verify %s)", n, rep.Took.Round(time.Second),
			float64(n)/rep.Took.Seconds(), rep.Verify.Round(time.Second))
		if err := os.Rename(tmp, path); err != nil {
			b.Fatal(err)
		}
	}
	return append(out, booksLedger{n, path})
}

// booksYear is n calls over the year before now.
func booksYear(n int) ledgergen.Config {
	now := time.Now()
	return ledgergen.Config{Runs: n, From: now.AddDate(-1, 0, 0), To: now, Chunk: 20_000}
}

// booksStartup logs how long Open (migrations checked, writer started)
// and Close take on l.
func booksStartup(b *testing.B, l booksLedger) {
	t0 := time.Now()
	st, err := sqlite.Open(l.path, sqlite.Options{Synchronous: "OFF"})
	if err != nil {
		b.Fatal(err)
	}
	opened := time.Since(t0)
	if err := st.Close(); err != nil {
		b.Fatal(err)
	}
	b.Logf("runs=%d: startup (open) %s", l.runs, opened.Round(time.Microsecond))
}

// booksVerify logs verify from a checkpoint after 1,000 more calls: a
// verify that writes a checkpoint first, then 1,000 calls, then the timed
// verify from it.
func booksVerify(b *testing.B, st *sqlite.Store, runs int) {
	ctx := context.Background()
	t0 := time.Now()
	if problems, err := st.VerifyWith(ctx, ledger.VerifyOptions{Checkpoint: true}); err != nil || len(problems) > 0 {
		b.Fatalf("verify: %v %v", problems, err)
	}
	caught := time.Since(t0)
	now := time.Now()
	calls := make([]sqlite.BulkCall, 1000)
	for i := range calls {
		calls[i] = ledgergen.Call(1<<40+i, ledgergen.DefaultTenants, now) // ids after any the generator drew
	}
	if err := st.Bulk(ctx, calls); err != nil {
		b.Fatal(err)
	}
	t0 = time.Now()
	if problems, err := st.VerifyWith(ctx, ledger.VerifyOptions{Checkpoint: true}); err != nil || len(problems) > 0 {
		b.Fatalf("verify: %v %v", problems, err)
	}
	b.Logf("runs=%d: verify from a checkpoint after 1,000 more runs %s (catching up first: %s)", runs,
		time.Since(t0).Round(time.Millisecond), caught.Round(time.Millisecond))
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
	var oldest ledger.RunID // a text found twice, at the bottom of the trail
	first, err := st.Audit(ctx, ledger.AuditFilter{Kind: ledger.AuditAdmit, Limit: 1})
	if err != nil {
		tb.Fatal(err)
	}
	if len(first) > 0 {
		oldest = first[0].RunID
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
		{"audit/text-first-page", audit(ledger.AuditFilter{Text: "door=chat"})},
		{"audit/text-deep", audit(ledger.AuditFilter{Text: string(oldest)})},
		{"audit/text-nowhere", audit(ledger.AuditFilter{Text: "no such text"})},
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

// booksBytes logs what the file holds per run, by table and index
// (SQLite's dbstat), and in all.
func booksBytes(tb testing.TB, path string) {
	runs, sizes, err := ledgergen.Sizes(context.Background(), path)
	if err != nil {
		tb.Logf("sizes: %v", err)
		return
	}
	var total int64
	for _, s := range sizes {
		total += s.Bytes
		if s.Bytes*20 >= runs { // at least 0.05 byte a run
			tb.Logf("bytes/run %-28s %7.1f", s.Name, float64(s.Bytes)/float64(runs))
		}
	}
	tb.Logf("bytes/run %-28s %7.1f", "(all)", float64(total)/float64(runs))
}

// BenchmarkBooksAdmitCPU measures what a call costs the ledger in CPU (one
// durable Admit and one Settle, 64 callers, as the gateway makes them:
// time-ordered run ids, a body fingerprint) on the empty ledger, the one
// of 1,000 runs and the big one of BenchmarkBooks: the process's CPU
// microseconds per call (user+system, getrusage), the median of rounds
// that take turns between the ledgers so that the machine's other work
// falls on all of them alike, and its ratio to the empty ledger's (the
// cost should not grow with the ledger). Each round ends with the text
// index caught up, so that its work after commit is counted.
//
//	QUOTAGATE_BOOKS_LEDGER=/work/big/books.db go test -run '^$' -bench BenchmarkBooksAdmitCPU -benchtime 1x ./backend/sqlite/
func BenchmarkBooksAdmitCPU(b *testing.B) {
	const rounds, perRound = 7, 2000
	ledgers := booksLedgers(b)
	stores := make([]*sqlite.Store, len(ledgers))
	for i, l := range ledgers {
		st, err := sqlite.Open(l.path, sqlite.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { st.Close() })
		stores[i] = st
		booksCalls(b, st, 1<<41, 500) // warm: statements prepared, books and page cache read
	}
	perCall := make([][]float64, len(ledgers))
	for r := range rounds {
		for i, st := range stores {
			cpu0 := cpuTime()
			booksCalls(b, st, 1<<41+(r+1)*perRound, perRound)
			if err := st.IndexAuditText(context.Background(), 0); err != nil { // the calls' share of the text index
				b.Fatal(err)
			}
			perCall[i] = append(perCall[i], float64((cpuTime()-cpu0).Nanoseconds())/1e3/perRound)
		}
	}
	var empty float64
	for i, l := range ledgers {
		slices.Sort(perCall[i])
		med := perCall[i][rounds/2]
		if i == 0 {
			empty = med
		}
		b.Run(fmt.Sprintf("runs=%d", l.runs), func(b *testing.B) {
			b.ReportMetric(med, "cpu-µs/call")
			b.ReportMetric(empty, "empty-cpu-µs/call")
			b.ReportMetric(med/empty, "x-empty")
		})
		b.Logf("runs=%d: cpu-µs per call, rounds sorted: %.0f", l.runs, perCall[i])
	}
}

// booksCalls makes n calls (Admit, then Settle) from benchCallers callers,
// the i-th of them ledgergen's call first+i at the time it is made.
func booksCalls(b *testing.B, st *sqlite.Store, first, n int) {
	ctx := context.Background()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range benchCallers(b) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				c := ledgergen.Call(first+int(i), ledgergen.DefaultTenants, time.Now())
				if _, err := st.Admit(ctx, c.Admit); err != nil {
					b.Error(err)
					return
				}
				if _, err := st.Settle(ctx, c.Admit.RunID, c.Spent, c.Evidence, c.Admit.Actor); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
}

// BenchmarkLedgerBuild compares the two ways a big ledger is built through
// the store's own statements, on the same calls (ledgergen.Call) into fresh
// ledgers taking turns: 64 callers of Admit and Settle (group commit, how
// the books were built before ledgergen) and Bulk in transactions of
// 20,000 calls (how ledgergen builds them). It reports runs/s and the
// process's CPU microseconds per run.
//
//	go test -run '^$' -bench BenchmarkLedgerBuild -benchtime 1x ./backend/sqlite/
func BenchmarkLedgerBuild(b *testing.B) {
	const runs, rounds = 20_000, 2
	ctx := context.Background()
	ways := []struct {
		name  string
		build func(st *sqlite.Store)
	}{
		{"callers", func(st *sqlite.Store) { booksCalls(b, st, 0, runs) }},
		{"bulk", func(st *sqlite.Store) {
			calls := make([]sqlite.BulkCall, 0, runs)
			for i := range runs {
				calls = append(calls, ledgergen.Call(i, ledgergen.DefaultTenants, time.Now()))
			}
			if err := st.Bulk(ctx, calls); err != nil {
				b.Fatal(err)
			}
		}},
	}
	took := map[string][]time.Duration{}
	cpu := map[string][]time.Duration{}
	for range rounds {
		for _, way := range ways {
			path := filepath.Join(b.TempDir(), "ledger.db")
			if _, err := ledgergen.Build(ctx, path, ledgergen.Config{}); err != nil { // tenants only
				b.Fatal(err)
			}
			st, err := sqlite.Open(path, sqlite.Options{Synchronous: "OFF"})
			if err != nil {
				b.Fatal(err)
			}
			t0, cpu0 := time.Now(), cpuTime()
			way.build(st)
			took[way.name] = append(took[way.name], time.Since(t0))
			cpu[way.name] = append(cpu[way.name], cpuTime()-cpu0)
			if err := st.Close(); err != nil {
				b.Fatal(err)
			}
		}
	}
	for _, way := range ways {
		b.Run(way.name, func(b *testing.B) {
			slices.Sort(took[way.name])
			slices.Sort(cpu[way.name])
			b.ReportMetric(runs/took[way.name][0].Seconds(), "runs/s")
			b.ReportMetric(float64(cpu[way.name][0].Microseconds())/runs, "cpu-µs/run")
		})
	}
}
