package sqlite_test

import (
	"context"
	"crypto/rand"
	"fmt"
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
// callers, reported as the process's CPU microseconds per call (user+system,
// from getrusage): on a shared machine CPU per call means more than wall time
// (issue 15). -prefill N first records N calls, to see whether the cost grows
// with the ledger.
//
//	go test -run '^$' -bench BenchmarkAdmitSettleCPU -benchtime 4000x ./backend/sqlite/
func BenchmarkAdmitSettleCPU(b *testing.B) {
	for _, tc := range []struct {
		prefill int
		ids     string
	}{{0, "time-ordered"}, {20000, "time-ordered"}, {20000, "random"}} {
		prefill := tc.prefill
		b.Run(fmt.Sprintf("prefill=%d/ids=%s", prefill, tc.ids), func(b *testing.B) {
			st := MustOpenStore(b, sqlite.Options{})
			ctx := context.Background()
			if err := st.ApplyTenants(ctx, []ledger.Tenant{{ID: "t", BudgetUnits: ledger.MaxUnits, MaxConcurrent: 1 << 30}}, "bench"); err != nil {
				b.Fatal(err)
			}
			var next atomic.Int64
			calls := func(n int64) {
				var wg sync.WaitGroup
				for range 64 {
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
							if _, err := st.Admit(ctx, ledger.AdmitRequest{RunID: id, TenantID: "t", Upstream: "u", Model: "m", ReserveUnits: 100}); err != nil {
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
			calls(int64(prefill))
			cpu0 := cpuTime()
			b.ResetTimer()
			calls(int64(prefill + b.N))
			b.StopTimer()
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/call")
		})
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
