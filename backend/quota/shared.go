package quota

import "context"

// Poller decides which of several gateways sharing one ledger polls a
// guarded model's provider balance: only the one for which Polls reports
// true (backend/postgres: the holder of an advisory lock named name). The
// others re-read the snapshots it stores, so every gateway's limit is drawn
// from the same readings and the provider's balance API is asked once.
type Poller interface {
	Polls(ctx context.Context, name string) bool
}

// SharePolling makes g poll a model's balance source only while p says
// this gateway is the model's poller. Call it before Run.
func (g *Guard) SharePolling(p Poller) { g.poller = p }

// polls reports whether this gateway polls m's source (always without a
// Poller). When it does not, m's snapshots are forgotten so that the next
// refresh re-reads the poller's from the store.
func (g *Guard) polls(ctx context.Context, m *model) bool {
	if g.poller == nil || g.poller.Polls(ctx, "quota-poller "+m.key.upstream+"/"+m.key.model) {
		return true
	}
	m.mu.Lock()
	m.loaded = false
	m.mu.Unlock()
	return false
}
