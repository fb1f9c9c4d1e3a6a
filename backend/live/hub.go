package live

import (
	"errors"
	"sync"
	"sync/atomic"

	"github.com/quotagate/quotagate/backend/ledger"
)

// Kind names the part of the state that changed.
type Kind string

const (
	// KindLedger is one committed ledger transaction (a run admitted,
	// started, settled, held, released, reconciled, cancelled; a refusal; a
	// tenant policy; a balance sync; an eviction): Commit says what it changed.
	KindLedger Kind = "ledger"
	KindQuota  Kind = "quota"  // a quota guard's state that no ledger row records (a failed sync)
	KindConfig Kind = "config" // configuration applied
)

// Change tells subscribers that something moved; they re-read the state.
type Change struct {
	Kind     Kind            `json:"kind"`
	TenantID string          `json:"tenant,omitempty"`
	RunID    ledger.RunID    `json:"run,omitempty"`
	Upstream string          `json:"upstream,omitempty"`
	Model    string          `json:"model,omitempty"`
	Commit   []ledger.Change `json:"commit,omitempty"` // KindLedger: the transaction's changes, in order
}

// DefaultBuffer is a subscriber's buffer: enough for a burst between two
// coalesced snapshots, small enough that a stuck reader is noticed quickly.
const DefaultBuffer = 64

// ErrSlowSubscriber is Err of a subscription dropped because its buffer was full.
var ErrSlowSubscriber = errors.New("live: subscriber too slow, dropped")

// Hub broadcasts Changes to subscribers. The zero value is not usable; use NewHub.
type Hub struct {
	buffer int

	mu   sync.Mutex
	subs map[*Subscription]struct{}

	published atomic.Int64
	dropped   atomic.Int64
}

// NewHub returns a hub whose subscribers buffer `buffer` changes (DefaultBuffer if ≤ 0).
func NewHub(buffer int) *Hub {
	if buffer <= 0 {
		buffer = DefaultBuffer
	}
	return &Hub{buffer: buffer, subs: make(map[*Subscription]struct{})}
}

// Publish delivers c to every subscriber without blocking; a subscriber with
// a full buffer is dropped.
func (h *Hub) Publish(c Change) {
	h.published.Add(1)
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		select {
		case s.ch <- c:
		default:
			h.removeLocked(s, ErrSlowSubscriber)
			h.dropped.Add(1)
		}
	}
}

// Subscribe registers a new subscriber. Call Close when done.
func (h *Hub) Subscribe() *Subscription {
	s := &Subscription{hub: h, ch: make(chan Change, h.buffer)}
	h.mu.Lock()
	h.subs[s] = struct{}{}
	h.mu.Unlock()
	return s
}

// Len returns the number of current subscribers.
func (h *Hub) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// Stats returns how many changes were published and subscribers dropped.
func (h *Hub) Stats() (published, dropped int64) {
	return h.published.Load(), h.dropped.Load()
}

func (h *Hub) removeLocked(s *Subscription, err error) {
	if _, ok := h.subs[s]; !ok {
		return
	}
	delete(h.subs, s)
	s.err = err // written before close: the close orders it before any reader sees it
	close(s.ch)
}

// Subscription is one subscriber's view of the hub.
type Subscription struct {
	hub *Hub
	ch  chan Change
	err error
}

// C delivers changes; it is closed when the subscription ends (Close, or a drop).
func (s *Subscription) C() <-chan Change { return s.ch }

// Err reports why C was closed: ErrSlowSubscriber after a drop, nil after Close.
// Only meaningful once C is closed.
func (s *Subscription) Err() error {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	return s.err
}

// Close ends the subscription; safe to call more than once and after a drop.
func (s *Subscription) Close() {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	s.hub.removeLocked(s, nil)
}
