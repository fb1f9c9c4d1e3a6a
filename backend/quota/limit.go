package quota

import (
	"sort"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
)

// Snapshot sources.
const (
	SourceManual   = "manual"    // an operator's balance reading; lagged like the API's
	SourceManualB0 = "manual-b0" // the day's true starting balance from the provider console
)

// lagWindow bounds how far back the lag fit and the B0 minimum look;
// lagPairs bounds the fit to the most recent pairs of readings (the lag is a
// property of the provider's settlement now, and the fit runs at every sync).
const (
	lagWindow = 24 * time.Hour
	lagPairs  = 48
)

// Limit is quotagate's cumulative daily limit: min(cap, B0 − small_buffer), ≥ 0.
func Limit(o Options, b0 ledger.Units) ledger.Units {
	return clamp(min(o.DailyCap, b0-o.SmallBuffer))
}

// LimitV6 is seed 002's v6 Snapshot-Offset limit, kept for comparison:
// min(cap, balance_at_sync + usage_at_sync − small_buffer) = B0 + L − buffer.
func LimitV6(o Options, balanceAtSync, usageAtSync ledger.Units) ledger.Units {
	return clamp(min(o.DailyCap, balanceAtSync+usageAtSync-o.SmallBuffer))
}

func clamp(u ledger.Units) ledger.Units { return max(u, 0) }

// UsageToday is usage(t) for the day starting at dayStart: the units settled
// in [dayStart, t), or minus those in [t, dayStart) when t is before it. The
// negative branch carries yesterday's late readings across the rollover:
// balance(t) = B0_today + usage in [t−Δ, midnight).
func UsageToday(s *Series, dayStart, t time.Time) ledger.Units { return s.Cum(t) - s.Cum(dayStart) }

// readings are the snapshots that are lagged balance readings (everything
// but a manual B0), oldest first, within the window before now.
func readings(snaps []ledger.Snapshot, now time.Time) []ledger.Snapshot {
	out := make([]ledger.Snapshot, 0, len(snaps))
	for _, s := range snaps {
		if s.Source == SourceManualB0 || s.At.After(now) || now.Sub(s.At) > lagWindow {
			continue
		}
		out = append(out, s)
	}
	less := func(i, j int) bool { return out[i].At.Before(out[j].At) }
	if !sort.SliceIsSorted(out, less) {
		sort.SliceStable(out, less)
	}
	return out
}

// EstimateLag picks the Δ in [MinLag, MaxLag] (whole minutes) that best
// explains successive readings: the balance drop between two readings should
// equal the usage settled in [t1−Δ, t2−Δ). Pairs across a balance rise
// (a refund) are skipped. With nothing to learn from, DefaultLag.
func EstimateLag(o Options, snaps []ledger.Snapshot, s *Series, now time.Time) time.Duration {
	return estimateLag(o, readings(snaps, now), s)
}

func estimateLag(o Options, rs []ledger.Snapshot, s *Series) time.Duration {
	// Pair ends as minute indexes into the series: shifting both by Δ whole
	// minutes is then integer arithmetic (this runs at every sync).
	type pair struct {
		ia, ib int
		drop   ledger.Units
	}
	var pairs []pair
	for i := 1; i < len(rs); i++ {
		drop := rs[i-1].BalanceUnits - rs[i].BalanceUnits
		if drop < 0 {
			continue
		}
		pairs = append(pairs, pair{s.index(rs[i-1].At), s.index(rs[i].At), drop})
	}
	if len(pairs) == 0 {
		return o.DefaultLag
	}
	if len(pairs) > lagPairs {
		pairs = pairs[len(pairs)-lagPairs:]
	}
	lo, hi := int(o.MinLag/time.Minute), int(o.MaxLag/time.Minute)
	best, bestErr, informative := o.DefaultLag, ledger.Units(-1), false
	for d := lo; d <= hi; d++ {
		var sum ledger.Units
		for _, p := range pairs {
			used := s.cumAt(p.ib-d) - s.cumAt(p.ia-d)
			if used != 0 || p.drop != 0 {
				informative = true
			}
			e := p.drop - used
			if e < 0 {
				e = -e
			}
			sum += e
		}
		// ≤: on a tie keep the larger Δ, whose B0 is the smaller.
		if bestErr < 0 || sum <= bestErr {
			best, bestErr = time.Duration(d)*time.Minute, sum
		}
	}
	if !informative {
		return o.DefaultLag
	}
	return best
}

// B0Estimate is the day's starting free pool as the guard believes it.
type B0Estimate struct {
	Units  ledger.Units
	Known  bool
	Manual bool // from a manual B0 for the day
}

// EstimateB0 returns the manual B0 for day if there is one; otherwise the
// smallest balance + usage_today(t − Δ) over the readings since the last rise
// of the balance (each rise is a refund, which raises B0 for real).
func EstimateB0(o Options, day string, snaps []ledger.Snapshot, s *Series, lag time.Duration, now time.Time) B0Estimate {
	return estimateB0(o, day, snaps, readings(snaps, now), s, lag, now)
}

func estimateB0(o Options, day string, snaps, rs []ledger.Snapshot, s *Series, lag time.Duration, now time.Time) B0Estimate {
	var manual *ledger.Snapshot
	for i := range snaps {
		if snaps[i].Source == SourceManualB0 && snaps[i].Day == day && !snaps[i].At.After(now) {
			if manual == nil || !snaps[i].At.Before(manual.At) {
				manual = &snaps[i]
			}
		}
	}
	if manual != nil {
		return B0Estimate{Units: manual.B0Units, Known: true, Manual: true}
	}
	if len(rs) == 0 {
		return B0Estimate{}
	}
	from := 0
	for i := 1; i < len(rs); i++ {
		if rs[i].BalanceUnits > rs[i-1].BalanceUnits {
			from = i
		}
	}
	dayStart := o.DayStart(now)
	est := B0Estimate{Known: true}
	for i, r := range rs[from:] {
		b0 := r.BalanceUnits + UsageToday(s, dayStart, r.At.Add(-lag))
		if i == 0 || b0 < est.Units {
			est.Units = b0
		}
	}
	return est
}

// Expiry is a free package's expiry: its available units vanish at At. The
// type is an alias of an unnamed struct so that a balance source can return
// the same type without importing this package.
type Expiry = struct {
	At    time.Time
	Units ledger.Units
}

// ExpiringBy sums the units of exp that expire at or before t.
func ExpiringBy(exp []Expiry, t time.Time) ledger.Units {
	var u ledger.Units
	for _, e := range exp {
		if !e.At.After(t) {
			u += e.Units
		}
	}
	return u
}

// Assessment is a guarded model's position at one instant.
type Assessment struct {
	Day           string
	Lag           time.Duration
	B0            B0Estimate
	Limit         ledger.Units // quotagate's limit; 0 when B0 is unknown
	LimitV6       ledger.Units
	Expiring      []Expiry     // the source's package expiries at the last sync
	ExpiryBase    ledger.Units // usage_today when the listed units were current
	ExpiringUnits ledger.Units // units expiring within the horizon, left out of Limit
	at            time.Time
	BalanceAtSync ledger.Units // latest reading (or manual B0 − usage)
	UsageAtSync   ledger.Units
	SyncedAt      time.Time
	Synced        bool
}

// Assess derives the limit at now from the snapshots and the usage series.
func Assess(o Options, now time.Time, snaps []ledger.Snapshot, s *Series) Assessment {
	a := Assessment{Day: o.Day(now), at: now}
	rs := readings(snaps, now)
	a.Lag = estimateLag(o, rs, s)
	a.B0 = estimateB0(o, a.Day, snaps, rs, s, a.Lag, now)
	a.At(o, now, 0)
	var last *ledger.Snapshot
	for i := range snaps {
		if !snaps[i].At.After(now) && (last == nil || !snaps[i].At.Before(last.At)) {
			last = &snaps[i]
		}
	}
	if last != nil {
		a.Synced = true
		a.SyncedAt = last.At
		a.BalanceAtSync = last.BalanceUnits
		a.UsageAtSync = last.UsageAtSync
		a.LimitV6 = LimitV6(o, last.BalanceUnits, last.UsageAtSync)
	}
	return a
}

// SetExpiries attaches a source's package expiries listed at listedAt (a
// lagged listing: the units are as of listedAt − Lag) to the assessment.
func (a *Assessment) SetExpiries(o Options, exp []Expiry, listedAt time.Time, s *Series) {
	a.Expiring = exp
	a.ExpiryBase = 0
	if len(exp) > 0 {
		a.ExpiryBase = UsageToday(s, o.DayStart(a.at), listedAt.Add(-a.Lag))
	}
}

// At recomputes Limit for now and today's usage: min(cap, B0 − small_buffer
// − E), where E is what the packages expiring by now + ExpiryHorizon still
// hold. Packages are consumed oldest first, and the oldest expire first, so
// the usage since the listing has already eaten into them: E = max(0,
// listed units − (usage − ExpiryBase)). Requests admitted now may finish
// after the expiry, so E is left out of the limit from the horizon on.
func (a *Assessment) At(o Options, now time.Time, usage ledger.Units) {
	a.ExpiringUnits = max(0, ExpiringBy(a.Expiring, now.Add(o.ExpiryHorizon))-max(0, usage-a.ExpiryBase))
	a.Limit = 0
	if a.B0.Known {
		a.Limit = Limit(o, a.B0.Units-a.ExpiringUnits)
	}
}

// Admits reports whether a reserve fits under the limit given the day so far:
// usage_today + held_in_flight + reserve ≤ limit. The ledger applies the same
// rule atomically (ledger.QuotaCheck); this is its pure form.
func Admits(u ledger.QuotaUsage, reserve, limit ledger.Units) bool {
	return u.UsageUnits+u.HeldInFlight+reserve <= limit
}
