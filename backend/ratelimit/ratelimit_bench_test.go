package ratelimit_test

import (
	"sync"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ratelimit"
)

// BenchmarkAllow measures one Allow on a limited tenant (10/min, 120/h, the
// seed 003 figures) with the clock moving 250 ms per call, so both admits
// and refusals are on the path. The baseline is the least any limiter must
// pay: one mutex round trip around a counter.
func BenchmarkAllow(b *testing.B) {
	b.Run("limiter", func(b *testing.B) {
		now := time.Date(2026, 10, 14, 0, 0, 0, 0, time.UTC)
		l := ratelimit.New(ratelimit.Options{Now: func() time.Time { return now }})
		l.SetLimits("alice", ratelimit.Limits{PerMinute: 10, PerHour: 120})
		b.ReportAllocs()
		for b.Loop() {
			now = now.Add(250 * time.Millisecond)
			l.Allow("alice")
		}
	})
	b.Run("baseline-mutex", func(b *testing.B) {
		var mu sync.Mutex
		n := 0
		b.ReportAllocs()
		for b.Loop() {
			mu.Lock()
			n++
			mu.Unlock()
		}
		_ = n
	})
	b.Run("limiter-parallel-8-tenants", func(b *testing.B) {
		l := ratelimit.New(ratelimit.Options{})
		ids := []string{"t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7"}
		for _, id := range ids {
			l.SetLimits(id, ratelimit.Limits{PerMinute: 10, PerHour: 120})
		}
		b.ReportAllocs()
		var next sync.Mutex
		i := 0
		b.RunParallel(func(pb *testing.PB) {
			next.Lock()
			id := ids[i%len(ids)]
			i++
			next.Unlock()
			for pb.Next() {
				l.Allow(id)
			}
		})
	})
	b.Run("baseline-mutex-parallel", func(b *testing.B) {
		var mu sync.Mutex
		n := 0
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				mu.Lock()
				n++
				mu.Unlock()
			}
		})
		_ = n
	})
}
