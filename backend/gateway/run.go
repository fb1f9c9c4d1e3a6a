package gateway

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/meter"
	"github.com/quotagate/quotagate/backend/price"
	"github.com/quotagate/quotagate/backend/upstream"
)

// call is one admitted run in flight, whatever door it came through: its
// lifeline (the upstream context and why it ended), the attempt that sends
// it upstream, the relay that carries the answer back, and the record that
// writes its outcome to the ledger. call itself only sequences them.
type call struct {
	id     ledger.RunID
	tenant ledger.Tenant
	door   door
	req    doorRequest
	native bool // the upstream speaks the door's protocol (else: translated to chat)
	// model is the client's name for the model, upstreamModel the target's.
	model, upstreamModel string
	line                 *lifeline
	att                  attempt
	relay                *relay
	rec                  *runRecord
	waiting              atomic.Bool // queued at the gate (Queued, for the dashboard)
	// failover: a later target of the route may take the call if this
	// attempt is refused before any output; handover is then what the
	// client would have been told, and the call moves on (failover.go).
	failover bool
	handover error
}

// writeError renders err in the door's shape; a failure that kept the
// run's hold also says x-should-retry: false — a retry would take a second
// hold for the same user call.
func (c *call) writeError(w http.ResponseWriter, err error) {
	if c.rec.out.keepsHold() {
		w.Header().Set("x-should-retry", "false")
	}
	c.door.writeError(w, err)
}

// fail decides outcome o and tells the client err.
func (c *call) fail(w http.ResponseWriter, o outcome, err error) {
	c.rec.decide(o)
	c.writeError(w, err)
}

// serveDoor is the run core's handler for door d: one call from auth to
// a decided outcome.
func (g *Gateway) serveDoor(d door) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { g.admit(d, w, r) }
}

// admission is what is known of a call before any target is chosen.
type admission struct {
	tenant ledger.Tenant
	retry  retryFacts
	body   []byte
	req    doorRequest
	mreq   meter.Request
}

// pick is one attempt's target and what admitting the call there needs.
type pick struct {
	target routeTarget
	native bool
	quota  *ledger.QuotaCheck // nil: the model is not guarded there
	ans    answer
	meter  *meter.Run
	// prices are the target's (nil: it has none) and reserveMicros the
	// reserve's cost at them: the ledger records both on the run.
	prices        *price.Price
	reserveMicros price.Micros
	ticket        GateTicket // nil: no gate
}

// admit takes a call from the request along its route: each attempt is a
// run admitted in the ledger on its own hold, and the call moves to the
// next target only while nothing has reached the client (failover.go).
// Every refusal is answered in the door's shape.
func (g *Gateway) admit(d door, w http.ResponseWriter, r *http.Request) {
	a, ok := g.receive(d, w, r)
	if !ok {
		return
	}
	rt := g.table.of(a.mreq.Model)
	if rt == nil || !a.tenant.AllowsModel(a.mreq.Model) {
		d.writeError(w, ledger.Errorf(ledger.CodeModelNotFound, "the model %q does not exist or is not available to this key", a.mreq.Model))
		return
	}
	// The upstream call's context does not end with the client's request:
	// clientLeft decides (a client that left after the finish reason gets
	// its run settled from the usage that follows).
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(r.Context()))
	defer cancel(nil)
	line := &lifeline{ctx: ctx, cancel: cancel}
	f := newFailover(rt)
	for {
		p, err := g.pick(r.Context(), d, a, f)
		if err != nil {
			g.internalFor(d, w, err, "route")
			return
		}
		if !g.attempt(d, w, r, a, p, f, line) {
			return
		}
	}
}

// attempt admits one attempt of the call at p's target and serves it. It
// reports whether the call moves on to the route's next target: the
// attempt was refused before any output and its hold is released on disk.
func (g *Gateway) attempt(d door, w http.ResponseWriter, r *http.Request, a *admission, p *pick, f *failover, line *lifeline) (moveOn bool) {
	c := g.newCall(d, a, p, line)
	c.failover = f.untried()
	defer context.AfterFunc(r.Context(), c.relay.clientLeft)()
	g.register(c)
	// Admission is recorded even if the client leaves meanwhile: the ledger
	// write must not be half-cancelled.
	run, err := g.opts.Store.Admit(context.WithoutCancel(r.Context()), g.admitRequest(d, a, p, c.id, f))
	if err != nil {
		g.unregister(c)
		if p.ticket != nil {
			p.ticket.Abandon()
		}
		if ledger.ErrorCode(err) == ledger.CodeQuotaGuard && c.failover {
			f.refusedAdmit(p.target, err) // the guard's limit, checked in the same step as the budget
			return true
		}
		if ledger.ErrorCode(err) == ledger.CodeInternal {
			// A disk that is full, or a file another program locked: the call
			// was neither recorded nor sent, and may well succeed in a moment.
			g.log.Error("gateway: admit", "err", err)
			err = &ledger.Error{Code: ledger.CodeLedgerUnavailable, RetryAfter: time.Second,
				Message: "quotagate could not record this call in its ledger just now; nothing was charged or sent — try again shortly"}
		}
		d.writeError(w, f.told(err))
		return false
	}
	f.admitted(c.id)
	w.Header().Set("X-Run-Id", string(c.id))
	defer func() { _ = c.rec.finish(r.Context()) }()
	c.serve(w, r, p.ticket, run.Status == ledger.RunQueued)
	if c.handover == nil {
		return false
	}
	// The next attempt is admitted only once this one's hold is released on
	// disk: one call holds the tenant's money once at a time.
	if err := c.rec.finish(r.Context()); err != nil {
		c.door.writeError(w, c.handover)
		return false
	}
	f.refused(p.target, c.id, c.handover)
	return true
}

// admitRequest is what the ledger is asked to admit for attempt p.
func (g *Gateway) admitRequest(d door, a *admission, p *pick, id ledger.RunID, f *failover) ledger.AdmitRequest {
	return ledger.AdmitRequest{
		RunID: id, TenantID: a.tenant.ID, Upstream: p.target.up.Name(), Model: a.mreq.Model,
		ReserveUnits: p.meter.ReserveUnits(), InputUnits: p.meter.Estimate().InputUnits,
		ReserveMicros: p.reserveMicros, Prices: p.prices, Queued: p.ticket != nil && p.ticket.Queued(),
		Quota: p.quota, Actor: ledger.TenantActor(a.tenant.ID),
		Door: string(d.protocol()), UpstreamProtocol: string(upstreamProtocol(d, p.native)),
		IdempotencyKey: a.retry.key, RetryCount: a.retry.count, Fingerprint: a.retry.fingerprint(d.protocol(), a.body),
		Attempt: f.attempts + 1, FailoverOf: f.prev,
	}
}

// receive authenticates the call, applies the tenant's rate limit and
// reads and parses its body.
func (g *Gateway) receive(d door, w http.ResponseWriter, r *http.Request) (*admission, bool) {
	t, ok := g.authenticated(d, w, r)
	if !ok {
		return nil, false
	}
	if g.opts.RateLimiter != nil {
		if ra, ok := g.opts.RateLimiter.Allow(t.ID); !ok {
			err := &ledger.Error{Code: ledger.CodeRateLimited, RetryAfter: ra,
				Message: fmt.Sprintf("tenant %s sent too many requests; retry after the Retry-After seconds", t.ID)}
			g.refuse(r.Context(), t.ID, "", "", err)
			d.writeError(w, err)
			return nil, false
		}
	}
	retry, err := readRetryFacts(r.Header)
	if err != nil {
		d.writeError(w, err)
		return nil, false
	}
	body, err := g.readBody(w, r)
	if err != nil {
		d.writeError(w, err)
		return nil, false
	}
	req, err := d.parse(body)
	if err != nil {
		d.writeError(w, invalidRequest(err))
		return nil, false
	}
	return &admission{tenant: t, retry: retry, body: body, req: req, mreq: req.meterRequest()}, true
}

// enter is how target t would take the call: in which protocol, whether
// its quota guard lets the model through (consulted before any token
// counting: an evicted model costs nothing to refuse), and its place at
// the upstream's gate.
func (g *Gateway) enter(d door, a *admission, t routeTarget) (*pick, error) {
	model := a.mreq.Model
	p := &pick{target: t, native: speaks(t.up, d.protocol())}
	if _, only := d.(nativeOnly); only && !p.native {
		return nil, refuseNotSpoken(d, model, t.up)
	}
	if !p.native && !speaks(t.up, ProtocolChat) {
		return nil, ledger.Errorf(ledger.CodeModelNotFound, "the model %q is served by %s, which speaks neither %s nor chat completions", model, t.up.Name(), d.protocol())
	}
	var err error
	if g.opts.Quota != nil {
		if p.quota, err = g.opts.Quota.Check(t.up.Name(), model); err != nil {
			return nil, err
		}
	}
	if g.opts.Gate != nil {
		if p.ticket, err = g.opts.Gate.Enter(t.up.Name()); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// reserve starts the meter run of the call at p (the reserve) and prices
// it at p's target; an error gives p's place at the gate back.
func (g *Gateway) reserve(a *admission, p *pick) (*pick, error) {
	p.ans = a.req.answer(p.native)
	p.meter = meter.NewRun(g.opts.Meter, g.opts.Reserve, g.opts.Band, a.mreq, p.ans.endMarker())
	if err := g.price(p, a.mreq.Model); err != nil {
		if p.ticket != nil {
			p.ticket.Abandon()
		}
		return nil, err
	}
	return p, nil
}

// price sets the attempt's prices (its target's) and the cost of its reserve: counted input
// at the input price, the output cap (the reasoning floor included) at the
// output price. A model without a price leaves both zero; the ledger
// refuses it (model_unpriced) for a tenant with a money budget, in the
// same step that checks the budgets.
func (g *Gateway) price(p *pick, model string) error {
	pr, ok := g.opts.Money.priceAt(p.target.up.Name(), model)
	if !ok {
		return nil
	}
	e := p.meter.Estimate()
	cost, err := pr.ReserveCost(int64(e.InputUnits), int64(e.OutputUnits))
	if err != nil {
		return ledger.Errorf(ledger.CodeInvalidRequest, "the reserve of this call (%d input and %d output tokens) costs more than quotagate can keep: %v", e.InputUnits, e.OutputUnits, err)
	}
	p.prices, p.reserveMicros = &pr, cost
	return nil
}

// newCall wires a call's parts, each with what it needs of the gateway.
func (g *Gateway) newCall(d door, a *admission, p *pick, line *lifeline) *call {
	o := &g.opts
	c := &call{id: o.NewRunID(), tenant: a.tenant, door: d, req: a.req, native: p.native, line: line,
		model: a.mreq.Model, upstreamModel: p.target.model,
		att: attempt{up: p.target.up, retry: o.Retry, forward: o.ForwardHeaders, scrub: o.Scrub}}
	c.relay = &relay{line: line, ans: p.ans, meter: p.meter, stats: &g.stats, scrub: o.Scrub,
		limits: relayLimits{writeTimeout: o.WriteTimeout, upstreamTimeout: o.UpstreamTimeout,
			keepAlive: o.KeepAlive, finishGrace: o.FinishGrace, maxEventBytes: o.MaxEventBytes}}
	if a.mreq.Stream {
		c.relay.stream = &streamState{queueCap: o.StreamQueueEvents}
	}
	c.rec = &runRecord{id: c.id, tenant: ledger.TenantActor(a.tenant.ID), line: line, store: o.Store,
		log: g.log, pending: &g.pendingEnds, done: func() { g.unregister(c) }, endWait: o.EndWait}
	if k := o.KeepProviderID; a.mreq.Stream && k.After > 0 && k.Upstreams[p.target.up.Name()] {
		c.relay.named = c.rec.nameAfter(k.After)
	}
	return c
}

// refuse audits a refusal that happens before Admit (Admit audits its own).
func (g *Gateway) refuse(ctx context.Context, tenantID, up, model string, err error) {
	code := ledger.ErrorCode(err)
	if code == ledger.CodeInternal {
		return
	}
	detail := ""
	if up != "" {
		detail = up + "/" + model
	}
	aerr := g.opts.Store.AppendAudit(context.WithoutCancel(ctx), ledger.AuditEntry{
		Kind: ledger.AuditReject, TenantID: tenantID, Actor: ledger.TenantActor(tenantID), Reason: code,
		Evidence: ledger.ErrorMessage(err), Detail: detail,
	})
	if aerr != nil {
		g.log.Error("gateway: audit refusal", "tenant", tenantID, "code", code, "err", aerr)
	}
}

// serve takes the run from admission to a decided outcome. Until the first
// byte it may answer with an error; after it, failures only end the stream.
func (c *call) serve(w http.ResponseWriter, r *http.Request, ticket GateTicket, queued bool) {
	if ticket != nil {
		release, ok := c.waitGate(w, ticket, queued)
		if !ok {
			return
		}
		defer release()
	}
	path, body, err := c.req.upstream(targetOf(c.att.up, c.native))
	if err != nil {
		c.fail(w, released(ledger.RunFailed, "request not sent: "+err.Error()),
			ledger.Errorf(ledger.CodeInvalidRequest, "the request could not be prepared: %v", err))
		return
	}
	path, body = renameModel(path, body, c.model, c.upstreamModel)
	resp, refusals, err := c.att.send(c.line.ctx, path, body, c.att.header(r.Header, c.req, c.native))
	if err != nil {
		o, tell := c.att.failed(err, c.line.cause())
		c.refused(w, o, tell, true) // a connection never made
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		o, tell := c.att.refused(resp, refusals)
		c.refused(w, o, tell, resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500)
		return
	}
	if ct := resp.Header.Get("Content-Type"); !answerType(ct, c.relay.stream != nil) {
		o, tell := c.att.wrongType(ct, c.relay.stream != nil)
		c.fail(w, o, tell)
		return
	}
	if c.relay.stream != nil {
		c.relayStream(w, resp)
	} else {
		c.relayComplete(w, resp)
	}
}

// waitGate waits for the call's slot at the upstream's gate and starts a
// run that was admitted queued; it returns the slot's release.
func (c *call) waitGate(w http.ResponseWriter, ticket GateTicket, queued bool) (func(), bool) {
	c.waiting.Store(queued)
	release, err := ticket.Wait(c.line.ctx)
	c.waiting.Store(false)
	if err != nil {
		// Gave up while queued: the upstream never saw the call.
		status := ledger.RunFailed
		if cause := c.line.cause(); cause != nil {
			status = ledger.RunCancelled
			err = clientError(cause)
		}
		c.refused(w, released(status, "gave up while queued at the gate of "+c.att.up.Name()+": "+ledger.ErrorMessage(err)), err, true)
		return nil, false
	}
	if queued {
		if err := c.rec.start(context.WithoutCancel(c.line.ctx)); err != nil {
			c.rec.decide(released(ledger.RunFailed, "could not start after the gate: "+err.Error()))
			if ledger.ErrorCode(err) == ledger.CodeInternal {
				c.rec.log.Error("gateway: start run "+string(c.id), "err", err)
			}
			c.door.writeError(w, err)
			release()
			return nil, false
		}
	}
	return release, true
}

// relayStream relays a stream, decides its outcome from what the client
// got, writes it, and only then ends the client's stream.
func (c *call) relayStream(w http.ResponseWriter, resp *upstream.Response) {
	rc, d := c.relay.relayEvents(w, resp.Body)
	o, tell := streamOutcome(c.relay.meter, c.line.cause(), d, c.att.up.Name())
	c.rec.decide(o)
	// The end marker goes out only once the outcome is on disk.
	if err := c.rec.finish(c.line.ctx); err != nil && tell == nil && !c.rec.awaitEnd() {
		tell = ledger.Errorf(ledger.CodeInternal, "the answer was relayed but the ledger could not record it (run %s); its reservation stays held", c.id)
	}
	var event []byte
	if tell != nil {
		event = c.door.streamError(tell)
	}
	c.relay.end(w, rc, d, event)
}

// relayComplete relays a non-streaming response: the whole body is read
// first, so an upstream failure can still be an HTTP error.
func (c *call) relayComplete(w http.ResponseWriter, resp *upstream.Response) {
	b, err := c.relay.readWhole(resp.Body)
	if err != nil {
		if cause := c.line.cause(); cause != nil {
			c.fail(w, kept(statusFor(cause), fmt.Sprintf("%s while reading the upstream's body", cause)), clientError(cause))
			return
		}
		c.fail(w, kept(ledger.RunInterrupted, "the upstream body broke off: "+c.att.scrub.String(err.Error())),
			ledger.Errorf(ledger.CodeUpstreamInterrupt, "the upstream %s stopped mid-answer; the run is interrupted and its reservation is held until reconciled", c.att.up.Name()))
		return
	}
	o, out := c.relay.observeWhole(b)
	j := c.relay.meter.Judgement()
	v := meter.Judge(j)
	end := completeOutcome(v, j.Usage, o)
	end.answered = ledger.Answered{ProviderID: c.relay.meter.ProviderID(), RelayedUnits: v.RelayedUnits}
	c.rec.decide(end)
	if err := c.rec.finish(c.line.ctx); err != nil && !c.rec.awaitEnd() { // the body goes out only once the outcome is on disk
		c.writeError(w, ledger.Errorf(ledger.CodeInternal, "the ledger could not record the answer (run %s); its reservation stays held", c.id))
		return
	}
	if o.UpstreamError != "" && !v.Trusted {
		// A 200 whose body is an error object is no answer: a client SDK
		// would read it as one without choices or content. It gets the
		// door's error instead, with the provider's (scrubbed) words.
		c.writeError(w, ledger.Errorf(ledger.CodeUpstreamError, "the upstream %s answered 200 with an error: %s; the run's reservation is held until reconciled",
			c.att.up.Name(), truncate(o.UpstreamError, 200)))
		return
	}
	c.relay.writeWhole(w, out)
}

// PendingEnds is how many decided run ends the ledger has not taken yet
// (they are being retried).
func (g *Gateway) PendingEnds() int64 { return g.pendingEnds.Load() }
