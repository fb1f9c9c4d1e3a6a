package postgres_test

import (
	"context"

	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/ledger/ledgertest"
	"github.com/quotagate/quotagate/backend/postgres"
	"github.com/quotagate/quotagate/backend/postgres/pgtest"
)

// BenchmarkVerifyCheckpoint times `quotagate verify` on a shared
// PostgreSQL ledger of N settled runs: the full replay that writes the
// first checkpoint, then, after 1,000 more runs, the replay from that
// checkpoint — against the same on an empty ledger. N is 10,000, and
// 200,000 with QUOTAGATE_LONG=1. The ledger is built through the store's
// own Admit and Settle, 64 callers, ten tenants.
//
//	QUOTAGATE_LONG=1 go test -run '^$' -bench BenchmarkVerifyCheckpoint -benchtime 1x -timeout 60m ./backend/postgres/
func BenchmarkVerifyCheckpoint(b *testing.B) {
	sizes := []int{0, 10_000}
	if os.Getenv("QUOTAGATE_LONG") == "1" {
		sizes = append(sizes, 200_000)
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("runs=%d", n), func(b *testing.B) {
			dsn := pgtest.DSN(b)
			st := mustOpen(b, dsn, postgres.Options{})
			b.Cleanup(func() { st.Close() })
			tenants := make([]ledger.Tenant, 10)
			for i := range tenants {
				tenants[i] = ledgertest.Tenant(fmt.Sprintf("t%d", i), 1<<50, 1000)
			}
			ledgertest.MustApply(b, st, tenants...)
			t0 := time.Now()
			settleRuns(b, st, "run", n)
			b.Logf("built %d runs in %s", n, time.Since(t0))
			analyze(b, dsn)
			for i := range b.N {
				t0 := time.Now()
				wantCleanBench(b, st, ledger.VerifyOptions{Full: true, Checkpoint: true})
				full := time.Since(t0)
				settleRuns(b, st, fmt.Sprint("more", i), 1_000)
				analyze(b, dsn)
				t0 = time.Now()
				replayed := wantCleanBench(b, st, ledger.VerifyOptions{Checkpoint: true})
				b.ReportMetric(full.Seconds(), "s-full")
				b.ReportMetric(time.Since(t0).Seconds(), "s-from-checkpoint")
				b.ReportMetric(float64(replayed), "rows-replayed")
			}
		})
	}
}

// analyze has PostgreSQL gather the tables' statistics, as autovacuum does
// soon after a table grows by a tenth: a verify right after a ledger grew
// from nothing would otherwise be planned for empty tables.
func analyze(b *testing.B, dsn string) {
	b.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `ANALYZE`); err != nil {
		b.Fatal(err)
	}
}

func wantCleanBench(b *testing.B, st *postgres.Store, opts ledger.VerifyOptions) (replayed int) {
	b.Helper()
	problems, _, replayed, err := postgres.VerifyFrom(context.Background(), st, opts)
	if err != nil || len(problems) > 0 {
		b.Fatalf("verify %+v: %q, %v", opts, problems, err)
	}
	return replayed
}

// settleRuns admits and settles n runs named prefix-i over ten tenants,
// 64 callers at once.
func settleRuns(b *testing.B, st *postgres.Store, prefix string, n int) {
	b.Helper()
	ctx := context.Background()
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < n && failed.Load() == nil; i = int(next.Add(1)) - 1 {
				id := ledger.RunID(fmt.Sprintf("%s-%d", prefix, i))
				if _, err := st.Admit(ctx, ledger.AdmitRequest{RunID: id, TenantID: fmt.Sprintf("t%d", i%10),
					ReserveUnits: 50, Upstream: "demo", Model: "demo-model"}); err != nil {
					failed.Store(err)
					return
				}
				if _, err := st.Settle(ctx, id, ledger.Units(10+i%30), "usage", ledger.System("bench")); err != nil {
					failed.Store(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
}
