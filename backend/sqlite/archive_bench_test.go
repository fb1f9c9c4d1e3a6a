package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/sqlite"
)

// benchClock is a clock a benchmark moves: the generator's runs end in
// October 2026, the benchmark itself runs in December.
type benchClock struct{ ns atomic.Int64 }

func (c *benchClock) set(t time.Time)       { c.ns.Store(t.UnixNano()) }
func (c *benchClock) now() time.Time        { return time.Unix(0, c.ns.Load()) }
func newBenchClock(t time.Time) *benchClock { c := &benchClock{}; c.set(t); return c }

var (
	october  = time.Date(2026, 10, 15, 12, 0, 0, 0, time.UTC)
	november = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	december = time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
)

// benchLedger is a durable ledger (synchronous FULL) at a path of its own,
// filled with n settled runs that ended in October 2026 by settleRuns
// (synchronous OFF while it fills, as the generator is not what is
// measured).
func benchLedger(b *testing.B, n int) (*sqlite.Store, string, *benchClock) {
	b.Helper()
	path := filepath.Join(b.TempDir(), "ledger.db")
	clk := newBenchClock(october)
	fill, err := sqlite.Open(path, sqlite.Options{Synchronous: "OFF", Now: clk.now})
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	settleRuns(b, fill, n)
	if err := fill.Close(); err != nil {
		b.Fatal(err)
	}
	b.Logf("a ledger of %d settled runs built in %s", n, time.Since(t0).Round(time.Millisecond))
	st, err := sqlite.Open(path, sqlite.Options{Now: clk.now})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return st, path, clk
}

func benchSizes(short, long int) []int {
	if os.Getenv("QUOTAGATE_LONG") == "1" {
		return []int{0, short, long}
	}
	return []int{0, short}
}

// BenchmarkVerifyCheckpoint times `quotagate verify` on a ledger of N
// settled runs: the full replay that writes the first checkpoint, then,
// after 1,000 more runs, the replay from that checkpoint — against the
// same on an empty ledger. N is 100,000, and 1,000,000 with
// QUOTAGATE_LONG=1.
//
//	QUOTAGATE_LONG=1 go test -run '^$' -bench BenchmarkVerifyCheckpoint -benchtime 1x -timeout 60m ./backend/sqlite/
func BenchmarkVerifyCheckpoint(b *testing.B) {
	for _, n := range benchSizes(100_000, 1_000_000) {
		b.Run(fmt.Sprintf("runs=%d", n), func(b *testing.B) {
			st, _, clk := benchLedger(b, n)
			ctx := context.Background()
			for range b.N {
				t0 := time.Now()
				wantCleanB(b, st, ledger.VerifyOptions{Full: true, Checkpoint: true})
				full := time.Since(t0)
				clk.set(december)
				addRuns(b, st, fmt.Sprint("more", b.N), 1_000)
				t0 = time.Now()
				wantCleanB(b, st, ledger.VerifyOptions{Checkpoint: true})
				b.ReportMetric(full.Seconds(), "s-full")
				b.ReportMetric(time.Since(t0).Seconds(), "s-from-checkpoint")
			}
			_ = ctx
		})
	}
}

// BenchmarkArchiveMonth archives a month of N settled runs (October 2026)
// while one caller admits and settles runs of December: the archive's
// time (and of it, writing the file), the bytes it freed in the ledger
// file and the archive file's size, the longest admission meanwhile (it
// waits for at most one part's commit), the longest part (its
// transaction and reading it back from the file), and a full verify
// after. N is 100,000, and 1,500,000 with
// QUOTAGATE_LONG=1.
//
//	QUOTAGATE_LONG=1 go test -run '^$' -bench BenchmarkArchiveMonth -benchtime 1x -timeout 60m ./backend/sqlite/
func BenchmarkArchiveMonth(b *testing.B) {
	for _, n := range benchSizes(100_000, 1_500_000) {
		b.Run(fmt.Sprintf("runs=%d", n), func(b *testing.B) {
			if b.N > 1 {
				b.Skip("one archive per ledger: -benchtime 1x")
			}
			st, path, clk := benchLedger(b, n)
			archiveMonthBench(b, st, path, clk, int64(n))
		})
	}
}

// BenchmarkArchiveLedger is BenchmarkArchiveMonth on the ledger file
// QUOTAGATE_ARCHIVE_LEDGER names, whose October 2026 it archives (and so
// consumes): a month built by ledgergen, faster than settleRuns;
// QUOTAGATE_ARCHIVE_PART_RUNS sets the runs a part.
//
//	go run ./backend/internal/ledgergen/cmd/ledgergen -ledger /work/big/m.db -runs 1500000 -from 2026-10-01 -to 2026-11-01
//	QUOTAGATE_ARCHIVE_LEDGER=/work/big/m.db go test -run '^$' -bench BenchmarkArchiveLedger -benchtime 1x -timeout 2h ./backend/sqlite/
func BenchmarkArchiveLedger(b *testing.B) {
	path := os.Getenv("QUOTAGATE_ARCHIVE_LEDGER")
	if path == "" || b.N > 1 {
		b.Skip("QUOTAGATE_ARCHIVE_LEDGER names no ledger to archive (one archive per ledger: -benchtime 1x)")
	}
	clk := newBenchClock(december)
	part, _ := strconv.Atoi(os.Getenv("QUOTAGATE_ARCHIVE_PART_RUNS")) // 0: the default
	st, err := sqlite.Open(path, sqlite.Options{Now: clk.now, ArchivePartRuns: part})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	archiveMonthBench(b, st, path, clk, -1)
}

// archiveMonthBench archives October 2026 of st (n runs; -1: whatever it
// holds) while admitting runs of December, and reports the figures.
func archiveMonthBench(b *testing.B, st *sqlite.Store, path string, clk *benchClock, n int64) {
	ctx := context.Background()
	clk.set(december)
	size0 := fileBytes(path)
	stop, longest := admitMeanwhile(b, st)
	file := filepath.Join(b.TempDir(), "2026-10.jsonl.gz")
	parts := partClock()
	t0 := time.Now()
	res, err := st.ArchiveMonth(ctx, "2026-10", november, file, ledger.Operator("bench"))
	took := time.Since(t0)
	stop()
	written, longestPart := parts()
	if err != nil || (n >= 0 && res.Runs != n) {
		b.Fatalf("archived %d of %d runs: %v", res.Runs, n, err)
	}
	freed, err := st.FreeBytes(ctx)
	if err != nil {
		b.Fatal(err)
	}
	t0 = time.Now()
	wantCleanB(b, st, ledger.VerifyOptions{Full: true})
	b.Logf("archived %d runs, %d audit rows, %d summaries", res.Runs, res.Rows, len(res.Summaries))
	b.ReportMetric(took.Seconds(), "s-archive")
	b.ReportMetric(float64(size0)/1e6, "MB-ledger")
	b.ReportMetric(float64(freed)/1e6, "MB-freed")
	b.ReportMetric(float64(fileBytes(file))/1e6, "MB-file")
	b.ReportMetric(float64(longest().Milliseconds()), "ms-longest-admission")
	b.ReportMetric(written.Seconds(), "s-file-written")
	b.ReportMetric(float64(longestPart.Milliseconds()), "ms-longest-part")
	b.ReportMetric(time.Since(t0).Seconds(), "s-verify-after")
}

// partClock times archiving's steps (until the returned func is called):
// how long the file took to write, and the longest time from one part's
// start to the next's.
func partClock() func() (written, longestPart time.Duration) {
	var mu sync.Mutex
	t0 := time.Now()
	var written, longest time.Duration
	last := time.Time{}
	undo := sqlite.SetArchiveStep(func(step string) error {
		mu.Lock()
		defer mu.Unlock()
		now := time.Now()
		switch {
		case step == "renamed":
			written, last = now.Sub(t0), now
		case strings.HasPrefix(step, "part "):
			longest, last = max(longest, now.Sub(last)), now
		}
		return nil
	})
	return func() (time.Duration, time.Duration) {
		undo()
		mu.Lock()
		defer mu.Unlock()
		return written, longest
	}
}

func wantCleanB(b *testing.B, st *sqlite.Store, opts ledger.VerifyOptions) {
	b.Helper()
	problems, err := st.VerifyWith(context.Background(), opts)
	if err != nil || len(problems) > 0 {
		b.Fatalf("verify %+v: %q, %v", opts, problems, err)
	}
}

// addRuns admits and settles n runs of tenant t0, one at a time.
func addRuns(b *testing.B, st *sqlite.Store, prefix string, n int) {
	b.Helper()
	for i := range n {
		id := ledger.RunID(fmt.Sprint(prefix, "-", i))
		if err := admitSettle(st, id); err != nil {
			b.Fatal(err)
		}
	}
}

func admitSettle(st *sqlite.Store, id ledger.RunID) error {
	ctx := context.Background()
	actor := ledger.System("bench")
	_, err := st.Admit(ctx, ledger.AdmitRequest{RunID: id, TenantID: "t0", Upstream: "demo", Model: "demo-model",
		ReserveUnits: 102, Actor: actor})
	if err == nil {
		_, err = st.Settle(ctx, id, 40, "usage", actor)
	}
	return err
}

// admitMeanwhile admits and settles runs one after another until stop,
// and reports the longest admission.
func admitMeanwhile(b *testing.B, st *sqlite.Store) (stop func(), longest func() time.Duration) {
	var done atomic.Bool
	var worst atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; !done.Load(); i++ {
			t0 := time.Now()
			if err := admitSettle(st, ledger.RunID(fmt.Sprint("meanwhile-", i))); err != nil {
				b.Error(err)
				return
			}
			if d := int64(time.Since(t0)); d > worst.Load() {
				worst.Store(d)
			}
		}
	}()
	return func() { done.Store(true); wg.Wait() }, func() time.Duration { return time.Duration(worst.Load()) }
}

func fileBytes(path string) int64 {
	var n int64
	for _, p := range []string{path, path + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			n += fi.Size()
		}
	}
	return n
}
