package ledgertest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
)

func timeZero() time.Time  { return time.Time{} }
func farFuture() time.Time { return time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC) }

// RunConcurrency races many callers against one small budget while observers
// read balances: never negative, spent + held + available = budget at every
// observation, never more active runs than allowed.
func RunConcurrency(t *testing.T, open Opener) {
	t.Run("SixClientsBudget", func(t *testing.T) {
		// Seed 000 §15.1: six clients at once; 6 × 22 > 110, so exactly five fit.
		st := open(t)
		MustApply(t, st, Tenant("tenant-a", 110, 6))
		admitted, codes := burst(t, st, "tenant-a", 6, 22, 6)
		if admitted != 5 || codes[ledger.CodeInsufficientBudget] != 1 {
			t.Fatalf("admitted %d, refusals %v; want 5 and one insufficient_budget", admitted, codes)
		}
		WantBalance(t, st, ledger.Balance{TenantID: "tenant-a", BudgetUnits: 110, HeldUnits: 110, Active: 5})
		WantVerified(t, st)
	})
	t.Run("SixClientsConcurrency", func(t *testing.T) {
		// Seed 000 §15.1 with TenantPolicy(max_concurrent=1): the budget would
		// allow five, the concurrency limit allows one.
		st := open(t)
		MustApply(t, st, Tenant("tenant-a", 110, 1))
		admitted, codes := burst(t, st, "tenant-a", 6, 22, 6)
		if admitted != 1 || codes[ledger.CodeConcurrencyLimit] != 5 {
			t.Fatalf("admitted %d, refusals %v; want 1 and five concurrency_limit", admitted, codes)
		}
		WantBalance(t, st, ledger.Balance{TenantID: "tenant-a", BudgetUnits: 110, HeldUnits: 22, AvailableUnits: 88, Active: 1})
		WantVerified(t, st)
	})
	t.Run("TwoHundredGoroutines", func(t *testing.T) {
		// RELIABILITY T01: budget 1,000, 200 callers reserving 102 at once: 9 fit (918).
		st := open(t)
		MustApply(t, st, Tenant("t", 1000, 1000))
		admitted, codes := burst(t, st, "t", 200, 102, 1000)
		if admitted != 9 || codes[ledger.CodeInsufficientBudget] != 191 {
			t.Fatalf("admitted %d, refusals %v; want 9 and 191 insufficient_budget", admitted, codes)
		}
		WantBalance(t, st, ledger.Balance{TenantID: "t", BudgetUnits: 1000, HeldUnits: 918, AvailableUnits: 82, Active: 9})
		audit, _ := st.Audit(context.Background(), ledger.AuditFilter{TenantID: "t"})
		var admits, rejects int64
		for _, e := range audit {
			switch e.Kind {
			case ledger.AuditAdmit:
				admits++
			case ledger.AuditReject:
				rejects += e.Count // refusals of one code share a row per interval
			}
		}
		if admits != 9 || rejects != 191 {
			t.Fatalf("audit has %d admits and counts %d rejects, want 9 and 191", admits, rejects)
		}
		WantVerified(t, st)
	})
	t.Run("TwoHundredGoroutinesChurn", func(t *testing.T) {
		st := open(t)
		const budget, maxConc = 600, 3
		MustApply(t, st, Tenant("t", budget, maxConc))
		stop := observe(t, st, map[string]int{"t": maxConc})
		var wg sync.WaitGroup
		var admitted, refused atomic.Int64
		for g := range 200 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(g), 7))
				ctx := context.Background()
				for i := range 3 {
					id := ledger.RunID(fmt.Sprintf("g%d-%d", g, i))
					reserve := ledger.Units(1 + rng.IntN(120))
					_, err := st.Admit(ctx, ledger.AdmitRequest{RunID: id, TenantID: "t", Upstream: "u", Model: "m", ReserveUnits: reserve})
					if err != nil {
						switch ledger.ErrorCode(err) {
						case ledger.CodeInsufficientBudget, ledger.CodeConcurrencyLimit:
							refused.Add(1)
							continue
						}
						t.Errorf("admit %s: %v", id, err)
						return
					}
					admitted.Add(1)
					switch rng.IntN(4) {
					case 0, 1:
						_, err = st.Settle(ctx, id, ledger.Units(rng.Int64N(int64(reserve)+1)), "usage", by)
					case 2:
						_, err = st.ReleaseHold(ctx, id, ledger.RunFailed, "HTTP 502 before output", by)
					case 3:
						if _, err = st.KeepHold(ctx, id, ledger.RunInterrupted, "cut", by); err == nil && rng.IntN(2) == 0 {
							_, err = st.Reconcile(ctx, id, ledger.Units(rng.Int64N(int64(reserve)+1)), "bill", ledger.ActorAdmin)
						}
					}
					if err != nil {
						t.Errorf("end %s: %v", id, err)
						return
					}
				}
			}()
		}
		wg.Wait()
		stop()
		if admitted.Load() == 0 || refused.Load() == 0 {
			t.Fatalf("admitted %d, refused %d: the race did not exercise both outcomes", admitted.Load(), refused.Load())
		}
		b, err := st.Balance(context.Background(), "t")
		if err != nil {
			t.Fatal(err)
		}
		if b.Active != 0 || b.SpentUnits+b.HeldUnits+b.AvailableUnits != budget {
			t.Fatalf("final balance %+v", b)
		}
		WantVerified(t, st)
	})
}

// burst releases n callers at once, each admitting reserve units, and returns
// how many were admitted and the refusal codes.
func burst(t *testing.T, st ledger.Store, tenant string, n int, reserve ledger.Units, maxConc int) (int, map[string]int) {
	t.Helper()
	stop := observe(t, st, map[string]int{tenant: maxConc})
	admitted, codes := race(t, n, func(i int) error {
		_, err := st.Admit(context.Background(), ledger.AdmitRequest{RunID: ledger.RunID(fmt.Sprint("burst-", i)),
			TenantID: tenant, Upstream: "demo", Model: "demo-model", ReserveUnits: reserve, Actor: ledger.TenantActor(tenant)})
		return err
	})
	stop()
	return admitted, codes
}

// race releases n callers of admit at once and returns how many succeeded
// and the codes of the refusals.
func race(t *testing.T, n int, admit func(i int) error) (int, map[string]int) {
	t.Helper()
	start := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	admitted, codes := 0, map[string]int{}
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			err := admit(i)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				codes[ledger.ErrorCode(err)]++
				return
			}
			admitted++
		}()
	}
	close(start)
	wg.Wait()
	return admitted, codes
}

// observe polls Balances from two goroutines until the returned stop is
// called, failing t on any broken invariant. Each observer checks at least
// once before it looks at stop.
func observe(t *testing.T, st ledger.Store, maxConc map[string]int) (stop func()) {
	t.Helper()
	done := make(chan struct{})
	var wg sync.WaitGroup
	budgets := map[string]ledger.Units{}
	bs, err := st.Balances(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bs {
		budgets[b.TenantID] = b.BudgetUnits
	}
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				bs, err := st.Balances(context.Background())
				if err != nil {
					t.Errorf("balances: %v", err)
					return
				}
				for _, b := range bs {
					if err := b.Check(); err != nil {
						t.Errorf("observed: %v", err)
					}
					if b.SpentUnits+b.HeldUnits+b.AvailableUnits != budgets[b.TenantID] {
						t.Errorf("observed %+v: spent + held + available != budget %d", b, budgets[b.TenantID])
					}
					if m, ok := maxConc[b.TenantID]; ok && b.Active > m {
						t.Errorf("observed %+v: more than %d active", b, m)
					}
				}
				// A short pause between polls leaves the CPU to the writer on
				// small machines; it paces the observer, it waits for nothing.
				select {
				case <-done:
					return
				case <-time.After(200 * time.Microsecond):
				}
			}
		}()
	}
	return func() {
		close(done)
		wg.Wait()
	}
}
