package sqlite_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/sqlite"
)

// BenchmarkAdmit measures durable admissions (WAL, synchronous=FULL) with
// group commit against the direct baseline of one transaction (one fsync)
// per admission, for 1 and 64 concurrent callers. Reported: admissions/s and
// the p50/p99 latency of one Admit call.
//
//	go test -run '^$' -bench BenchmarkAdmit -benchtime 4000x ./backend/sqlite/
func BenchmarkAdmit(b *testing.B) {
	for _, mode := range []struct {
		name     string
		maxBatch int
	}{
		{"one-tx-per-admit", 1},
		{"group-commit", 0},
	} {
		for _, callers := range []int{1, 64} {
			b.Run(fmt.Sprintf("%s/callers=%d", mode.name, callers), func(b *testing.B) {
				benchAdmit(b, sqlite.Options{MaxBatch: mode.maxBatch}, callers)
			})
		}
	}
}

func benchAdmit(b *testing.B, opts sqlite.Options, callers int) {
	st := MustOpenStore(b, opts)
	ctx := context.Background()
	if err := st.ApplyTenants(ctx, []ledger.Tenant{{ID: "t", BudgetUnits: ledger.MaxUnits, MaxConcurrent: 1 << 30}}, ledger.System("bench")); err != nil {
		b.Fatal(err)
	}
	var next atomic.Int64
	lat := make([][]time.Duration, callers)
	before := st.Stats()
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for c := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				t0 := time.Now()
				_, err := st.Admit(ctx, ledger.AdmitRequest{RunID: ledger.RunID(fmt.Sprint("r", i)), TenantID: "t",
					Upstream: "demo", Model: "demo-model", ReserveUnits: 102, Actor: ledger.System("bench")})
				lat[c] = append(lat[c], time.Since(t0))
				if err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	all := slices.Concat(lat...)
	slices.Sort(all)
	if len(all) == 0 {
		return
	}
	pct := func(p float64) float64 { return float64(all[int(p*float64(len(all)-1))].Microseconds()) / 1000 }
	b.ReportMetric(float64(len(all))/elapsed.Seconds(), "admits/s")
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	after := st.Stats()
	b.ReportMetric(float64(after.Writes-before.Writes)/float64(max(1, after.Batches-before.Batches)), "admits/commit")
}
