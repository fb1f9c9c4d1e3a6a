package ledgergen_test

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/internal/ledgergen"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/sqlite"
)

// A built ledger verifies clean in full (quick_check, chain, balances, the
// per-run checks) with its spend rollup adding up; a second span appends
// after the first, and a span that would go back in time is refused.
func TestBuildVerifiesClean(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	jan := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	feb := jan.AddDate(0, 1, 0)
	cfg := ledgergen.Config{Runs: 3000, From: jan, To: feb, Chunk: 700, VerifyEvery: 1000}
	var heard []int
	cfg.Progress = func(runs int, _ time.Duration) { heard = append(heard, runs) }
	rep, err := ledgergen.Build(ctx, path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Runs != 3000 || len(heard) != 3 {
		t.Fatalf("report %+v, progress heard at %v: want 3000 runs, three verifies", rep, heard)
	}
	if _, err := ledgergen.Build(ctx, path, ledgergen.Config{Runs: 10, From: jan.AddDate(0, 0, 10), To: feb}); err == nil ||
		!strings.Contains(err.Error(), "only grow") {
		t.Fatalf("a span before the newest row: %v, want a refusal", err)
	}
	if _, err := ledgergen.Build(ctx, path, ledgergen.Config{Runs: 1200, From: feb, To: feb.AddDate(0, 1, 0)}); err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	problems, err := st.Verify(ctx)
	if err != nil || len(problems) > 0 {
		t.Fatalf("full verify: %v %v", problems, err)
	}
	if err := ledgergen.CheckSpend(ctx, st); err != nil {
		t.Fatal(err)
	}
	runs, err := st.Runs(ctx, ledger.RunFilter{Limit: 5000})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 4200 {
		t.Fatalf("%d runs, want 4200", len(runs))
	}
	inJan := 0
	for _, r := range runs {
		if r.Status != ledger.RunCompleted || r.HeldUnits != 0 {
			t.Fatalf("run %s is %s holding %d, want completed holding nothing", r.ID, r.Status, r.HeldUnits)
		}
		if r.CreatedAt.Before(jan) || !r.CreatedAt.Before(feb.AddDate(0, 1, 0)) {
			t.Fatalf("run %s created at %s, outside the spans", r.ID, r.CreatedAt)
		}
		if r.CreatedAt.Before(feb) {
			inJan++
		}
	}
	if inJan != 3000 {
		t.Fatalf("%d runs in January, want 3000", inJan)
	}
}

// BenchmarkBuild is the generator's speed: runs/s written (verify left
// out) and the process's CPU microseconds per run (user+system), which a
// shared machine moves less.
//
//	go test -run '^$' -bench BenchmarkBuild -benchtime 3x ./backend/internal/ledgergen/
func BenchmarkBuild(b *testing.B) {
	for range b.N {
		path := filepath.Join(b.TempDir(), "ledger.db")
		cpu0 := cpuTime(b)
		rep, err := ledgergen.Build(context.Background(), path, ledgergen.Config{Runs: 50_000})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(rep.Runs)/(rep.Took-rep.Verify).Seconds(), "runs/s")
		b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/float64(rep.Runs), "cpu-µs/run")
	}
}

func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
