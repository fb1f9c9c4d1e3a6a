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
	id      ledger.RunID
	tenant  ledger.Tenant
	door    door
	req     doorRequest
	native  bool // the upstream speaks the door's protocol (else: translated to chat)
	line    *lifeline
	att     attempt
	relay   *relay
	rec     *runRecord
	waiting atomic.Bool // queued at the gate (Queued, for the dashboard)
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

// admission is what is known of a call before the ledger admits it.
type admission struct {
	tenant ledger.Tenant
	retry  retryFacts
	body   []byte
	req    doorRequest
	mreq   meter.Request
	up     Upstream
	native bool
	quota  *ledger.QuotaCheck // nil: the model is not guarded
	ans    answer
	meter  *meter.Run
	// prices are the model's (nil: it has none) and reserveMicros the
	// reserve's cost at them: the ledger records both on the run.
	prices        *price.Price
	reserveMicros price.Micros
	ticket        GateTicket // nil: no gate
}

// admit takes a call from the request to a run admitted in the ledger,
// then serves it. Every refusal before Admit is answered in the door's shape.
func (g *Gateway) admit(d door, w http.ResponseWriter, r *http.Request) {
	a, ok := g.receive(d, w, r)
	if !ok || !g.route(d, w, r, a) {
		return
	}
	// The upstream call's context does not end with the client's request:
	// clientLeft decides (a client that left after the finish reason gets
	// its run settled from the usage that follows).
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(r.Context()))
	defer cancel(nil)
	c := g.newCall(d, a, &lifeline{ctx: ctx, cancel: cancel})
	defer context.AfterFunc(r.Context(), c.relay.clientLeft)()
	g.register(c)
	// Admission is recorded even if the client leaves meanwhile: the ledger
	// write must not be half-cancelled.
	run, err := g.opts.Store.Admit(context.WithoutCancel(r.Context()), ledger.AdmitRequest{
		RunID: c.id, TenantID: a.tenant.ID, Upstream: a.up.Name(), Model: a.mreq.Model,
		ReserveUnits: a.meter.ReserveUnits(), InputUnits: a.meter.Estimate().InputUnits,
		ReserveMicros: a.reserveMicros, Prices: a.prices, Queued: a.ticket != nil && a.ticket.Queued(),
		Quota: a.quota, Actor: ledger.TenantActor(a.tenant.ID),
		Door: string(d.protocol()), UpstreamProtocol: string(upstreamProtocol(d, a.native)),
		IdempotencyKey: a.retry.key, RetryCount: a.retry.count, Fingerprint: a.retry.fingerprint(d.protocol(), a.body),
	})
	if err != nil {
		g.unregister(c)
		if a.ticket != nil {
			a.ticket.Abandon()
		}
		if ledger.ErrorCode(err) == ledger.CodeInternal {
			// A disk that is full, or a file another program locked: the call
			// was neither recorded nor sent, and may well succeed in a moment.
			g.log.Error("gateway: admit", "err", err)
			err = &ledger.Error{Code: ledger.CodeLedgerUnavailable, RetryAfter: time.Second,
				Message: "quotagate could not record this call in its ledger just now; nothing was charged or sent — try again shortly"}
		}
		d.writeError(w, err)
		return
	}
	w.Header().Set("X-Run-Id", string(c.id))
	defer func() { _ = c.rec.finish(r.Context()) }()
	c.serve(w, r, a.ticket, run.Status == ledger.RunQueued)
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

// route picks the model's upstream and how it is spoken to, consults the
// quota guard, starts the meter run (the reserve) and enters the gate.
func (g *Gateway) route(d door, w http.ResponseWriter, r *http.Request, a *admission) bool {
	model := a.mreq.Model
	a.up = g.upstreamFor(model)
	if a.up == nil || !a.tenant.AllowsModel(model) {
		d.writeError(w, ledger.Errorf(ledger.CodeModelNotFound, "the model %q does not exist or is not available to this key", model))
		return false
	}
	a.native = speaks(a.up, d.protocol())
	if _, only := d.(nativeOnly); only && !a.native {
		d.writeError(w, refuseNotSpoken(d, model, a.up))
		return false
	}
	if !a.native && !speaks(a.up, ProtocolChat) {
		d.writeError(w, ledger.Errorf(ledger.CodeModelNotFound, "the model %q is served by %s, which speaks neither %s nor chat completions", model, a.up.Name(), d.protocol()))
		return false
	}
	var err error
	if g.opts.Quota != nil {
		// Before any token counting: an evicted model costs nothing to refuse.
		if a.quota, err = g.opts.Quota.Check(a.up.Name(), model); err != nil {
			g.refuse(r.Context(), a.tenant.ID, a.up.Name(), model, err)
			g.internalFor(d, w, err, "quota check")
			return false
		}
	}
	a.ans = a.req.answer(a.native)
	a.meter = meter.NewRun(g.opts.Meter, g.opts.Reserve, g.opts.Band, a.mreq, a.ans.endMarker())
	if err := g.price(a); err != nil {
		d.writeError(w, err)
		return false
	}
	if g.opts.Gate != nil {
		if a.ticket, err = g.opts.Gate.Enter(a.up.Name()); err != nil {
			g.refuse(r.Context(), a.tenant.ID, a.up.Name(), model, err)
			g.internalFor(d, w, err, "gate")
			return false
		}
	}
	return true
}

// price sets the call's prices and the cost of its reserve: counted input
// at the input price, the output cap (the reasoning floor included) at the
// output price. A model without a price leaves both zero; the ledger
// refuses it (model_unpriced) for a tenant with a money budget, in the
// same step that checks the budgets.
func (g *Gateway) price(a *admission) error {
	p, ok := g.opts.Money.Prices[a.mreq.Model]
	if !ok {
		return nil
	}
	e := a.meter.Estimate()
	cost, err := p.ReserveCost(int64(e.InputUnits), int64(e.OutputUnits))
	if err != nil {
		return ledger.Errorf(ledger.CodeInvalidRequest, "the reserve of this call (%d input and %d output tokens) costs more than quotagate can keep: %v", e.InputUnits, e.OutputUnits, err)
	}
	a.prices, a.reserveMicros = &p, cost
	return nil
}

// newCall wires a call's parts, each with what it needs of the gateway.
func (g *Gateway) newCall(d door, a *admission, line *lifeline) *call {
	o := &g.opts
	c := &call{id: o.NewRunID(), tenant: a.tenant, door: d, req: a.req, native: a.native, line: line,
		att: attempt{up: a.up, retry: o.Retry, forward: o.ForwardHeaders, scrub: o.Scrub}}
	c.relay = &relay{line: line, ans: a.ans, meter: a.meter, stats: &g.stats, scrub: o.Scrub,
		limits: relayLimits{writeTimeout: o.WriteTimeout, upstreamTimeout: o.UpstreamTimeout,
			keepAlive: o.KeepAlive, finishGrace: o.FinishGrace, maxEventBytes: o.MaxEventBytes}}
	if a.mreq.Stream {
		c.relay.stream = &streamState{queueCap: o.StreamQueueEvents}
	}
	c.rec = &runRecord{id: c.id, tenant: ledger.TenantActor(a.tenant.ID), line: line, store: o.Store,
		log: g.log, pending: &g.pendingEnds, done: func() { g.unregister(c) }, endWait: o.EndWait}
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
	resp, refusals, err := c.att.send(c.line.ctx, path, body, c.att.header(r.Header, c.req, c.native))
	if err != nil {
		o, tell := c.att.failed(err, c.line.cause())
		c.fail(w, o, tell)
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		o, tell := c.att.refused(resp, refusals)
		c.fail(w, o, tell)
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
		c.fail(w, released(status, "gave up while queued at the gate of "+c.att.up.Name()+": "+ledger.ErrorMessage(err)), err)
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
