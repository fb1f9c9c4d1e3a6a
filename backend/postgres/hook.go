package postgres

import (
	"context"
	"sync"

	"github.com/quotagate/quotagate/backend/ledger"
)

// OnCommit sets the ledger's commit hook (ledger.Store): it is told what
// each transaction committed — this gateway's own, and, once Serve
// listens, the other gateways' (announced by NOTIFY, which PostgreSQL
// delivers on commit and in commit order) — one call at a time, in the
// order this gateway learnt of the commits.
func (s *Store) OnCommit(hook ledger.CommitHook) {
	s.hookMu.Lock()
	s.hook = hook
	s.hookMu.Unlock()
}

func (s *Store) currentHook() ledger.CommitHook {
	s.hookMu.Lock()
	defer s.hookMu.Unlock()
	return s.hook
}

// delivery is one committed transaction's changes on their way to the hook;
// done is closed once the hook returned (nil for another gateway's commit,
// which nobody here waits for).
type delivery struct {
	changes []ledger.Change
	done    chan struct{}
}

// deliveries is the FIFO between committing writers (and the listener) and
// the one goroutine that calls the hook. push never blocks.
type deliveries struct {
	mu     sync.Mutex
	queue  []delivery
	closed bool
	wake   chan struct{} // capacity 1
	ended  chan struct{}
}

func newDeliveries() *deliveries {
	return &deliveries{wake: make(chan struct{}, 1), ended: make(chan struct{})}
}

func (q *deliveries) push(d delivery) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		if d.done != nil {
			close(d.done)
		}
		return
	}
	q.queue = append(q.queue, d)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// close lets the deliverer drain what is queued, then end; it waits for that.
func (q *deliveries) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	<-q.ended
}

// run calls the hook for each delivery in order, then releases its waiter.
func (q *deliveries) run(hook func() ledger.CommitHook) {
	defer close(q.ended)
	ctx := ledger.HookContext(context.Background())
	for range q.wake {
		for {
			q.mu.Lock()
			if len(q.queue) == 0 {
				closed := q.closed
				q.mu.Unlock()
				if closed {
					return
				}
				break
			}
			d := q.queue[0]
			q.queue[0] = delivery{}
			q.queue = q.queue[1:]
			q.mu.Unlock()
			if h := hook(); h != nil {
				callHook(ctx, h, d.changes)
			}
			if d.done != nil {
				close(d.done)
			}
		}
	}
}

// callHook keeps a panicking hook from leaving the writes' callers waiting:
// the changes are committed whatever the hook does.
func callHook(ctx context.Context, hook ledger.CommitHook, changes []ledger.Change) {
	defer func() { _ = recover() }()
	hook(ctx, changes)
}
