package gateway

import (
	"context"

	"github.com/quotagate/quotagate/backend/ledger"
)

// Elsewhere reaches the gateway instance that relays a run open in a
// shared ledger but not in flight in this one (backend/postgres routes the
// cancel over LISTEN/NOTIFY). Errors: CodeRunEnded, CodeConflict.
type Elsewhere interface {
	CancelElsewhere(ctx context.Context, run ledger.Run, operator bool) error
}

// CancelLocal closes the upstream connection of run id if it is in flight
// in this gateway, as Cancel (operator) or DELETE /v1/runs/{id} (its owner,
// already checked by the asking gateway) would, and reports whether it was.
// It is the answering side of Elsewhere.
func (g *Gateway) CancelLocal(id ledger.RunID, operator bool) bool {
	c := g.lookup(id)
	if c == nil {
		return false
	}
	if operator {
		c.line.cancelBy(ledger.ActorAdmin) // the operator, through another gateway's admin API
	} else {
		c.line.abort(errCancelOwner)
	}
	return true
}

// cancelElsewhere routes the cancel of an open run that is not in flight
// here; without a shared ledger it is the conflict it always was.
func (g *Gateway) cancelElsewhere(ctx context.Context, run ledger.Run, operator bool) error {
	if run.Status.Ended() || g.opts.Elsewhere == nil {
		return notInFlight(run)
	}
	return g.opts.Elsewhere.CancelElsewhere(ctx, run, operator)
}
