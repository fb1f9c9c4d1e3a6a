package quota

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
)

// The learned overrun. A model whose trusted usage exceeds its
// reserve (seed 002's 34-vs-167 reasoning case, and worse) is reserved for
// at k × its reserves plus a tail held back once (AdmitLimit): k the largest
// ratio seen until the model has shown OverrunMinSamples calls, then their
// 90th percentile, the tail the largest single excess beyond it. The
// ledger's audit rows are the record: each admit row names the run's
// upstream/model and reserve, each settle row its units, and a settlement
// above its reserve says so in its evidence. The guard reads the rows after
// each commit it is told of (at start: those within history, so the
// distribution is rebuilt after a restart), audits each rise of the largest
// ratio (ReasonOverrunLearned, Units = k in thousandths) and writes it into
// the detail of every snapshot it records, so that a restart reads it back
// from the latest snapshot and the audit rows since. No new Store method is
// needed.

// Overrun is a model's learned distribution of trusted usage over reserve:
// the recent settled calls (at most OverrunSamples). Once it holds
// OverrunMinSamples calls, the guard reserves by a high quantile of the
// ratio rather than the largest one seen, and holds back once the largest
// excess of a single call beyond that quantile (Bound): the largest ratio
// is set by the smallest calls (a 4,096-token reasoning floor overrun 4×),
// and charging it on every reserve — a 150k-token input included — refused
// calls the pool could serve free.
type Overrun struct {
	reserve, cost []ledger.Units // ring of the recent calls
	next          int
	MaxMilli      int64 // the largest ratio seen, in thousandths (LearnOverrun)
	k             int64 // Bound's quantile, kept until the next call is learned (0: stale)
	tail          ledger.Units
	prior         int64 // the ratio charged until OverrunMinSamples calls are known (noOverrun: none)
}

// ReasoningPrior is the overrun ratio, in thousandths, a model declared as
// reasoning (Options.Reasoning) is reserved at until its own calls are
// known: a reasoning call's output is not bounded by its output cap (seed
// 002's 34-vs-167 case), and a burst of them on the model's first day is
// admitted before any has settled, so a ratio learned from the first
// settlement comes too late. 4× covers outputs up to four times the cap;
// a call that overruns further raises the learned ratio as it settles.
const ReasoningPrior = 4 * noOverrun

// NewOverrun is the overrun a model starts from: none, or ReasoningPrior
// for a model declared as reasoning. Learning lowers it once
// OverrunMinSamples calls are known (Bound).
func NewOverrun(o Options) Overrun {
	if o.Reasoning {
		return Overrun{prior: ReasoningPrior}
	}
	return Overrun{}
}

// Overrun learning figures: the window of calls, the calls needed before a
// quantile replaces the largest ratio, and the quantile (in thousandths).
const (
	OverrunSamples    = 500
	OverrunMinSamples = 50
	OverrunQuantile   = 900
)

// Learn records a settled call.
func (v *Overrun) Learn(reserve, cost ledger.Units) {
	if reserve <= 0 {
		return
	}
	v.MaxMilli = LearnOverrun(v.MaxMilli, reserve, cost)
	v.k = 0
	if len(v.reserve) < OverrunSamples {
		v.reserve, v.cost = append(v.reserve, reserve), append(v.cost, cost)
		return
	}
	v.reserve[v.next], v.cost[v.next] = reserve, cost
	v.next = (v.next + 1) % OverrunSamples
}

// Samples is the number of calls the distribution holds.
func (v *Overrun) Samples() int { return len(v.reserve) }

// Known reports whether the distribution holds OverrunMinSamples calls:
// Bound is then a quantile of the model's own calls rather than the
// largest ratio of the few seen so far (or the prior).
func (v *Overrun) Known() bool { return len(v.reserve) >= OverrunMinSamples }

// Bound is what AdmitLimit charges: every reserve counts kMilli/1000 of
// itself, and tail units are held back once, so that
//
//	Σ cost ≤ k·Σ reserve + tail
//
// holds for the calls in flight as long as at most one of them overruns
// beyond k. With fewer than OverrunMinSamples calls, k is the largest ratio
// seen, or the model's prior when that is larger, and tail 0.
func (v *Overrun) Bound() (kMilli int64, tail ledger.Units) {
	n := len(v.reserve)
	if n < OverrunMinSamples {
		return max(v.MaxMilli, v.prior, noOverrun), 0
	}
	if v.k != 0 {
		return v.k, v.tail
	}
	ratios := make([]int64, n)
	for i := range ratios {
		ratios[i] = ratioMilli(v.reserve[i], v.cost[i])
	}
	sort.Slice(ratios, func(i, j int) bool { return ratios[i] < ratios[j] })
	k := max(ratios[(n*OverrunQuantile+999)/1000-1], noOverrun)
	for i := range v.reserve {
		tail = max(tail, v.cost[i]-mulMilli(v.reserve[i], ledger.Units(k)))
	}
	v.k, v.tail = k, tail
	return k, tail
}

// ReasonOverrunLearned is the audit reason (kind AuditSync, actor ledger.ActorQuotaGuard)
// of a rise of a model's learned overrun.
const ReasonOverrunLearned = "overrun_learned"

// overrunTag marks k in a snapshot's detail.
const overrunTag = "overrun_milli="

// settleOverrunMark is how sqlite's settle evidence names an overrun.
const settleOverrunMark = "above the reserve"

func overrunDetail(k int64) string {
	if k <= noOverrun {
		return ""
	}
	return fmt.Sprintf("%s%d", overrunTag, k)
}

func joinDetail(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// overrunOf reads k back from the latest snapshot that carries it.
func overrunOf(snaps []ledger.Snapshot) int64 {
	for i := len(snaps) - 1; i >= 0; i-- {
		d := snaps[i].Detail
		if j := strings.LastIndex(d, overrunTag); j >= 0 {
			var k int64
			if _, err := fmt.Sscanf(d[j+len(overrunTag):], "%d", &k); err == nil {
				return k
			}
		}
	}
	return 0
}

// admitted is a run of the model admitted and not yet settled.
type admitted struct {
	at      time.Time
	reserve ledger.Units
}

// learnOverrun reads the audit rows written since the last call (at the
// first call: those within history): the admit rows of m's runs (their
// detail names the upstream/model, their units the reserve) and the settle
// rows of those runs are the calls its distribution learns from (Overrun);
// a settlement above its reserve, of a run admitted before the window too,
// and the overrun rows other gateways or an earlier process wrote raise
// the largest ratio. m.work must be held.
func (g *Guard) learnOverrun(ctx context.Context, m *model, now time.Time) error {
	m.mu.Lock()
	f := ledger.AuditFilter{AfterSeq: m.auditSeq}
	if m.auditSeq == 0 {
		f.From = now.Add(-history)
	}
	k := m.overrun.MaxMilli
	m.mu.Unlock()
	rows, err := g.store.Audit(ctx, f)
	if err != nil {
		return fmt.Errorf("read settlements for the overrun of %s/%s: %w", m.key.upstream, m.key.model, err)
	}
	sc := overrunScan{g: g, m: m, name: m.key.upstream + "/" + m.key.model, k: k, learned: k,
		open: map[ledger.RunID]ledger.Units{}}
	sc.prefix = sc.name + " "
	for _, r := range rows {
		if err := sc.row(ctx, r); err != nil {
			return err
		}
	}
	if sc.learned > sc.k {
		if err := g.store.AppendAudit(ctx, ledger.AuditEntry{At: g.now().UTC(), Kind: ledger.AuditSync, Actor: ledger.ActorQuotaGuard,
			Reason: ReasonOverrunLearned, Units: ledger.Units(sc.learned),
			Detail: fmt.Sprintf("%s%s: reserves now count up to ×%.3f (%s)", sc.prefix, overrunDetail(sc.learned),
				float64(sc.learned)/noOverrun, sc.from)}); err != nil {
			return fmt.Errorf("audit the overrun of %s/%s: %w", m.key.upstream, m.key.model, err) // re-read next time
		}
		sc.k = sc.learned
	}
	m.keepScan(&sc, rows, now)
	return nil
}

// overrunScan is one pass of learnOverrun over new audit rows: the runs of
// the model it saw admitted (open, opened), the ones it saw settled
// (closed, samples), and the largest ratio known (k) and learned now.
type overrunScan struct {
	g            *Guard
	m            *model
	name, prefix string // "<upstream>/<model>", and with the space a detail continues with
	samples      []overrunSample
	opened       []ledger.AuditEntry
	closed       []ledger.RunID
	open         map[ledger.RunID]ledger.Units
	k, learned   int64
	from         string // the run the learned ratio comes from
}

type overrunSample struct{ reserve, cost ledger.Units }

// row takes one audit row into the scan.
func (sc *overrunScan) row(ctx context.Context, r ledger.AuditEntry) error {
	switch {
	case r.Kind == ledger.AuditAdmit && (r.Detail == sc.name || strings.HasPrefix(r.Detail, sc.prefix)):
		sc.open[r.RunID] = r.Units
		sc.opened = append(sc.opened, r)
	case r.Kind == ledger.AuditSync && r.Reason == ReasonOverrunLearned && strings.HasPrefix(r.Detail, sc.prefix):
		sc.k = max(sc.k, int64(r.Units))
	case r.Kind == ledger.AuditSettle:
		return sc.settled(ctx, r)
	}
	return nil
}

// settled takes a settle row: a sample when the run is the model's (seen
// admitted in this scan or an earlier one), and for a settlement above its
// reserve, the run's own figures, which may raise the learned ratio.
func (sc *overrunScan) settled(ctx context.Context, r ledger.AuditEntry) error {
	m := sc.m
	reserve, ours := sc.open[r.RunID]
	if !ours {
		m.mu.Lock()
		a, ok := m.admitted[r.RunID]
		m.mu.Unlock()
		reserve, ours = a.reserve, ok
	}
	cost := r.Units
	if strings.Contains(r.Evidence, settleOverrunMark) {
		run, err := sc.g.store.Run(ctx, r.RunID)
		if err != nil {
			return fmt.Errorf("read run %s for the overrun of %s/%s: %w", r.RunID, m.key.upstream, m.key.model, err)
		}
		if run.Upstream != m.key.upstream || run.Model != m.key.model {
			return nil
		}
		reserve, ours, cost = run.ReserveUnits, true, run.SpentUnits+run.OverrunUnits
		if n := LearnOverrun(sc.learned, reserve, cost); n > sc.learned {
			sc.learned, sc.from = n, fmt.Sprintf("run %s: %d units on a reserve of %d", run.ID, cost, reserve)
		}
	}
	if ours {
		sc.samples = append(sc.samples, overrunSample{reserve, cost})
		delete(sc.open, r.RunID)
		sc.closed = append(sc.closed, r.RunID)
	}
	return nil
}

// keepScan stores what a scan of rows learned: the runs still open for the
// next scan, the samples, the largest ratio and the last seq read.
func (m *model) keepScan(sc *overrunScan, rows []ledger.AuditEntry, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.admitted == nil {
		m.admitted = map[ledger.RunID]admitted{}
	}
	for _, r := range sc.opened {
		if _, still := sc.open[r.RunID]; still {
			m.admitted[r.RunID] = admitted{at: r.At, reserve: r.Units}
		}
	}
	for _, id := range sc.closed {
		delete(m.admitted, id)
	}
	for id, a := range m.admitted { // ended without a settlement (held, released, cancelled): no sample
		if now.Sub(a.at) > history {
			delete(m.admitted, id)
		}
	}
	for _, x := range sc.samples {
		m.overrun.Learn(x.reserve, x.cost)
	}
	m.overrun.MaxMilli = max(m.overrun.MaxMilli, sc.k)
	if n := len(rows); n > 0 {
		m.auditSeq = max(m.auditSeq, rows[n-1].Seq)
	}
}
