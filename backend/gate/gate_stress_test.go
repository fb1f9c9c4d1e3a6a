package gate_test

import (
	"context"
	"flag"
	"math/rand/v2"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/gate"
)

var seedFlag = flag.Uint64("seed", 0, "replay the gate stress test with this seed (0: random)")

// TestStressNoSlotLeaks drives one gate from many goroutines with random
// holds, cancellations, abandons and timeouts (real clock, -race), then
// checks: never more than max_concurrent holders at once, every slot back at
// the end, and every Enter accounted for exactly once.
func TestStressNoSlotLeaks(t *testing.T) {
	seed := *seedFlag
	if seed == 0 {
		seed = rand.Uint64()
	}
	rounds := 200
	if os.Getenv("QUOTAGATE_LONG") == "1" {
		rounds = 5000
	}
	rng := rand.New(rand.NewPCG(seed, 0))
	opts := gate.Options{MaxConcurrent: 1 + rng.IntN(3), MaxWaiters: rng.IntN(6) - 1, MaxWait: time.Duration(1+rng.IntN(3)) * time.Millisecond}
	t.Logf("seed %d (replay with -seed=%d), options %+v", seed, seed, opts)
	g := gate.New("stress", opts)

	var holders, maxHolders, enters, refusedAtEnter atomic.Int64
	var wg sync.WaitGroup
	for w := range 16 {
		wseed := rng.Uint64()
		wg.Go(func() {
			r := rand.New(rand.NewPCG(wseed, uint64(w)))
			for range rounds {
				ctx, cancel := context.WithCancel(context.Background())
				switch r.IntN(4) {
				case 0:
					cancel()
				case 1:
					time.AfterFunc(time.Duration(r.IntN(300))*time.Microsecond, cancel)
				}
				enters.Add(1)
				tk, err := g.Enter()
				if err != nil {
					refusedAtEnter.Add(1)
					cancel()
					continue
				}
				if r.IntN(8) == 0 {
					tk.Abandon()
					cancel()
					continue
				}
				rel, err := tk.Wait(ctx)
				if err == nil {
					n := holders.Add(1)
					for {
						m := maxHolders.Load()
						if n <= m || maxHolders.CompareAndSwap(m, n) {
							break
						}
					}
					for range r.IntN(50) {
						runtime.Gosched()
					}
					holders.Add(-1)
					rel()
					if r.IntN(4) == 0 {
						rel() // double release must not free a second slot
					}
				}
				cancel()
			}
		})
	}
	wg.Wait()

	s := g.State()
	t.Logf("admitted %d rejected %d timed_out %d cancelled %d wait_p95 %d ms", s.Admitted, s.Rejected, s.TimedOut, s.Cancelled, s.WaitP95MS)
	if s.InFlight != 0 || s.Queued != 0 {
		t.Fatalf("seed %d: leaked: in_flight %d queued %d", seed, s.InFlight, s.Queued)
	}
	if m := maxHolders.Load(); m > int64(s.MaxConcurrent) {
		t.Fatalf("seed %d: %d holders at once, max_concurrent %d", seed, m, s.MaxConcurrent)
	}
	if got := s.Admitted + s.Rejected + s.TimedOut + s.Cancelled; got != uint64(enters.Load()) {
		t.Fatalf("seed %d: admitted+rejected+timed_out+cancelled = %d, want %d enters (%+v)", seed, got, enters.Load(), s)
	}
	if s.Rejected != uint64(refusedAtEnter.Load()) {
		t.Fatalf("seed %d: rejected %d, refusals seen %d", seed, s.Rejected, refusedAtEnter.Load())
	}
	// The gate still works at full width afterwards.
	var rels []func()
	for range s.MaxConcurrent {
		tk, err := g.Enter()
		if err != nil || tk.Queued() {
			t.Fatalf("seed %d: after the stress a free slot was missing (err %v)", seed, err)
		}
		rel, _ := tk.Wait(context.Background())
		rels = append(rels, rel)
	}
	for _, r := range rels {
		r()
	}
}
