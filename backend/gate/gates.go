package gate

import (
	"context"
	"sync"

	"github.com/quotagate/quotagate/backend/ledger"
)

// Gates holds one Gate per upstream, in configuration order. It satisfies
// the gateway's consumer-side interface
//
//	Acquire(ctx context.Context, upstream string) (release func(), err error)
type Gates struct {
	mu     sync.RWMutex
	byName map[string]*Gate
	order  []*Gate
}

// NewGates returns an empty set.
func NewGates() *Gates { return &Gates{byName: make(map[string]*Gate)} }

// Set creates the gate of upstream, or changes its bounds live if it
// exists (callers already waiting or in flight keep their places).
func (s *Gates) Set(upstream string, opts Options) *Gate {
	s.mu.Lock()
	defer s.mu.Unlock()
	if g := s.byName[upstream]; g != nil {
		g.SetOptions(opts)
		return g
	}
	g := New(upstream, opts)
	s.byName[upstream] = g
	s.order = append(s.order, g)
	return g
}

// Gate returns the gate of upstream, or nil.
func (s *Gates) Gate(upstream string) *Gate {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.byName[upstream]
}

// Enter is Gate.Enter on upstream's gate. An upstream without a gate is a
// wiring bug, reported as an internal error rather than let through unbounded.
func (s *Gates) Enter(upstream string) (*Ticket, error) {
	g := s.Gate(upstream)
	if g == nil {
		return nil, ledger.Errorf(ledger.CodeInternal, "no gate for upstream %q", upstream)
	}
	return g.Enter()
}

// Acquire is Gate.Acquire on upstream's gate.
func (s *Gates) Acquire(ctx context.Context, upstream string) (release func(), err error) {
	t, err := s.Enter(upstream)
	if err != nil {
		return nil, err
	}
	return t.Wait(ctx)
}

// State returns every gate's figures in configuration order, for the admin
// snapshot's "gates" list and for the metrics collector.
func (s *Gates) State() []State {
	s.mu.RLock()
	gates := append([]*Gate(nil), s.order...)
	s.mu.RUnlock()
	out := make([]State, 0, len(gates))
	for _, g := range gates {
		out = append(out, g.State())
	}
	return out
}
