package meter

import (
	"github.com/quotagate/quotagate/backend/ledger"
)

// Run meters one admitted call: created once at admission with its
// reserve, it observes the upstream's answer event by event (or as one
// body) and gives the verdict. The gateway keeps it for the whole call and
// never carries the estimate's figures around.
//
//	run := meter.NewRun(m, policy, band, req) // run.ReserveUnits() → ledger Admit
//	run.Observe(o)                            // per upstream event, from the reader goroutine
//	v := run.Verdict()                        // after the reader is done
//
// It is not safe for concurrent use; the gateway's reader goroutine
// observes and the handler takes the verdict once that goroutine is done.
type Run struct {
	meter Meter
	model string
	est   Estimate
	band  PromptBand
	tally Tally
	// stream is false for a non-streaming answer, judged as one body.
	stream bool
}

// NewRun counts req under m and policy and returns its meter run. A zero
// band picks BandFor(req.Model). endMarker names the protocol's terminal
// marker in verdict sentences ("" is chat's "[DONE]").
func NewRun(m Meter, policy ReservePolicy, band PromptBand, req Request, endMarker string) *Run {
	if band == (PromptBand{}) {
		band = BandFor(req.Model)
	}
	r := &Run{meter: m, model: req.Model, est: policy.Estimate(m, req), band: band, stream: req.Stream}
	r.tally.EndMarker = endMarker
	return r
}

// Estimate is the breakdown behind the run's reserve.
func (r *Run) Estimate() Estimate { return r.est }

// ReserveUnits is what the run holds at admission.
func (r *Run) ReserveUnits() ledger.Units { return r.est.ReserveUnits }

// Observe takes one upstream event's observation (a stream), or the one
// observation of a whole body (not a stream).
func (r *Run) Observe(o Observation) { r.tally.Observe(o) }

// SawEnd reports whether the protocol's terminal marker arrived.
func (r *Run) SawEnd() bool { return r.tally.SawDone() }

// Output is the text relayed so far.
func (r *Run) Output() string { return r.tally.Output() }

// ProviderID is the provider's id of the call, as its answer first named
// it; "" when it did not.
func (r *Run) ProviderID() string { return r.tally.ProviderID }

// UpstreamError is the message of the last in-stream error object, or "".
func (r *Run) UpstreamError() string { return r.tally.UpstreamError }

// Judgement is what the verdict depends on, as observed so far.
func (r *Run) Judgement() Judgement {
	j := r.tally.Judgement(r.meter, r.model, r.est.InputUnits, r.est.UncertainUnits, r.band)
	j.ReserveUnits = r.est.ReserveUnits
	if !r.stream {
		// One body, observed whole: complete unless it did not parse.
		j.Stream, j.SawDone = false, false
		j.Complete = r.tally.Events > 0 && !r.tally.unreadable
	}
	return j
}

// Verdict applies Judge to what was observed: settle or keep the hold.
func (r *Run) Verdict() Verdict { return Judge(r.Judgement()) }
