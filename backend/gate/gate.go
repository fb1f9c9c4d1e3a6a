package gate

import (
	"container/list"
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
)

// Defaults are seed 003's figures: two in flight, four waiting, eight seconds.
const (
	DefaultMaxConcurrent = 2
	DefaultMaxWaiters    = 4
	DefaultMaxWait       = 8 * time.Second
	// DefaultRetryAfter is the Retry-After of a refusal before any call has
	// finished to estimate from (seed 003's gate answered "Retry-After: 2").
	DefaultRetryAfter = 2 * time.Second
)

// WaitBuckets are the upper bounds, in seconds, of the wait-time histogram.
// They straddle the 8 s default max_wait.
var WaitBuckets = [...]float64{0.001, 0.01, 0.1, 0.5, 1, 2, 4, 6, 8, 12, 30}

// recentWaits is how many admitted waits the p95 is computed over.
const recentWaits = 512

// Options configure one gate. Zero values take the defaults; a negative
// MaxWaiters means no queue at all (refuse as soon as every slot is taken).
type Options struct {
	MaxConcurrent int
	MaxWaiters    int
	MaxWait       time.Duration
}

func (o Options) withDefaults() Options {
	if o.MaxConcurrent <= 0 {
		o.MaxConcurrent = DefaultMaxConcurrent
	}
	switch {
	case o.MaxWaiters == 0:
		o.MaxWaiters = DefaultMaxWaiters
	case o.MaxWaiters < 0:
		o.MaxWaiters = 0
	}
	if o.MaxWait <= 0 {
		o.MaxWait = DefaultMaxWait
	}
	return o
}

// Gate is one upstream's concurrency limit and wait queue.
type Gate struct {
	name string

	mu       sync.Mutex
	opts     Options
	inFlight int        // slots held, including ones handed to a waiter not yet back from Wait
	queue    *list.List // of *waiter, oldest first

	admitted, rejected, timedOut, cancelled uint64

	waitCounts [len(WaitBuckets) + 1]uint64 // non-cumulative; last is +Inf
	waitSum    time.Duration
	recent     [recentWaits]time.Duration
	recentN    int // total recorded; recent[recentN%recentWaits] is next

	holdEWMA time.Duration // smoothed slot hold time, for Retry-After
	retryAt  time.Time     // latest moment a refused caller was told to come back
}

// waiter is a caller in the queue. granted and elem are guarded by Gate.mu;
// ready is closed when a release hands the waiter a slot.
type waiter struct {
	ready   chan struct{}
	granted bool
	elem    *list.Element
}

// New returns a gate named after its upstream.
func New(name string, opts Options) *Gate {
	return &Gate{name: name, opts: opts.withDefaults(), queue: list.New()}
}

// Name is the upstream the gate guards.
func (g *Gate) Name() string { return g.name }

// SetOptions changes the bounds live (a config reload). Raising
// MaxConcurrent grants slots to waiters at once; lowering it lets calls in
// flight finish. Lowering MaxWaiters keeps the callers already waiting.
func (g *Gate) SetOptions(opts Options) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.opts = opts.withDefaults()
	for g.inFlight < g.opts.MaxConcurrent && g.queue.Len() > 0 {
		g.inFlight++
		g.grantFrontLocked()
	}
}

// Ticket is one caller's place at the gate: a slot already held, or a place
// in the queue. Exactly one of Wait (until it returns) or Abandon ends it.
type Ticket struct {
	g        *Gate
	w        *waiter // nil: the slot was granted at Enter
	entered  time.Time
	deadline time.Time
	ended    atomic.Bool
}

// Enter takes a slot if one is free, or a place in the queue if there is
// room, without blocking. With every slot taken and the queue full it returns
// an *ledger.Error with CodeUpstreamBusy and a Retry-After of at least one
// second.
func (g *Gate) Enter() (*Ticket, error) {
	now := time.Now()
	g.mu.Lock()
	defer g.mu.Unlock()
	t := &Ticket{g: g, entered: now, deadline: now.Add(g.opts.MaxWait)}
	if g.inFlight < g.opts.MaxConcurrent {
		g.inFlight++
		g.admitted++
		g.recordWaitLocked(0)
		return t, nil
	}
	if g.queue.Len() >= g.opts.MaxWaiters {
		g.rejected++
		return nil, g.busyLocked(fmt.Sprintf("%d calls in flight and %d waiting", g.inFlight, g.queue.Len()))
	}
	t.w = &waiter{ready: make(chan struct{})}
	t.w.elem = g.queue.PushBack(t.w)
	return t, nil
}

// Acquire waits for a slot (Enter then Wait) and returns the function that
// gives it back. See Wait for the errors.
func (g *Gate) Acquire(ctx context.Context) (release func(), err error) {
	t, err := g.Enter()
	if err != nil {
		return nil, err
	}
	return t.Wait(ctx)
}

// Queued reports whether the ticket is waiting for a slot rather than
// holding one; the gateway admits such a run as queued.
func (t *Ticket) Queued() bool { return t.w != nil }

// Wait blocks until the ticket holds a slot and returns the function that
// gives the slot back (safe to call more than once). It fails with
// CodeUpstreamBusy (with Retry-After) when max_wait passes first, and with
// an error wrapping ctx.Err() when ctx ends first; in both cases the caller
// holds nothing.
func (t *Ticket) Wait(ctx context.Context) (release func(), err error) {
	if !t.ended.CompareAndSwap(false, true) {
		return nil, fmt.Errorf("gate %s: ticket already used", t.g.name)
	}
	if t.w == nil {
		return t.releaser(), nil
	}
	if ctx.Err() == nil {
		timer := time.NewTimer(time.Until(t.deadline))
		defer timer.Stop()
		select {
		case <-t.w.ready:
			return t.granted(), nil
		case <-ctx.Done():
		case <-timer.C:
			if t.g.leave(t.w, &t.g.timedOut, false) {
				return t.granted(), nil // granted in the same instant: keep it
			}
			g := t.g
			g.mu.Lock()
			defer g.mu.Unlock()
			return nil, g.busyLocked(fmt.Sprintf("no slot freed within %v", g.opts.MaxWait))
		}
	}
	// Cancelled (possibly before Wait was even called): give up the place, and
	// the slot too if a release handed it over meanwhile.
	if t.g.leave(t.w, &t.g.cancelled, true) {
		t.g.releaseSlot()
	}
	return nil, fmt.Errorf("wait at gate %s: %w", t.g.name, ctx.Err())
}

// Abandon gives up the ticket without waiting (the run could not be
// admitted after Enter): the slot or the place in the queue goes to the next
// caller. It is a no-op once Wait was called.
func (t *Ticket) Abandon() {
	if !t.ended.CompareAndSwap(false, true) {
		return
	}
	if t.w == nil {
		t.g.releaseSlot()
		return
	}
	if t.g.leave(t.w, &t.g.cancelled, true) {
		t.g.releaseSlot()
	}
}

// granted records a queued ticket's successful wait and returns its release.
func (t *Ticket) granted() func() {
	g := t.g
	g.mu.Lock()
	g.admitted++
	g.recordWaitLocked(time.Since(t.entered))
	g.mu.Unlock()
	return t.releaser()
}

// releaser returns the slot's give-back function; it feeds the hold-time
// estimate behind Retry-After.
func (t *Ticket) releaser() func() {
	start := time.Now()
	var once sync.Once
	return func() {
		once.Do(func() {
			held := time.Since(start)
			g := t.g
			g.mu.Lock()
			if g.holdEWMA == 0 {
				g.holdEWMA = held
			} else {
				g.holdEWMA = (4*g.holdEWMA + held) / 5
			}
			g.handOffLocked()
			g.mu.Unlock()
		})
	}
}

// leave takes w out of the queue, counting the reason in *counter. It
// reports true when a release had already granted w a slot (w is then no
// longer queued and the slot is the caller's to keep or pass on); the reason
// is then counted only if countGranted (the caller will not use the slot).
// So every Enter ends in exactly one of admitted, rejected, timed_out or
// cancelled.
func (g *Gate) leave(w *waiter, counter *uint64, countGranted bool) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if w.granted {
		if countGranted {
			*counter++
		}
		return true
	}
	g.queue.Remove(w.elem)
	*counter++
	return false
}

func (g *Gate) releaseSlot() {
	g.mu.Lock()
	g.handOffLocked()
	g.mu.Unlock()
}

// handOffLocked gives a freed slot to the first waiter, or back to the gate.
// Above a lowered MaxConcurrent the slot is retired instead.
func (g *Gate) handOffLocked() {
	if g.queue.Len() > 0 && g.inFlight <= g.opts.MaxConcurrent {
		g.grantFrontLocked()
		return
	}
	g.inFlight--
}

func (g *Gate) grantFrontLocked() {
	w := g.queue.Remove(g.queue.Front()).(*waiter)
	w.granted = true
	close(w.ready)
}

func (g *Gate) recordWaitLocked(d time.Duration) {
	i := sort.SearchFloat64s(WaitBuckets[:], d.Seconds()) // first bound ≥ d
	g.waitCounts[i]++
	g.waitSum += d
	g.recent[g.recentN%recentWaits] = d
	g.recentN++
}

// busyLocked builds the refusal. Its Retry-After spreads refused callers
// over the moments a queue place is expected to open, one every
// holdEWMA/max_concurrent (a slot frees that often, and each freed slot
// moves the queue up one place): the first refused caller is told one step,
// the next one two steps, and so on, instead of sending them all back at
// the same second to fight over one place (seed 003's fixed "Retry-After: 2"
// did exactly that). Whole seconds, between 1 s and max_wait.
func (g *Gate) busyLocked(why string) *ledger.Error {
	now := time.Now()
	step := DefaultRetryAfter
	if g.holdEWMA > 0 {
		step = g.holdEWMA / time.Duration(g.opts.MaxConcurrent)
	}
	at := now.Add(step)
	if g.retryAt.After(now) {
		at = g.retryAt.Add(step)
	}
	ra := min(ceilSeconds(at.Sub(now)), max(ceilSeconds(g.opts.MaxWait), time.Second))
	g.retryAt = at
	if capped := now.Add(ra); capped.Before(at) {
		g.retryAt = capped
	}
	e := ledger.Errorf(ledger.CodeUpstreamBusy, "upstream %s is busy (%s); try again in %d s",
		g.name, why, int64(ra/time.Second))
	e.RetryAfter = ra
	return e
}

func ceilSeconds(d time.Duration) time.Duration {
	s := (d + time.Second - 1) / time.Second
	if s < 1 {
		s = 1
	}
	return s * time.Second
}
