package quota_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/quota"
)

// BenchmarkCheck is the gateway's per-request cost of the guard; the
// baseline is the least any check can cost: a mutex and a struct copy.
func BenchmarkCheck(b *testing.B) {
	c := &clock{t: at("2026-08-13", "10:00:00")}
	st := openStore(b, c.Now)
	g, err := quota.NewGuard(st, []quota.ModelOptions{{Upstream: ark, Model: flash}}, nil, c.Now, nil)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := g.SetB0(context.Background(), ark, flash, 2_000_000); err != nil {
		b.Fatal(err)
	}
	b.Run("Guard", func(b *testing.B) {
		for b.Loop() {
			if _, err := g.Check(ark, flash); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("BaselineMutexCopy", func(b *testing.B) {
		var mu sync.Mutex
		qc := ledger.QuotaCheck{Day: "2026-08-13", LimitUnits: 1_950_000}
		for b.Loop() {
			mu.Lock()
			c := qc
			mu.Unlock()
			_ = &c
		}
	})
}

// BenchmarkAssess is the cost of one sync's limit (lag fit + B0) with a
// day of 5-minute readings; the baseline is v6's arithmetic.
func BenchmarkAssess(b *testing.B) {
	o := quota.DefaultOptions()
	start := at("2026-08-13", "00:00:00")
	s := &quota.Series{}
	var snaps []ledger.Snapshot
	var cum ledger.Units
	for i := 0; i < 24*60; i++ {
		m := start.Add(time.Duration(i) * time.Minute)
		u := ledger.Units(i % 1700)
		s.Add(m, u)
		cum += u
		if i%5 == 0 {
			snaps = append(snaps, ledger.Snapshot{Day: "2026-08-13", At: m, BalanceUnits: 3_000_000 - cum, UsageAtSync: cum})
		}
	}
	now := start.Add(24*time.Hour - time.Minute)
	b.Run("Quotagate", func(b *testing.B) {
		for b.Loop() {
			_ = quota.Assess(o, now, snaps, s)
		}
	})
	b.Run("BaselineV6", func(b *testing.B) {
		last := snaps[len(snaps)-1]
		for b.Loop() {
			_ = quota.LimitV6(o, last.BalanceUnits, last.UsageAtSync)
		}
	})
}
