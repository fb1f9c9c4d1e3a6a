package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quotagate/quotagate/backend/gate"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/meter"
	"github.com/quotagate/quotagate/backend/openai"
	"github.com/quotagate/quotagate/backend/upstream"
)

// Why a run's upstream context was cancelled. Owner, operator, client and
// write-timeout cancels end the run cancelled; an upstream silence ends it
// interrupted. None of them is evidence: the hold is kept.
var (
	errCancelOwner    = errors.New("cancelled by its owner")
	errCancelOperator = errors.New("cancelled by the operator")
	errWriteTimeout   = errors.New("the client stopped reading for longer than the write timeout")
	errUpstreamIdle   = errors.New("the upstream sent nothing for longer than the upstream timeout")
)

// call is one admitted run in flight, whatever door it came through.
type call struct {
	g       *Gateway
	id      ledger.RunID
	tenant  ledger.Tenant
	up      Upstream
	door    door
	req     doorRequest
	model   string
	native  bool            // the upstream speaks the door's protocol (else: translated to chat)
	meter   *meter.Run      // reserve → observe → verdict, created once at admission
	ans     answer          // reads the upstream's answer, renders the client's
	ctx     context.Context // the upstream call's context; cancelled to close the connection
	cancel  context.CancelCauseFunc
	stream  *streamState // nil for non-streaming runs
	guarded bool         // the quota guard returned a check for this model
	by      ledger.Actor // who ended the run by a cancel, when it was not its tenant (the operator)
	waiting atomic.Bool  // queued at the gate (Queued, for the dashboard)

	mu      sync.Mutex
	rc      *http.ResponseController // set once the response started
	writing bool                     // a write to the client is in progress
	leftMid bool                     // the client left while a write was in progress (that write may still succeed)
	reason  error                    // the first abort's cause

	out       outcome // decided by the handler goroutine, applied by finish
	finished  bool    // finish ran (it runs once: before the end marker, or in the defer)
	doneEvent []byte  // the upstream's [DONE], held back until the outcome is committed

	// What the client got of a stream (issue 12 items 2 and 9).
	finishSent atomic.Bool // the event with the finish reason was written to the client
	dropped    atomic.Bool // a relayed event was not written (skipped after a cancel, or a write failed)
	left       atomic.Bool // the client left after the finish reason: the upstream is read for a grace
	grace      *time.Timer // ends that grace (under mu)
}

// clientLeft is called when the client's connection is gone (its request
// context ended, or a write to it failed). Before the finish reason reached
// it, the upstream call is cancelled at once; after it, the upstream is
// read for FinishGrace more, so that its usage and [DONE] still settle a
// run whose answer the client has whole (issue 12 item 9) — unless the
// grace is off (FinishGrace < 0).
func (c *call) clientLeft() {
	c.mu.Lock()
	writing := c.writing
	c.leftMid = c.leftMid || writing
	c.mu.Unlock()
	if writing {
		// The write in progress fails and says why (a write timeout, a
		// closed connection) — or succeeds into the socket's buffer, and
		// the writer comes back here once it has noted what it wrote.
		return
	}
	if !c.finishSent.Load() || c.g.opts.FinishGrace < 0 {
		c.abort(errClientGone)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.left.Swap(true) {
		return
	}
	c.grace = time.AfterFunc(c.g.opts.FinishGrace, func() { c.abort(errClientGone) })
}

// leftDuringWrite acts on a departure clientLeft saw while a write was in
// progress that then succeeded (else the departure was lost: with nothing
// more to write, the upstream was read to its end, grace or not).
func (c *call) leftDuringWrite() {
	c.mu.Lock()
	left := c.leftMid
	c.leftMid = false
	c.mu.Unlock()
	if left {
		c.clientLeft()
	}
}

// outcome is what finish writes to the ledger.
type outcome struct {
	decided  bool
	verdict  meter.Verdict // Trusted → Settle
	release  bool          // proof the provider did no work → ReleaseHold
	status   ledger.RunStatus
	evidence string
}

func (c *call) settle(v meter.Verdict) {
	c.out = outcome{decided: true, verdict: v, status: ledger.RunCompleted, evidence: v.Evidence()}
}

func (c *call) keep(status ledger.RunStatus, evidence string) {
	c.out = outcome{decided: true, status: status, evidence: evidence}
}

func (c *call) releaseHold(status ledger.RunStatus, evidence string) {
	c.out = outcome{decided: true, release: true, status: status, evidence: evidence}
}

// abort cancels the upstream call with cause (the first cause wins) and,
// if a write to a client that does not read is blocking, ends that write now.
func (c *call) abort(cause error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reason == nil {
		c.reason = cause
	}
	c.cancel(cause)
	if c.writing && c.rc != nil {
		_ = c.rc.SetWriteDeadline(time.Now())
	}
}

// cause says why the upstream context ended, or nil while it runs. Without
// an abort, the request context ended: the client closed its connection.
func (c *call) cause() error {
	if c.ctx.Err() == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reason != nil {
		return c.reason
	}
	return errClientGone
}

// writeError renders err in the door's shape; a failure that kept the
// run's hold also says x-should-retry: false — a retry would take a second
// hold for the same user call (issue 12 item 8).
func (c *call) writeError(w http.ResponseWriter, err error) {
	if c.out.decided && !c.out.release && !c.out.verdict.Trusted {
		w.Header().Set("x-should-retry", "false")
	}
	c.door.writeError(w, err)
}

func statusFor(cause error) ledger.RunStatus {
	if errors.Is(cause, errUpstreamIdle) {
		return ledger.RunInterrupted
	}
	return ledger.RunCancelled
}

// clientError is what the client of a cancelled run is told, when it can
// still hear it.
func clientError(cause error) error {
	switch {
	case errors.Is(cause, errUpstreamIdle):
		return ledger.Errorf(ledger.CodeUpstreamTimeout, "the upstream stopped sending; the run was cut and its reservation is held until reconciled")
	case errors.Is(cause, errCancelOwner), errors.Is(cause, errCancelOperator):
		return ledger.Errorf(ledger.CodeRunEnded, "the run was %s; its reservation is held until reconciled", cause.Error())
	}
	return ledger.Errorf(ledger.CodeRunEnded, "the run ended: %s", cause.Error())
}

// serveDoor is the run core's handler for door d: one call from auth to
// a decided outcome.
func (g *Gateway) serveDoor(d door) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { g.admit(d, w, r) }
}

func (g *Gateway) admit(d door, w http.ResponseWriter, r *http.Request) {
	t, err := g.authenticate(r)
	if err != nil {
		g.internalFor(d, w, err, "authenticate")
		return
	}
	if g.opts.RateLimiter != nil {
		if ra, ok := g.opts.RateLimiter.Allow(t.ID); !ok {
			err := &ledger.Error{Code: ledger.CodeRateLimited, RetryAfter: ra,
				Message: fmt.Sprintf("tenant %s sent too many requests; retry after the Retry-After seconds", t.ID)}
			g.refuse(r.Context(), t.ID, "", "", err)
			d.writeError(w, err)
			return
		}
	}
	retry, err := readRetryFacts(r.Header)
	if err != nil {
		d.writeError(w, err)
		return
	}
	body, err := g.readBody(w, r)
	if err != nil {
		d.writeError(w, err)
		return
	}
	req, err := d.parse(body)
	if err != nil {
		d.writeError(w, err)
		return
	}
	mreq := req.meterRequest()
	up := g.upstreamFor(mreq.Model)
	if up == nil || !t.AllowsModel(mreq.Model) {
		d.writeError(w, ledger.Errorf(ledger.CodeModelNotFound, "the model %q does not exist or is not available to this key", mreq.Model))
		return
	}
	native := speaks(up, d.protocol())
	if !native && !speaks(up, ProtocolChat) {
		d.writeError(w, ledger.Errorf(ledger.CodeModelNotFound, "the model %q is served by %s, which speaks neither %s nor chat completions", mreq.Model, up.Name(), d.protocol()))
		return
	}
	var quota *ledger.QuotaCheck
	if g.opts.Quota != nil {
		// Before any token counting: an evicted model costs nothing to refuse.
		if quota, err = g.opts.Quota.Check(up.Name(), mreq.Model); err != nil {
			g.refuse(r.Context(), t.ID, up.Name(), mreq.Model, err)
			g.internalFor(d, w, err, "quota check")
			return
		}
	}
	ans := req.answer(native)
	mrun := meter.NewRun(g.opts.Meter, g.opts.Reserve, g.opts.Band, mreq, ans.endMarker())
	var ticket GateTicket
	if g.opts.Gate != nil {
		if ticket, err = g.opts.Gate.Enter(up.Name()); err != nil {
			g.refuse(r.Context(), t.ID, up.Name(), mreq.Model, err)
			g.internalFor(d, w, err, "gate")
			return
		}
	}

	// The upstream call's context does not end with the client's request:
	// clientLeft decides (a client that left after the finish reason gets
	// its run settled from the usage that follows).
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(r.Context()))
	defer cancel(nil)
	c := &call{g: g, id: g.opts.NewRunID(), tenant: t, up: up, door: d, req: req, model: mreq.Model,
		native: native, meter: mrun, ans: ans, ctx: ctx, cancel: cancel, guarded: quota != nil}
	defer context.AfterFunc(r.Context(), c.clientLeft)()
	if mreq.Stream {
		c.stream = &streamState{queueCap: g.opts.StreamQueueEvents}
	}
	g.register(c)
	// Admission is recorded even if the client leaves meanwhile: the ledger
	// write must not be half-cancelled.
	run, err := g.opts.Store.Admit(context.WithoutCancel(r.Context()), ledger.AdmitRequest{
		RunID: c.id, TenantID: t.ID, Upstream: up.Name(), Model: mreq.Model,
		ReserveUnits: mrun.ReserveUnits(), Queued: ticket != nil && ticket.Queued(),
		Quota: quota, Actor: ledger.TenantActor(t.ID),
		Door: string(d.protocol()), UpstreamProtocol: string(upstreamProtocol(d, native)),
		IdempotencyKey: retry.key, RetryCount: retry.count, Fingerprint: retry.fingerprint(d.protocol(), body),
	})
	if err != nil {
		g.unregister(c)
		if ticket != nil {
			ticket.Abandon()
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
	defer func() { _ = c.finish(r.Context()) }()
	c.serve(w, r, ticket, run.Status == ledger.RunQueued)
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
		Kind: ledger.AuditReject, TenantID: tenantID, Actor: string(ledger.TenantActor(tenantID)), Reason: code,
		Evidence: ledger.ErrorMessage(err), Detail: detail,
	})
	if aerr != nil {
		g.log.Error("gateway: audit refusal", "tenant", tenantID, "code", code, "err", aerr)
	}
}

// serve takes the run from admission to a decided outcome. Until the first
// byte it may answer with an error; after it, failures only end the stream.
func (c *call) serve(w http.ResponseWriter, r *http.Request, ticket GateTicket, queued bool) {
	g := c.g
	if ticket != nil {
		c.waiting.Store(queued)
		release, err := ticket.Wait(c.ctx)
		c.waiting.Store(false)
		if err != nil {
			// Gave up while queued: the upstream never saw the call.
			status := ledger.RunFailed
			if cause := c.cause(); cause != nil {
				status = ledger.RunCancelled
				err = clientError(cause)
			}
			c.releaseHold(status, "gave up while queued at the gate of "+c.up.Name()+": "+ledger.ErrorMessage(err))
			c.writeError(w, err)
			return
		}
		defer release()
		if queued {
			if _, err := g.opts.Store.Start(context.WithoutCancel(c.ctx), c.id, ledger.TenantActor(c.tenant.ID)); err != nil {
				c.releaseHold(ledger.RunFailed, "could not start after the gate: "+err.Error())
				g.internalFor(c.door, w, err, "start run "+string(c.id))
				return
			}
		}
	}
	path, body, err := c.req.upstream(targetOf(c.up, c.native))
	if err != nil {
		c.releaseHold(ledger.RunFailed, "request not sent: "+err.Error())
		c.writeError(w, ledger.Errorf(ledger.CodeInvalidRequest, "the request could not be prepared: %v", err))
		return
	}
	var hdr http.Header
	for _, k := range g.opts.ForwardHeaders {
		if v := r.Header.Values(k); len(v) > 0 {
			if hdr == nil {
				hdr = http.Header{}
			}
			hdr[http.CanonicalHeaderKey(k)] = v
		}
	}
	if hr, ok := c.req.(headerRequest); ok {
		for k, v := range hr.upstreamHeader(c.native, r.Header) {
			if hdr == nil {
				hdr = http.Header{}
			}
			hdr[k] = v
		}
	}
	resp, refusals, err := g.send(c, path, body, hdr)
	if err != nil {
		c.sendFailed(w, err)
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		c.upstreamRefused(w, resp, refusals)
		return
	}
	if ct := resp.Header.Get("Content-Type"); !answerType(ct, c.stream != nil) {
		c.wrongType(w, ct)
		return
	}
	if c.stream != nil {
		c.relayStream(w, resp)
	} else {
		c.relayComplete(w, resp)
	}
}

// send calls the upstream, retrying a 429/503 per Options.Retry. It returns
// the final answer and the refusals that came before it. When the wait for a
// retry is cancelled, the provider has still done no work: the error says
// the request was not sent, so the hold is released.
func (g *Gateway) send(c *call, path string, body []byte, hdr http.Header) (*upstream.Response, []gate.Answer, error) {
	var resp *upstream.Response
	answers, err := g.opts.Retry.Do(c.ctx, func(ctx context.Context) (int, string, func(), error) {
		r, err := post(ctx, c.up, path, body, hdr)
		if err != nil {
			return 0, "", nil, err
		}
		resp = r
		discard := func() {
			_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, upstreamErrorBytes))
			r.Body.Close()
		}
		return r.StatusCode, r.Header.Get("Retry-After"), discard, nil
	})
	if err != nil {
		var se *upstream.SendError
		if len(answers) > 0 && !errors.As(err, &se) { // cancelled while waiting to retry
			err = &upstream.SendError{Upstream: c.up.Name(), Err: fmt.Errorf("after %s: %w", gate.Evidence(answers), err)}
		}
		return nil, answers, err
	}
	if gate.Retryable(resp.StatusCode) && len(answers) > 0 {
		answers = answers[:len(answers)-1] // the final answer is resp itself
	}
	return resp, answers, nil
}

// sendFailed handles a Send that got no response. A request that never left
// releases the hold with the error as evidence; one that may have reached
// the provider keeps it.
func (c *call) sendFailed(w http.ResponseWriter, err error) {
	var se *upstream.SendError
	sent := !errors.As(err, &se) || se.Sent
	cause := c.cause()
	status := ledger.RunFailed
	if cause != nil {
		status = statusFor(cause)
	}
	scrub := c.g.opts.Scrub.String
	switch {
	case !sent:
		c.releaseHold(status, scrub(se.Evidence()))
	case cause != nil:
		c.keep(status, fmt.Sprintf("%s while waiting for the upstream's answer", cause))
		noRetry(w)
	default:
		c.keep(status, scrub(fmt.Sprintf("upstream_no_response: the request reached %s but no answer came: %v", c.up.Name(), err)))
		noRetry(w)
	}
	if cause != nil {
		c.writeError(w, clientError(cause))
		return
	}
	if se != nil && se.Timeout {
		c.writeError(w, ledger.Errorf(ledger.CodeUpstreamTimeout, "the upstream %s did not answer in time", c.up.Name()))
		return
	}
	c.writeError(w, ledger.Errorf(ledger.CodeUpstreamError, "the upstream %s could not be reached", c.up.Name()))
}

// noRetry marks an error answer after which the run keeps its hold: the
// provider may have done the work, so a client's automatic retry could pay
// twice (DESIGN: x-should-retry: false; the Anthropic and OpenAI SDKs
// honour it).
func noRetry(w http.ResponseWriter) { w.Header().Set("X-Should-Retry", "false") }

// upstreamErrorBytes bounds the error body kept as evidence.
const upstreamErrorBytes = 64 << 10

// upstreamRefused handles an HTTP error answer before any output: the
// provider did no work, so the hold is released with the answer as evidence.
func (c *call) upstreamRefused(w http.ResponseWriter, resp *upstream.Response, refusals []gate.Answer) {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, upstreamErrorBytes))
	sum := sha256.Sum256(b)
	msg := c.g.opts.Scrub.String(upstreamMessage(b))
	evidence := fmt.Sprintf("upstream_status=%d body_sha256=%x: %s", resp.StatusCode, sum[:8], truncate(msg, 200))
	if len(refusals) > 0 {
		evidence = fmt.Sprintf("retried after %s; final %s", gate.Evidence(refusals), evidence)
	}
	c.releaseHold(ledger.RunFailed, evidence)
	var err *ledger.Error
	switch code, typ := upstreamCode(b); {
	case resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != http.StatusTooManyRequests:
		// Deterministic (a 400 context_length_exceeded): its own status,
		// code and words, so SDKs and agents decide as against the provider.
		if code == "" {
			code = ledger.CodeUpstreamError
		}
		c.writeError(w, &upstreamAnswer{err: &ledger.Error{Code: code,
			Message: fmt.Sprintf("the upstream %s answered %d: %s", c.up.Name(), resp.StatusCode, msg)},
			status: resp.StatusCode, typ: typ})
		return
	case resp.StatusCode == http.StatusTooManyRequests:
		err = &ledger.Error{Code: ledger.CodeUpstreamBusy, Message: fmt.Sprintf("the upstream %s is busy: %s", c.up.Name(), msg)}
		if d, ok := gate.ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now()); ok && d > 0 {
			err.RetryAfter = d
		}
	case resp.StatusCode == http.StatusGatewayTimeout:
		err = ledger.Errorf(ledger.CodeUpstreamTimeout, "the upstream %s timed out: %s", c.up.Name(), msg)
	default:
		err = ledger.Errorf(ledger.CodeUpstreamError, "the upstream %s answered %d: %s", c.up.Name(), resp.StatusCode, msg)
	}
	c.writeError(w, err)
}

// upstreamCode is the code and type of an OpenAI- or Anthropic-shaped
// error body ({"error":{"code","type"}}, {"type":"error","error":{"type"}}),
// each a short identifier or "".
func upstreamCode(b []byte) (code, typ string) {
	var e struct {
		Error struct {
			Code any    `json:"code"`
			Type string `json:"type"`
		} `json:"error"`
	}
	if json.Unmarshal(b, &e) != nil {
		return "", ""
	}
	if s, ok := e.Error.Code.(string); ok && identifier(s) {
		code = s
	}
	if identifier(e.Error.Type) {
		typ = e.Error.Type
	}
	if code == "" {
		code = typ
	}
	return code, typ
}

// identifier: 1–64 characters of [a-z0-9_.-], as error codes are.
func identifier(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return false
		}
	}
	return true
}

// upstreamMessage is the message of an OpenAI-shaped error body, else the
// body's first line.
func upstreamMessage(b []byte) string {
	if m := openai.ErrorMessage(b); m != "" {
		return m
	}
	s := strings.TrimSpace(string(b))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if s == "" {
		s = "(empty body)"
	}
	return truncate(s, 500)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && (s[n]&0xC0) == 0x80 { // keep UTF-8 whole
		n--
	}
	return s[:n] + "…"
}

// finish writes the decided outcome to the ledger, once. The relay calls it
// before the client sees the end of the answer (a [DONE] or the last byte of
// a body), so an answer the client received whole is settled on disk even if
// the process dies next (RELIABILITY T16). It also runs in a defer, so a
// panic or an early return still ends the run — with its hold kept unless
// there is evidence.
func (c *call) finish(reqCtx context.Context) error {
	if c.finished {
		return nil
	}
	c.finished = true
	g := c.g
	g.unregister(c)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(reqCtx), 30*time.Second)
	defer cancel()
	o := c.out
	if !o.decided {
		o = outcome{status: ledger.RunInterrupted, evidence: "the gateway ended the run without a decision"}
	}
	kind, err := c.writeEnd(ctx, o)
	if err != nil {
		// A decided outcome must reach the ledger (issue 12 item 1: a run
		// whose end could not be written stayed active for ever, its
		// concurrency slot taken): it is retried with backoff until written.
		g.log.Error("gateway: end run; retrying until the ledger takes it", "run", c.id, "outcome", kind, "err", err)
		g.retryEnd(c, o)
		return fmt.Errorf("end run %s: %w", c.id, err)
	}
	return nil
}

// writeEnd writes outcome o of c to the ledger.
func (c *call) writeEnd(ctx context.Context, o outcome) (kind string, err error) {
	g := c.g
	switch {
	case o.verdict.Trusted:
		// Above the reserve, the ledger charges the tenant the reserve and
		// counts the rest in the quota day (the provider did consume it).
		_, err = g.opts.Store.SettleUsage(ctx, c.id, ledger.Settlement{Units: o.verdict.SpendUnits,
			CachedTokens: o.verdict.CachedTokens, Evidence: o.evidence}, c.actor())
		kind = "settle"
	case o.release:
		_, err = g.opts.Store.ReleaseHold(ctx, c.id, o.status, o.evidence, c.actor())
		kind = "release"
	default:
		_, err = g.opts.Store.KeepHold(ctx, c.id, o.status, o.evidence, c.actor())
		kind = "keep hold"
	}
	if ledger.ErrorCode(err) == ledger.CodeRunEnded {
		err = nil // already written (a retry whose first try committed after all)
	}
	return kind, err
}

// Backoff of retryEnd.
const (
	endRetryFirst = 100 * time.Millisecond
	endRetryMax   = 5 * time.Second
)

// retryEnd writes c's outcome in the background, with backoff, until the
// ledger takes it. PendingEnds counts those waiting (for /healthz and the
// dashboard).
func (g *Gateway) retryEnd(c *call, o outcome) {
	g.pendingEnds.Add(1)
	go func() {
		defer g.pendingEnds.Add(-1)
		for wait := endRetryFirst; ; wait = min(2*wait, endRetryMax) {
			time.Sleep(wait) // backoff between tries of a write that failed; not a guess at an event
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			kind, err := c.writeEnd(ctx, o)
			cancel()
			if err == nil {
				g.log.Warn("gateway: end run written after retrying", "run", c.id, "outcome", kind)
				return
			}
			if ledger.ErrorCode(err) != ledger.CodeInternal {
				g.log.Error("gateway: end run refused; left for recovery", "run", c.id, "outcome", kind, "err", err)
				return
			}
		}
	}()
}

// PendingEnds is how many decided run ends the ledger has not taken yet
// (they are being retried).
func (g *Gateway) PendingEnds() int64 { return g.pendingEnds.Load() }
