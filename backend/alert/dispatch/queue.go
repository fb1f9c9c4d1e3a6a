package dispatch

import (
	"sync"

	"github.com/quotagate/quotagate/backend/ledger"
)

// item is one thing the watcher looks at: a tenant's balance against its
// thresholds (kind ""), a run that ended held, a model evicted or restored.
type item struct {
	kind   ledger.AuditKind
	tenant string
	run    ledger.RunID // the latest run that moved the tenant, or the held run
	seq    int64        // the audit row of a hold, eviction or restore
}

// queue hands the commit hook's items to the watcher without ever making
// the hook wait. A tenant's balance check is queued once until the watcher
// takes it: a burst of commits costs one balance read.
type queue struct {
	mu      sync.Mutex
	items   []item
	checks  map[string]int // tenant → index of its queued check
	closed  bool
	changed chan struct{} // capacity 1
}

func newQueue() *queue {
	return &queue{checks: map[string]int{}, changed: make(chan struct{}, 1)}
}

func (q *queue) push(it item) {
	q.mu.Lock()
	if !q.closed {
		q.items = append(q.items, it)
	}
	q.mu.Unlock()
	q.signal()
}

// check queues a balance check of tenant, or updates the queued one's run.
func (q *queue) check(tenant string, run ledger.RunID) {
	q.mu.Lock()
	if i, ok := q.checks[tenant]; ok {
		if run != "" {
			q.items[i].run = run
		}
		q.mu.Unlock()
		return
	}
	if !q.closed {
		q.checks[tenant] = len(q.items)
		q.items = append(q.items, item{tenant: tenant, run: run})
	}
	q.mu.Unlock()
	q.signal()
}

func (q *queue) signal() {
	select {
	case q.changed <- struct{}{}:
	default:
	}
}

// take returns everything queued, waiting for something; false once
// closed and drained.
func (q *queue) take() ([]item, bool) {
	for {
		q.mu.Lock()
		if q.closed && len(q.items) == 0 {
			q.mu.Unlock()
			return nil, false
		}
		if len(q.items) > 0 {
			items := q.items
			q.items = nil
			clear(q.checks)
			q.mu.Unlock()
			return items, true
		}
		q.mu.Unlock()
		<-q.changed
	}
}

func (q *queue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal()
}
