package server

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/live"
)

// Observer is told that a guarded model's quota day moved (*quota.Guard):
// it re-reads the day's usage, evicts at its walls, may ask for a burst sync.
type Observer interface {
	Observe(ctx context.Context, upstream, model string) error
}

// commits is the one path after a ledger commit: the store's commit hook,
// wired to the live hub and the quota guard.
type commits struct {
	hub   *live.Hub
	log   *slog.Logger
	guard atomic.Pointer[Observer] // nil until the guard is built, or when no model is guarded
}

// observeTimeout bounds the guard's re-read after one commit.
const observeTimeout = 10 * time.Second

// committed is the ledger.CommitHook: one call per committed transaction, in
// commit order. The hub hears of the transaction once, with everything it
// changed; the guard observes each guarded (upstream, model) it moved once.
func (c *commits) committed(ctx context.Context, changes []ledger.Change) {
	c.hub.Publish(live.Change{Kind: live.KindLedger, Commit: changes})
	g := c.guard.Load()
	if g == nil {
		return
	}
	type key struct{ upstream, model string }
	seen := map[key]bool{}
	for _, ch := range changes {
		k := key{ch.Upstream, ch.Model}
		// A sync is the guard's own write, made under its model lock and
		// judged by the guard itself: observing it here would wait on that lock.
		if !ch.Guarded() || ch.Kind == ledger.AuditSync || seen[k] {
			continue
		}
		seen[k] = true
		octx, cancel := context.WithTimeout(ctx, observeTimeout)
		if err := (*g).Observe(octx, k.upstream, k.model); err != nil {
			c.log.Warn("quota guard after a commit", "upstream", k.upstream, "model", k.model, "seq", ch.Seq, "err", err)
		}
		cancel()
	}
}

func (c *commits) setGuard(g Observer) {
	if g != nil {
		c.guard.Store(&g)
	}
}
