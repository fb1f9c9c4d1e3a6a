package gate_test

import (
	"context"
	"testing"

	"github.com/quotagate/quotagate/backend/gate"
)

// BenchmarkAcquireRelease measures an uncontended slot round trip against
// the simplest semaphore Go offers, a buffered channel. The gate pays for
// FIFO hand-off, counters and the wait histogram.
func BenchmarkAcquireRelease(b *testing.B) {
	ctx := context.Background()
	b.Run("gate", func(b *testing.B) {
		g := gate.New("bench", gate.Options{MaxConcurrent: 2})
		b.ReportAllocs()
		for b.Loop() {
			rel, err := g.Acquire(ctx)
			if err != nil {
				b.Fatal(err)
			}
			rel()
		}
	})
	b.Run("gates-by-name", func(b *testing.B) {
		gs := gate.NewGates()
		gs.Set("demo", gate.Options{MaxConcurrent: 2})
		gs.Set("ark", gate.Options{MaxConcurrent: 2})
		b.ReportAllocs()
		for b.Loop() {
			rel, err := gs.Acquire(ctx, "demo")
			if err != nil {
				b.Fatal(err)
			}
			rel()
		}
	})
	b.Run("baseline-chan-semaphore", func(b *testing.B) {
		sem := make(chan struct{}, 2)
		b.ReportAllocs()
		for b.Loop() {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				b.Fatal(ctx.Err())
			}
			<-sem
		}
	})
	b.Run("gate-parallel-contended", func(b *testing.B) {
		g := gate.New("bench", gate.Options{MaxConcurrent: 2, MaxWaiters: 1 << 20, MaxWait: 1 << 40})
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				rel, err := g.Acquire(ctx)
				if err != nil {
					b.Error(err)
					return
				}
				rel()
			}
		})
	})
	b.Run("baseline-chan-semaphore-parallel", func(b *testing.B) {
		sem := make(chan struct{}, 2)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				sem <- struct{}{}
				<-sem
			}
		})
	})
}
