package server

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/quotagate/quotagate/backend/evidence"

	"github.com/quotagate/quotagate/backend/alert/dispatch"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/live"
)

// Observer is told that a guarded model's quota day moved (*quota.Guard):
// it re-reads the day's usage, evicts at its walls, may ask for a burst sync;
// after a balance snapshot (ObserveSync) it re-reads the snapshots too. Neither
// waits on the guard's own work in progress, so both may run in the hook.
type Observer interface {
	Observe(ctx context.Context, upstream, model string) error
	ObserveSync(ctx context.Context, upstream, model string) error
}

// commits is the one path after a ledger commit: the store's commit hook,
// wired to the live hub, the alerts and the quota guard.
type commits struct {
	hub   *live.Hub
	log   *slog.Logger
	guard atomic.Pointer[Observer] // nil until the guard is built, or when no model is guarded
	// alerts is told of every commit (it only queues them); nil without
	// the alerts key.
	alerts atomic.Pointer[dispatch.Dispatcher]
	// evidence follows the runs that end held on an upstream with a usage
	// lookup; nil when none has one.
	evidence atomic.Pointer[evidence.Worker]
}

// observeTimeout bounds the guard's re-read after one commit.
const observeTimeout = 10 * time.Second

// committed is the ledger.CommitHook: one call per committed transaction, in
// commit order. The hub hears of the transaction once, with everything it
// changed; the guard observes each guarded (upstream, model) it moved once.
func (c *commits) committed(ctx context.Context, changes []ledger.Change) {
	c.hub.Publish(live.Change{Kind: live.KindLedger, Commit: changes})
	if a := c.alerts.Load(); a != nil {
		a.Committed(ctx, changes)
	}
	if e := c.evidence.Load(); e != nil {
		e.Note(changes) // never waits on a provider
	}
	g := c.guard.Load()
	if g == nil {
		return
	}
	type key struct{ upstream, model string }
	var order []key
	sync := map[key]bool{} // each model once; a snapshot among its changes makes it a sync
	for _, ch := range changes {
		if !ch.Guarded() {
			continue
		}
		k := key{ch.Upstream, ch.Model}
		if _, seen := sync[k]; !seen {
			order = append(order, k)
		}
		sync[k] = sync[k] || ch.Kind == ledger.AuditSync
	}
	for _, k := range order {
		octx, cancel := context.WithTimeout(ctx, observeTimeout)
		observe := (*g).Observe
		if sync[k] {
			observe = (*g).ObserveSync
		}
		if err := observe(octx, k.upstream, k.model); err != nil {
			c.log.Warn("quota guard after a commit", "upstream", k.upstream, "model", k.model, "seq", changes[0].Seq, "err", err)
		}
		cancel()
	}
}

func (c *commits) setGuard(g Observer) {
	if g != nil {
		c.guard.Store(&g)
	}
}
