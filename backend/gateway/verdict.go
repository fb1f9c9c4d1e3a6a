package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/meter"
)

// outcome is how a run ends in the ledger: decided by the handler,
// written by runRecord.finish.
type outcome struct {
	decided  bool
	verdict  meter.Verdict // Trusted → Settle
	usage    *ledger.Usage // the trusted usage the settlement is priced from
	release  bool          // proof the provider did no work → ReleaseHold
	status   ledger.RunStatus
	evidence string
	// answered is what the answer told beyond its usage (the provider's
	// id, the output relayed), written with the run's end.
	answered ledger.Answered
}

// settled settles verdict v, its cost priced from the usage the meter
// trusted (u; nil prices its units as input first, the rest as output).
func settled(v meter.Verdict, u *ledger.Usage) outcome {
	return outcome{decided: true, verdict: v, usage: u, status: ledger.RunCompleted, evidence: v.Evidence()}
}

func kept(status ledger.RunStatus, evidence string) outcome {
	return outcome{decided: true, status: status, evidence: evidence}
}

func released(status ledger.RunStatus, evidence string) outcome {
	return outcome{decided: true, release: true, status: status, evidence: evidence}
}

// keepsHold: the run ends with its hold kept. The provider may have done
// the work, so a client's automatic retry could pay twice: its error says
// x-should-retry: false (DESIGN; the Anthropic and OpenAI SDKs honour it).
func (o outcome) keepsHold() bool { return o.decided && !o.release && !o.verdict.Trusted }

// delivery is what the client got of a stream, and how the upstream's side
// of it ended.
type delivery struct {
	// everything: every relayed byte reached the client (then it may have
	// the end marker).
	everything bool
	// whole: at least the whole answer up to its finish reason reached it
	// (then it may be charged on trusted usage).
	whole    bool
	writeErr error  // the write to the client that failed
	readErr  string // the upstream read that failed, scrubbed; "" when none
}

// streamOutcome decides how a relayed stream ends, from the meter run's
// verdict, why the run's context ended (nil when it did not) and what the
// client got; tell is the terminal error event's error, when the client
// can still hear one. A cancel racing the end must not give a truncated
// answer that ends in [DONE] and is charged in full: events skipped after
// the cancel count as not received.
func streamOutcome(m *meter.Run, cause error, d delivery, upstreamName string) (outcome, error) {
	j := m.Judgement()
	v := meter.Judge(j)
	o, tell := decideStream(m, v, j, cause, d, upstreamName)
	o.answered = ledger.Answered{ProviderID: m.ProviderID(), RelayedUnits: v.RelayedUnits}
	return o, tell
}

// decideStream is streamOutcome's decision, from the verdict v on j.
func decideStream(m *meter.Run, v meter.Verdict, j meter.Judgement, cause error, d delivery, upstreamName string) (o outcome, tell error) {
	switch {
	case v.Trusted && d.whole:
		// The provider finished and said what it billed, and the client has
		// the answer; settle even if the client left after it.
		return settled(v, j.Usage), nil
	case v.Trusted:
		// The provider did the work, the client did not get all of it: the
		// run ends held for the operator to reconcile.
		if cause != nil {
			return kept(statusFor(cause), fmt.Sprintf("%s before the client received the whole answer; %s", cause, v.Evidence())), clientError(cause)
		}
		return kept(ledger.RunCancelled, "the client did not receive the whole answer; "+v.Evidence()), nil
	case cause != nil:
		return kept(statusFor(cause), fmt.Sprintf("%s; %s", cause, v.Evidence())), clientError(cause)
	case d.writeErr != nil:
		return kept(ledger.RunCancelled, fmt.Sprintf("%v; %s", d.writeErr, v.Evidence())), nil
	case d.readErr != "" || !m.SawEnd():
		why := "the upstream closed the stream before [DONE]"
		if d.readErr != "" {
			why = "the upstream stream broke: " + d.readErr
		}
		if ue := m.UpstreamError(); ue != "" {
			why += "; it sent an error: " + truncate(ue, 200) // scrubbed when observed
		}
		return kept(ledger.RunInterrupted, fmt.Sprintf("%s; %s", why, v.Evidence())),
			ledger.Errorf(ledger.CodeUpstreamInterrupt, "the upstream %s stopped mid-stream; the run is interrupted and its reservation is held until reconciled", upstreamName)
	}
	// A clean end without trusted usage: the client saw a normal end, the
	// ledger keeps the hold (DESIGN: missing or contradictory usage).
	return kept(ledger.RunCompleted, v.Evidence()), nil
}

// completeOutcome decides how a non-streaming answer ends, from its
// verdict and what the meter observed of its body (o, scrubbed).
func completeOutcome(v meter.Verdict, u *ledger.Usage, o meter.Observation) outcome {
	switch {
	case v.Trusted:
		return settled(v, u)
	case o.UpstreamError != "":
		return kept(ledger.RunCompleted, "the upstream's body is an error: "+truncate(o.UpstreamError, 200)+"; "+v.Evidence())
	}
	return kept(ledger.RunCompleted, v.Evidence())
}

// runRecord writes one admitted run's changes to the ledger: its start
// after a wait at the gate, and its decided outcome, once.
type runRecord struct {
	id      ledger.RunID
	tenant  ledger.Actor // the run's tenant, who ends it unless the operator cancelled
	line    *lifeline    // who cancelled it
	store   ledger.Store
	log     *slog.Logger
	pending *atomic.Int64 // ends being retried (Gateway.PendingEnds)
	done    func()        // called once the run is no longer in flight

	out      outcome // decided by the handler goroutine, applied by finish
	finished bool    // finish ran (it runs once: before the end marker, or in the defer)

	endWait time.Duration // Options.EndWait
	written chan struct{} // closed when retry stops; set by retry
	took    atomic.Bool   // retry wrote the end

	naming atomic.Pointer[time.Timer] // keeps the provider's id mid-stream (nameAfter); finish stops it
}

// nameAfter is what a stream's relay calls once its answer named the call:
// after d, unless the run ended by then (its end keeps the id), the id is
// kept on the run (ledger.NamedRule), so that a crash leaves a hold a usage
// lookup can still settle. A run ended meanwhile is left as it is.
func (rec *runRecord) nameAfter(d time.Duration) func(providerID string) {
	return func(providerID string) {
		rec.naming.Store(time.AfterFunc(d, func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if _, err := rec.store.ApplyRule(ctx, rec.id, rec.tenant, ledger.NamedRule(providerID)); err != nil {
				rec.log.Warn("keep the provider's id of a streaming run", "run", rec.id, "err", err)
			}
		}))
	}
}

// decide sets the outcome finish writes.
func (rec *runRecord) decide(o outcome) { rec.out = o }

// start moves a run that waited at the gate to running.
func (rec *runRecord) start(ctx context.Context) error {
	_, err := rec.store.Start(ctx, rec.id, rec.tenant)
	return err
}

// actor is who ends the run: the operator who cancelled it, else its tenant.
func (rec *runRecord) actor() ledger.Actor {
	if by := rec.line.operator(); !by.IsZero() {
		return by
	}
	return rec.tenant
}

// finish writes the decided outcome to the ledger, once. The relay calls it
// before the client sees the end of the answer (a [DONE] or the last byte of
// a body), so an answer the client received whole is settled on disk even if
// the process dies next (RELIABILITY T16). It also runs in a defer, so a
// panic or an early return still ends the run — with its hold kept unless
// there is evidence.
func (rec *runRecord) finish(reqCtx context.Context) error {
	if rec.finished {
		return nil
	}
	rec.finished = true
	if t := rec.naming.Load(); t != nil {
		t.Stop()
	}
	rec.done()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(reqCtx), 30*time.Second)
	defer cancel()
	o := rec.out
	if !o.decided {
		o = outcome{status: ledger.RunInterrupted, evidence: "the gateway ended the run without a decision"}
	}
	kind, err := rec.write(ctx, o)
	if err != nil {
		// A decided outcome must reach the ledger: a run whose end is not
		// written stays active for ever, its concurrency slot taken. It is
		// retried with backoff until written.
		rec.log.Error("gateway: end run; retrying until the ledger takes it", "run", rec.id, "outcome", kind, "err", err)
		rec.retry(o)
		return fmt.Errorf("end run %s: %w", rec.id, err)
	}
	return nil
}

// write writes outcome o to the ledger.
func (rec *runRecord) write(ctx context.Context, o outcome) (kind string, err error) {
	var rule ledger.Rule
	switch {
	case o.verdict.Trusted:
		// Above the reserve, the ledger charges the tenant the reserve and
		// counts the rest in the quota day (the provider did consume it).
		rule = ledger.SettleUsageRule(ledger.Settlement{Units: o.verdict.SpendUnits,
			CachedTokens: o.verdict.CachedTokens, Usage: o.usage, Evidence: o.evidence})
		kind = "settle"
	case o.release:
		rule, kind = ledger.ReleaseHoldRule(o.status, o.evidence), "release"
	default:
		rule, kind = ledger.KeepHoldRule(o.status, o.evidence), "keep hold"
	}
	_, err = rec.store.ApplyRule(ctx, rec.id, rec.actor(), rule.Noting(o.answered))
	switch {
	case errors.Is(err, ledger.ErrLateEnd):
		// This gateway was cut off from the ledger past its lease, and
		// another ended the run interrupted with its hold kept; the ledger
		// kept this end as evidence on the hold. Nothing to retry.
		rec.log.Warn("gateway: run ended by another gateway while this one's lease had lapsed; its end is kept as evidence on the hold",
			"run", rec.id, "outcome", kind)
		kind, err = lateEnd, nil
	case ledger.ErrorCode(err) == ledger.CodeRunEnded:
		err = nil // already written (a retry whose first try committed after all)
	}
	return kind, err
}

// awaitEnd waits up to Options.EndWait for the retried end of a whole
// answer (finish failed: the ledger is away, a database restarting) and
// reports whether the ledger took it. Until it does the client's end is held
// back: an end marker says the call is on the books. A database restart
// or failover is usually back within the wait; past it the client is told
// the ledger could not record the answer, and the end is still written
// when the ledger is back.
func (rec *runRecord) awaitEnd() bool {
	if rec.written == nil || rec.endWait <= 0 {
		return false
	}
	t := time.NewTimer(rec.endWait)
	defer t.Stop()
	select {
	case <-rec.written:
		return rec.took.Load()
	case <-t.C:
		return false
	}
}

// lateEnd is the kind runRecord.write reports for an end the ledger kept
// as evidence instead of applying (ledger.ErrLateEnd).
const lateEnd = "late end"

// Backoff of runRecord.retry.
const (
	endRetryFirst = 100 * time.Millisecond
	endRetryMax   = 2 * time.Second
)

// retry writes outcome o in the background, with backoff, until the
// ledger takes it. Gateway.PendingEnds counts those waiting (for /healthz
// and the dashboard).
func (rec *runRecord) retry(o outcome) {
	rec.pending.Add(1)
	rec.written = make(chan struct{})
	go func() {
		defer close(rec.written)
		defer rec.pending.Add(-1)
		for wait := endRetryFirst; ; wait = min(2*wait, endRetryMax) {
			time.Sleep(wait) // backoff between tries of a write that failed; not a guess at an event
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			kind, err := rec.write(ctx, o)
			cancel()
			if err == nil {
				rec.took.Store(kind != lateEnd)
				if kind != lateEnd {
					rec.log.Warn("gateway: end run written after retrying", "run", rec.id, "outcome", kind)
				}
				return
			}
			if ledger.ErrorCode(err) != ledger.CodeInternal {
				rec.log.Error("gateway: end run refused; left for recovery", "run", rec.id, "outcome", kind, "err", err)
				return
			}
		}
	}()
}
