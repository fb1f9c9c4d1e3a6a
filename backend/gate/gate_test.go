package gate_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"testing/synctest"
	"time"

	"github.com/quotagate/quotagate/backend/gate"
	"github.com/quotagate/quotagate/backend/ledger"
)

// result is what a background Acquire reports.
type result struct {
	id      int
	release func()
	err     error
	waited  time.Duration
}

// acquireAsync starts Acquire in a goroutine; the outcome arrives on the
// returned channel. Inside a synctest bubble, synctest.Wait() then tells
// that the goroutine is parked in the queue (or done).
func acquireAsync(ctx context.Context, g *gate.Gate, id int) <-chan result {
	ch := make(chan result, 1)
	go func() {
		start := time.Now()
		rel, err := g.Acquire(ctx)
		ch <- result{id: id, release: rel, err: err, waited: time.Since(start)}
	}()
	return ch
}

func mustAcquire(t *testing.T, g *gate.Gate) func() {
	t.Helper()
	rel, err := g.Acquire(t.Context())
	if err != nil {
		t.Fatalf("Acquire with a free slot: %v", err)
	}
	return rel
}

func pending(ch <-chan result) bool {
	select {
	case r := <-ch:
		panic(r) // the caller asserted this was still waiting
	default:
		return true
	}
}

func wantState(t *testing.T, g *gate.Gate, inFlight, queued int) gate.State {
	t.Helper()
	s := g.State()
	if s.InFlight != inFlight || s.Queued != queued {
		t.Fatalf("in_flight %d queued %d, want %d and %d (state %+v)", s.InFlight, s.Queued, inFlight, queued, s)
	}
	return s
}

func wantBusy(t *testing.T, err error) time.Duration {
	t.Helper()
	var e *ledger.Error
	if !errors.As(err, &e) || e.Code != ledger.CodeUpstreamBusy {
		t.Fatalf("err = %v, want upstream_busy", err)
	}
	if e.RetryAfter < time.Second || e.RetryAfter%time.Second != 0 {
		t.Fatalf("Retry-After %v, want whole seconds ≥ 1", e.RetryAfter)
	}
	return e.RetryAfter
}

// Seed 003: concurrency 2 and a third concurrent call. Before, it got 429 at
// once; now it waits and gets the slot the moment one of the two finishes.
func TestThirdCallGetsSlotWhenOneFinishes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := gate.New("demo", gate.Options{})
		first := mustAcquire(t, g)
		second := mustAcquire(t, g)
		third := acquireAsync(t.Context(), g, 3)
		synctest.Wait()
		pending(third)
		wantState(t, g, 2, 1)

		time.Sleep(3 * time.Second) // the first call takes 3 s (fake clock)
		first()
		r := <-third
		if r.err != nil {
			t.Fatalf("third call: %v", r.err)
		}
		if r.waited != 3*time.Second {
			t.Fatalf("third call waited %v, want exactly the 3 s the first call took", r.waited)
		}
		s := wantState(t, g, 2, 0)
		if s.Admitted != 3 || s.Rejected != 0 || s.WaitP95MS != 3000 {
			t.Fatalf("state %+v, want admitted 3, rejected 0, p95 3000 ms", s)
		}
		second()
		r.release()
		wantState(t, g, 0, 0)
	})
}

func TestQueueFullRefusedAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := gate.New("demo", gate.Options{MaxConcurrent: 2, MaxWaiters: 4, MaxWait: 8 * time.Second})
		a, b := mustAcquire(t, g), mustAcquire(t, g)
		var waiters []<-chan result
		for i := range 4 {
			waiters = append(waiters, acquireAsync(t.Context(), g, i))
			synctest.Wait() // arrival order = index
		}
		wantState(t, g, 2, 4)

		before := time.Now()
		_, err := g.Acquire(t.Context())
		if time.Since(before) != 0 {
			t.Fatalf("the refusal took %v of (fake) time; it must be immediate", time.Since(before))
		}
		if ra := wantBusy(t, err); ra != gate.DefaultRetryAfter {
			t.Fatalf("Retry-After %v with no call finished yet, want %v", ra, gate.DefaultRetryAfter)
		}
		if s := wantState(t, g, 2, 4); s.Rejected != 1 {
			t.Fatalf("rejected %d, want 1", s.Rejected)
		}
		a()
		b()
		for _, w := range waiters { // each release lets the next waiter in
			(<-w).release()
		}
		wantState(t, g, 0, 0)
	})
}

func TestNoQueue(t *testing.T) {
	g := gate.New("demo", gate.Options{MaxConcurrent: 1, MaxWaiters: -1})
	rel := mustAcquire(t, g)
	_, err := g.Acquire(t.Context())
	wantBusy(t, err)
	rel()
	mustAcquire(t, g)()
}

func TestWaiterPastMaxWaitRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := gate.New("demo", gate.Options{}) // 2, 4, 8 s
		a, b := mustAcquire(t, g), mustAcquire(t, g)
		w := acquireAsync(t.Context(), g, 1)
		r := <-w // nobody releases: the waiter's 8 s run out
		wantBusy(t, r.err)
		if r.release != nil {
			t.Fatal("a refused waiter got a release func")
		}
		if r.waited != gate.DefaultMaxWait {
			t.Fatalf("refused after %v, want exactly max_wait %v", r.waited, gate.DefaultMaxWait)
		}
		if s := wantState(t, g, 2, 0); s.TimedOut != 1 || s.Admitted != 2 {
			t.Fatalf("state %+v, want timed_out 1 admitted 2", s)
		}
		a()
		b()
		wantState(t, g, 0, 0)
	})
}

// The gate's order is arrival order, and a cancelled waiter leaves without
// disturbing it.
func TestCancelledWaiterLeavesFIFOHolds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := gate.New("demo", gate.Options{MaxConcurrent: 2, MaxWaiters: 4, MaxWait: time.Minute})
		a, b := mustAcquire(t, g), mustAcquire(t, g)
		ctxB, cancelB := context.WithCancel(t.Context())
		chans := make([]<-chan result, 4)
		for i := range 4 {
			ctx := t.Context()
			if i == 1 {
				ctx = ctxB
			}
			chans[i] = acquireAsync(ctx, g, i)
			synctest.Wait() // i is parked before i+1 arrives
		}
		wantState(t, g, 2, 4)

		cancelB()
		rb := <-chans[1]
		if !errors.Is(rb.err, context.Canceled) || rb.release != nil {
			t.Fatalf("cancelled waiter = %+v, want context.Canceled and no slot", rb)
		}
		if s := wantState(t, g, 2, 3); s.Cancelled != 1 {
			t.Fatalf("cancelled %d, want 1", s.Cancelled)
		}

		// Release one slot at a time; each must go to the oldest live waiter.
		var order []int
		releases := []func(){a, b}
		for _, want := range []int{0, 2, 3} {
			releases[0]()
			releases = releases[1:]
			synctest.Wait()
			var got result
			for i, ch := range chans {
				if i == 1 || ch == nil {
					continue
				}
				select {
				case got = <-ch:
					chans[i] = nil
				default:
					continue
				}
				break
			}
			if got.release == nil {
				t.Fatalf("no waiter got the freed slot (order so far %v)", order)
			}
			order = append(order, got.id)
			if got.id != want {
				t.Fatalf("slot went to waiter %d, want %d (order so far %v)", got.id, want, order)
			}
			releases = append(releases, got.release)
		}
		for _, r := range releases {
			r()
		}
		wantState(t, g, 0, 0)
	})
}

// A release hands the slot to a waiter whose caller has just given up: the
// slot must move on to the next waiter, not vanish.
func TestReleaseRacingCancelHandsSlotOn(t *testing.T) {
	g := gate.New("demo", gate.Options{MaxConcurrent: 1, MaxWaiters: 4, MaxWait: time.Minute})
	holder := mustAcquire(t, g)
	t1, err := g.Enter()
	if err != nil || !t1.Queued() {
		t.Fatalf("Enter = %v, queued %v; want a place in the queue", err, t1 != nil && t1.Queued())
	}
	t2, _ := g.Enter()
	holder() // the slot is handed to t1 before t1's caller looks
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := t1.Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("t1.Wait on a cancelled context = %v, want context.Canceled", err)
	}
	wantState(t, g, 1, 0) // the slot moved to t2
	rel, err := t2.Wait(t.Context())
	if err != nil {
		t.Fatalf("t2 should hold the passed-on slot: %v", err)
	}
	rel()
	rel() // release is idempotent
	s := wantState(t, g, 0, 0)
	if s.Admitted != 2 || s.Cancelled != 1 {
		// t1 gave its slot away unused: cancelled, not admitted.
		t.Fatalf("state %+v, want admitted 2 (holder, t2) and cancelled 1 (t1)", s)
	}
}

func TestAbandon(t *testing.T) {
	g := gate.New("demo", gate.Options{MaxConcurrent: 1, MaxWaiters: 1})
	slot, _ := g.Enter()
	if slot.Queued() {
		t.Fatal("first ticket queued with a free slot")
	}
	place, _ := g.Enter()
	if !place.Queued() {
		t.Fatal("second ticket not queued")
	}
	if _, err := g.Enter(); err == nil {
		t.Fatal("third ticket admitted past max_waiters 1")
	}
	place.Abandon() // e.g. the ledger refused the run
	wantState(t, g, 1, 0)
	slot.Abandon()
	slot.Abandon()
	wantState(t, g, 0, 0)
	if _, err := slot.Wait(t.Context()); err == nil {
		t.Fatal("Wait on an abandoned ticket succeeded")
	}
	wantState(t, g, 0, 0)
}

func TestRetryAfterFollowsHoldTime(t *testing.T) {
	tests := []struct {
		name string
		hold time.Duration
		want time.Duration
	}{
		{"seed 003 call of 3.5 s over 2 slots", 3500 * time.Millisecond, 2 * time.Second},
		{"short calls", 100 * time.Millisecond, time.Second},
		{"10 s calls", 10 * time.Second, 5 * time.Second},
		{"long calls capped at max_wait", 5 * time.Minute, 8 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g := gate.New("demo", gate.Options{MaxConcurrent: 2, MaxWaiters: -1})
				rel := mustAcquire(t, g)
				time.Sleep(tt.hold)
				rel()
				a, b := mustAcquire(t, g), mustAcquire(t, g)
				_, err := g.Acquire(t.Context())
				if got := wantBusy(t, err); got != tt.want {
					t.Fatalf("Retry-After %v, want %v", got, tt.want)
				}
				a()
				b()
			})
		})
	}
}

func TestSetOptionsRaisesConcurrency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := gate.New("demo", gate.Options{MaxConcurrent: 1})
		a := mustAcquire(t, g)
		w1, w2 := acquireAsync(t.Context(), g, 1), acquireAsync(t.Context(), g, 2)
		synctest.Wait()
		wantState(t, g, 1, 2)
		g.SetOptions(gate.Options{MaxConcurrent: 3})
		r1, r2 := <-w1, <-w2
		if r1.err != nil || r2.err != nil {
			t.Fatalf("waiters after raising the limit: %v, %v", r1.err, r2.err)
		}
		wantState(t, g, 3, 0)
		g.SetOptions(gate.Options{MaxConcurrent: 1}) // lowering lets calls finish
		w3 := acquireAsync(t.Context(), g, 3)
		synctest.Wait()
		a()
		r1.release()
		synctest.Wait()
		pending(w3) // still 1 in flight = the new limit
		wantState(t, g, 1, 1)
		r2.release()
		(<-w3).release()
		wantState(t, g, 0, 0)
	})
}

func TestWaitHistogramAndP95(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := gate.New("demo", gate.Options{MaxConcurrent: 1, MaxWaiters: 100, MaxWait: time.Minute})
		// 19 calls wait 0 s; one waits 5 s: the p95 by nearest rank is the 19th smallest, 0 s.
		for range 19 {
			mustAcquire(t, g)()
		}
		rel := mustAcquire(t, g)
		w := acquireAsync(t.Context(), g, 1)
		time.Sleep(5 * time.Second)
		rel()
		(<-w).release()
		s := g.State()
		if s.WaitP95MS != 0 {
			t.Fatalf("p95 %d ms, want 0", s.WaitP95MS)
		}
		// Bucket ≤0.001 s holds the 20 immediate grants (the holder too); 5 s falls in ≤6 s.
		wantCounts := make([]uint64, len(gate.WaitBuckets)+1)
		wantCounts[0] = 20
		wantCounts[7] = 1
		for i := range wantCounts {
			if s.WaitBucketCounts[i] != wantCounts[i] {
				t.Fatalf("bucket counts %v, want %v", s.WaitBucketCounts, wantCounts)
			}
		}
		if s.WaitSum != 5*time.Second || s.Admitted != 21 {
			t.Fatalf("sum %v admitted %d, want 5 s and 21", s.WaitSum, s.Admitted)
		}
		// One more 5 s wait makes 2 of 22 slow: rank ceil(0.95·22) = 21 → 5 s.
		rel = mustAcquire(t, g)
		w = acquireAsync(t.Context(), g, 2)
		time.Sleep(5 * time.Second)
		rel()
		(<-w).release()
		if s := g.State(); s.WaitP95MS != 5000 {
			t.Fatalf("p95 %d ms, want 5000", s.WaitP95MS)
		}
	})
}

func TestGates(t *testing.T) {
	gs := gate.NewGates()
	gs.Set("demo", gate.Options{})
	gs.Set("ark", gate.Options{MaxConcurrent: 1, MaxWaiters: 2, MaxWait: 3 * time.Second})
	if _, err := gs.Acquire(t.Context(), "nope"); ledger.ErrorCode(err) != ledger.CodeInternal {
		t.Fatalf("unknown upstream: %v, want internal", err)
	}
	rel, err := gs.Acquire(t.Context(), "ark")
	if err != nil {
		t.Fatal(err)
	}
	st := gs.State()
	want := []gate.State{
		{Upstream: "demo", MaxConcurrent: 2, MaxWaiters: 4, MaxWaitMS: 8000},
		{Upstream: "ark", MaxConcurrent: 1, InFlight: 1, MaxWaiters: 2, MaxWaitMS: 3000, Admitted: 1},
	}
	for i := range want {
		got := st[i]
		got.WaitBucketCounts, got.WaitSum = nil, 0
		if !reflect.DeepEqual(got, want[i]) {
			t.Fatalf("state[%d] = %+v, want %+v", i, got, want[i])
		}
	}
	rel()
	if g := gs.Set("ark", gate.Options{MaxConcurrent: 5}); g.State().MaxConcurrent != 5 || len(gs.State()) != 2 {
		t.Fatal("Set on an existing upstream must update it in place")
	}
}

// Callers refused together are sent back one queue-place apart, not all at
// the same second.
func TestRetryAfterSpreadsRefusals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := gate.New("demo", gate.Options{MaxConcurrent: 2, MaxWaiters: -1}) // max_wait 8 s
		rel := mustAcquire(t, g)
		time.Sleep(3500 * time.Millisecond) // seed 003 call: one place opens every 1.75 s
		rel()
		a, b := mustAcquire(t, g), mustAcquire(t, g)
		var got []time.Duration
		for range 6 {
			_, err := g.Acquire(t.Context())
			got = append(got, wantBusy(t, err))
		}
		s := time.Second
		// 1.75, 3.5, 5.25, 7, 8.75 → whole seconds rounded up, capped at max_wait.
		if want := []time.Duration{2 * s, 4 * s, 6 * s, 7 * s, 8 * s, 8 * s}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("Retry-After of six refusals in a row = %v, want %v", got, want)
		}
		// Once the promised moments have passed, a refusal is one step again.
		time.Sleep(9 * time.Second)
		_, err := g.Acquire(t.Context())
		if ra := wantBusy(t, err); ra != 2*s {
			t.Fatalf("Retry-After after the spread passed = %v, want 2s", ra)
		}
		a()
		b()
	})
}
