package ledger

import (
	"context"
	"sync"
)

// HookQueue delivers committed changes to a store's commit hook with the
// contract of Store.OnCommit: one call at a time, in the order they were
// pushed (a store pushes in commit order), on the queue's own goroutine, so
// that a slow hook delays only the callers waiting on it and never the
// writer. Push never blocks; its length is bounded by what the store's
// callers wait for. backend/sqlite and backend/postgres both use it.
type HookQueue struct {
	mu     sync.Mutex
	hook   CommitHook
	queue  []delivery
	closed bool
	wake   chan struct{} // capacity 1
	ended  chan struct{} // closed when the deliverer ended
}

// delivery is one committed transaction's changes on their way to the
// hook, and what to do once the hook has seen them.
type delivery struct {
	changes []Change
	then    func()
}

// NewHookQueue returns a queue with no hook and starts its deliverer; Close
// ends it.
func NewHookQueue() *HookQueue {
	q := &HookQueue{wake: make(chan struct{}, 1), ended: make(chan struct{})}
	go q.run()
	return q
}

// SetHook sets the hook (nil: none) that the deliveries still queued and
// every later one go to.
func (q *HookQueue) SetHook(hook CommitHook) {
	q.mu.Lock()
	q.hook = hook
	q.mu.Unlock()
}

// HasHook reports whether a hook is set.
func (q *HookQueue) HasHook() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.hook != nil
}

// Push queues changes for the hook; then, if not nil, runs on the
// deliverer once the hook returned (or at once, without a hook call, after
// Close): that is where a store answers the writes' callers.
func (q *HookQueue) Push(changes []Change, then func()) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		if then != nil {
			then()
		}
		return
	}
	q.queue = append(q.queue, delivery{changes: changes, then: then})
	q.mu.Unlock()
	q.signal()
}

func (q *HookQueue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// Close lets the deliverer drain what is queued, then end; it waits for that.
func (q *HookQueue) Close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal()
	<-q.ended
}

// run calls the hook for each delivery in order, then its then.
func (q *HookQueue) run() {
	defer close(q.ended)
	ctx := HookContext(context.Background())
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
			hook := q.hook
			q.mu.Unlock()
			if hook != nil {
				callHook(ctx, hook, d.changes)
			}
			if d.then != nil {
				d.then()
			}
		}
	}
}

// callHook keeps a panicking hook from leaving the writes' callers waiting:
// the changes are committed whatever the hook does.
func callHook(ctx context.Context, hook CommitHook, changes []Change) {
	defer func() { _ = recover() }()
	hook(ctx, changes)
}
