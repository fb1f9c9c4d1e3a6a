package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/sqlite"
)

// BenchmarkAuditPage times the dashboard's audit page (50 rows newest first,
// as GET /admin/api/audit reads it) on a ledger of N settled runs (2N audit
// rows over ten tenants) against the same page on an empty ledger (x-empty)
// and on one of 1,000 runs, whose pages are as full (x-1k): no filter, a
// tenant and a kind, and no filter below a cursor half way down. N is
// 100,000, and 1,000,000 with QUOTAGATE_LONG=1.
//
//	go test -run '^$' -bench BenchmarkAuditPage -benchtime 2000x ./backend/sqlite/
func BenchmarkAuditPage(b *testing.B) {
	sizes := []int{0, 1_000, 100_000}
	if os.Getenv("QUOTAGATE_LONG") == "1" {
		sizes = append(sizes, 1_000_000)
	}
	base := map[int]map[string]float64{0: {}, 1_000: {}}
	for _, n := range sizes {
		st := MustOpenStore(b, sqlite.Options{Synchronous: "OFF"})
		t0 := time.Now()
		mid := settleRuns(b, st, n)
		b.Logf("a ledger of %d settled runs built in %s", n, time.Since(t0).Round(time.Millisecond))
		for _, page := range []struct {
			name string
			f    ledger.AuditFilter
		}{
			{"none", ledger.AuditFilter{}},
			{"tenant+kind", ledger.AuditFilter{TenantID: "t3", Kind: ledger.AuditSettle}},
			{"below-cursor", ledger.AuditFilter{BeforeSeq: mid}},
		} {
			b.Run(fmt.Sprintf("runs=%d/%s", n, page.name), func(b *testing.B) {
				f := page.f
				f.Newest, f.Limit = true, 50
				ctx := context.Background()
				b.ResetTimer()
				for range b.N {
					if _, err := st.Audit(ctx, f); err != nil {
						b.Fatal(err)
					}
				}
				per := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
				b.ReportMetric(per/1e6, "ms/page")
				if base[n] != nil {
					base[n][page.name] = per
				}
				if e := base[0][page.name]; n > 0 && e > 0 {
					b.ReportMetric(per/e, "x-empty")
				}
				if k := base[1_000][page.name]; n > 1_000 && k > 0 {
					b.ReportMetric(per/k, "x-1k")
				}
			})
		}
	}
}

// settleRuns admits and settles n runs through the store's own Admit and
// Settle, from many callers at once so that group commit writes them in
// batches of one transaction each, and returns the seq half way down the
// audit trail (1 on an empty ledger).
func settleRuns(tb testing.TB, st *sqlite.Store, n int) int64 {
	tb.Helper()
	ctx := context.Background()
	tenants := make([]ledger.Tenant, 10)
	for i := range tenants {
		tenants[i] = ledger.Tenant{ID: fmt.Sprint("t", i), BudgetUnits: ledger.MaxUnits, MaxConcurrent: 1 << 30}
	}
	if err := st.ApplyTenants(ctx, tenants, ledger.ActorConfig); err != nil {
		tb.Fatal(err)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				id := ledger.RunID(fmt.Sprint("r", i))
				tenant := fmt.Sprint("t", i%10)
				actor := ledger.TenantActor(tenant) // as the gateway writes a tenant's call
				_, err := st.Admit(ctx, ledger.AdmitRequest{RunID: id, TenantID: tenant,
					Upstream: "demo", Model: "demo-model", ReserveUnits: 102, Actor: actor})
				if err == nil {
					_, err = st.Settle(ctx, id, 40, "usage", actor)
				}
				if err != nil {
					tb.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if tb.Failed() {
		tb.FailNow()
	}
	return int64(n) + 1
}
