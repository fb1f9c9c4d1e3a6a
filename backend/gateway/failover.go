package gateway

import (
	"context"
	"fmt"
	"net/http"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/price"
)

// Failover, before the first byte only (DESIGN "Routes"). A call goes to
// the first target of its route that can take it, and moves on when a
// target:
//
//   - has its quota guard's eviction of the model (instead of 429
//     quota_guard), or its guard's limit refused the reserve at Admit;
//   - has a gate without room while a later target's has room (with every
//     gate full the call waits at the first, as a single upstream's did),
//     or a gate that refuses even a place in its queue;
//   - refused the attempt before any output: 429, 5xx or a connection
//     never made, after the retries of Options.Retry, or the wait at its
//     gate ran out.
//
// Each attempt is its own run, admitted on its own hold at its target's
// price; a refused attempt's hold is released, with the refusal as
// evidence, and written to the ledger before the next attempt is admitted,
// so that a call never holds a tenant's money twice and is charged once,
// by the run that answered (whose id is X-Run-Id). Once a byte of an
// answer has reached the client nothing fails over: a cut stream keeps its
// hold, as it always did. A failover audit row names each target passed
// over, why, and which target took the call.

// failover is one call's way along its route.
type failover struct {
	model    string
	targets  []routeTarget // this call's order (route.order)
	tried    []bool
	prev     ledger.RunID // the attempt admitted last
	attempts int          // attempts admitted so far
	passed   []passed     // targets passed over since the last audit
	last     error        // what the last refused attempt would have told the client
}

// passed is a target the call passed over, and why.
type passed struct {
	target routeTarget
	run    ledger.RunID // the refused attempt; "" when none was admitted there
	err    error
	// refusal: err refuses the call (a guard, a gate, an upstream), audited
	// as such; a target that does not speak the door's protocol is merely
	// not on this call's way.
	refusal bool
	// audited: the ledger already audited the refusal (Admit's own reject row).
	audited bool
}

func newFailover(rt *route) *failover {
	ts := rt.order()
	return &failover{model: rt.model, targets: ts, tried: make([]bool, len(ts))}
}

// untried reports whether a target of the route is left to try.
func (f *failover) untried() bool {
	for _, t := range f.tried {
		if !t {
			return true
		}
	}
	return false
}

// pass records that the call passed over target t because of err.
func (f *failover) pass(t routeTarget, err error, refusal bool) {
	f.passed = append(f.passed, passed{target: t, err: err, refusal: refusal})
}

// refusedAdmit records that the ledger refused the attempt at t with err
// (the guard's limit), which Admit audited itself.
func (f *failover) refusedAdmit(t routeTarget, err error) {
	f.passed = append(f.passed, passed{target: t, err: err, refusal: true, audited: true})
}

// admitted records the attempt admitted at the target last picked.
func (f *failover) admitted(id ledger.RunID) { f.prev, f.attempts = id, f.attempts+1 }

// refused records that attempt id at t was refused before any output with
// tell, its hold released.
func (f *failover) refused(t routeTarget, id ledger.RunID, tell error) {
	f.passed = append(f.passed, passed{target: t, run: id, err: tell, refusal: true})
	f.last = tell
}

// told is what the client is told when the call ends on err: when err is a
// target's refusal too, the last refused attempt's answer, if there was
// one, says more than a target that could not even take the call.
func (f *failover) told(err error) error {
	if f.last != nil && movesOn(err) {
		return f.last
	}
	return err
}

// pick chooses the target of the call's next attempt: the first untried
// one that can take it now, else the first with a place in its gate's
// queue. With none, the call ends on the first refusal.
func (g *Gateway) pick(ctx context.Context, d door, a *admission, f *failover) (*pick, error) {
	var queued *pick
	at := -1
	for i, t := range f.targets {
		if f.tried[i] {
			continue
		}
		p, err := g.enter(d, a, t)
		switch {
		case err == nil && (p.ticket == nil || !p.ticket.Queued()):
			if queued != nil {
				queued.ticket.Abandon()
				f.pass(queued.target, ledger.Errorf(ledger.CodeUpstreamBusy, "every slot of %s's gate is taken and %s has one free",
					queued.target.up.Name(), t.up.Name()), true)
			}
			return g.chose(ctx, a, f, i, p)
		case err == nil && queued == nil:
			queued, at = p, i
		case err == nil:
			p.ticket.Abandon()
		case ledger.ErrorCode(err) == ledger.CodeInternal:
			if queued != nil {
				queued.ticket.Abandon()
			}
			return nil, err
		default:
			f.tried[i] = true
			f.pass(t, err, movesOn(err))
		}
	}
	if queued != nil {
		return g.chose(ctx, a, f, at, queued)
	}
	return nil, g.refusal(ctx, a, f)
}

// movesOn: a refusal by a target's quota guard or gate, which another
// target need not share.
func movesOn(err error) bool {
	switch ledger.ErrorCode(err) {
	case ledger.CodeQuotaGuard, ledger.CodeUpstreamBusy:
		return true
	}
	return false
}

// chose takes target i for the call's next attempt, audits the targets
// passed over on the way to it, and reserves.
func (g *Gateway) chose(ctx context.Context, a *admission, f *failover, i int, p *pick) (*pick, error) {
	f.tried[i] = true
	for _, ps := range f.passed {
		if ps.refusal {
			g.auditFailover(ctx, a.tenant.ID, f.model, ps, p.target)
		}
	}
	f.passed = f.passed[:0]
	return g.reserve(a, p)
}

// refusal ends a call no target could take: the last refused attempt's
// answer, else the first target's refusal, audited as a refusal is when a
// call has one upstream.
func (g *Gateway) refusal(ctx context.Context, a *admission, f *failover) error {
	if f.last != nil || len(f.passed) == 0 {
		return f.told(ledger.Errorf(ledger.CodeUpstreamBusy, "no upstream of %s can take the call", f.model))
	}
	first := f.passed[0]
	if first.refusal && !first.audited {
		g.refuse(ctx, a.tenant.ID, first.target.up.Name(), f.model, first.err)
	}
	return first.err
}

// auditFailover writes the row that says why the call left ps's target
// for to.
func (g *Gateway) auditFailover(ctx context.Context, tenantID, model string, ps passed, to routeTarget) {
	err := g.opts.Store.AppendAudit(context.WithoutCancel(ctx), ledger.AuditEntry{
		Kind: ledger.AuditFailover, TenantID: tenantID, RunID: ps.run, Actor: ledger.TenantActor(tenantID),
		Reason: ledger.ErrorCode(ps.err), Evidence: ledger.ErrorMessage(ps.err),
		Detail: fmt.Sprintf("%s/%s → %s/%s", ps.target.up.Name(), model, to.up.Name(), model),
	})
	if err != nil {
		g.log.Error("gateway: audit failover", "tenant", tenantID, "model", model, "err", err)
	}
}

// refused ends an attempt that got no answer with outcome o. When o
// released the hold, nothing reached the client, the run's context still
// runs and another target may do better (movable), the call moves on:
// the outcome is decided and tell kept for the client in case no target
// serves. Otherwise the client is told now.
func (c *call) refused(w http.ResponseWriter, o outcome, tell error, movable bool) {
	if movable && c.failover && o.release && c.line.cause() == nil {
		c.rec.decide(o)
		c.handover = tell
		return
	}
	c.fail(w, o, tell)
}

// priceAt is model's price at upstream: the upstream's own, else the
// model's.
func (m Money) priceAt(upstream, model string) (price.Price, bool) {
	if p, ok := m.At[upstream][model]; ok {
		return p, true
	}
	p, ok := m.Prices[model]
	return p, ok
}
