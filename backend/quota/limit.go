package quota

import (
	"sort"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
)

// Snapshot sources an operator enters (ledger's, where they decide a
// sync row's actor).
const (
	SourceManual   = ledger.SourceManual   // an operator's balance reading; lagged like the API's
	SourceManualB0 = ledger.SourceManualB0 // the day's true starting balance from the provider console
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
// but a manual B0), oldest first, within the window before now. Snapshots
// kept in time order (as the guard keeps them) cost no copy.
func readings(snaps []ledger.Snapshot, now time.Time) []ledger.Snapshot {
	from := now.Add(-lagWindow)
	sorted, clean := true, true
	for i := range snaps {
		if i > 0 && snaps[i].At.Before(snaps[i-1].At) {
			sorted = false
			break
		}
		if snaps[i].Source == SourceManualB0 || snaps[i].At.After(now) {
			clean = false
		}
	}
	if sorted && clean {
		i := sort.Search(len(snaps), func(i int) bool { return !snaps[i].At.Before(from) })
		return snaps[i:]
	}
	out := make([]ledger.Snapshot, 0, len(snaps))
	for _, s := range snaps {
		if s.Source == SourceManualB0 || s.At.After(now) || s.At.Before(from) {
			continue
		}
		out = append(out, s)
	}
	less := func(i, j int) bool { return out[i].At.Before(out[j].At) }
	if !sorted {
		sort.SliceStable(out, less)
	}
	return out
}

// lagSteps are the settlement steps, in minutes, the lag fit considers. A
// balance API that settles every few minutes reflects the usage up to the
// last step boundary before t − Δ (clock-aligned); a one-minute model of it
// errs by up to a step of usage at every reading, and the smallest of the
// readings' estimates keeps the worst of those errors for the rest of the
// day (≈0.6 point of pool use in the simulator's usual conditions, whose
// API settles in steps of 1, 2 or 5 minutes).
var lagSteps = []int{1, 2, 5}

// settleAt is the settle point of a reading taken at t under lag and step:
// t − lag rounded down to a multiple of step (whole minutes at least).
func settleAt(t time.Time, lag, step time.Duration) time.Time {
	return t.Add(-lag).Truncate(max(step, time.Minute))
}

// EstimateLag picks the Δ in [MinLag, MaxLag] (whole minutes) that best
// explains successive readings: the balance drop between two readings should
// equal the usage settled in [t1−Δ, t2−Δ), each end rounded down to the
// API's settlement step (lagSteps, fitted too). Pairs across a balance rise
// (a refund) are skipped, and a reading whose balance has not moved since
// the one before is passed over: the pair spans it. With nothing to learn
// from, DefaultLag.
func EstimateLag(o Options, snaps []ledger.Snapshot, s *Series, now time.Time) time.Duration {
	return estimateLag(o, readings(snaps, now), s).lag
}

// lagFit is a fitted settlement: lag Δ and step; informative is false
// when no pair of readings moved (DefaultLag, step 1 min).
type lagFit struct {
	lag, step   time.Duration
	informative bool
	known       bool // the fit's own answer: informative need not be recomputed
}

func estimateLag(o Options, rs []ledger.Snapshot, s *Series) lagFit {
	// Pair ends as minute indexes into the series: shifting both by Δ whole
	// minutes is then integer arithmetic (this runs at every sync).
	type pair struct {
		ia, ib int
		drop   ledger.Units
	}
	none := lagFit{lag: o.DefaultLag, step: time.Minute}
	var pairs []pair
	from := 0 // the pair's first reading: the last one whose balance moved
	for i := 1; i < len(rs); i++ {
		drop := rs[from].BalanceUnits - rs[i].BalanceUnits
		if drop == 0 && i < len(rs)-1 {
			// An unmoved balance is a stall (or one settlement step): the
			// readings either side of it pair up across it, so that the
			// catch-up after a stall is not read as a longer lag.
			continue
		}
		if drop >= 0 {
			pairs = append(pairs, pair{s.index(rs[from].At), s.index(rs[i].At), drop})
		}
		from = i
	}
	if len(pairs) == 0 {
		none.known = true
		return none
	}
	if len(pairs) > lagPairs {
		pairs = pairs[len(pairs)-lagPairs:]
	}
	last := pairs[len(pairs)-1].ib
	lo, hi := int(o.MinLag/time.Minute), int(o.MaxLag/time.Minute)
	best, bestErr, bestAt, informative := none, ledger.Units(-1), 0, false
	base := s.minuteOfStart()
	for _, st := range lagSteps {
		for d := lo; d <= hi; d++ {
			var sum ledger.Units
			for _, p := range pairs {
				used := s.cumAt(s.stepIndexFrom(p.ib-d, st, base)) - s.cumAt(s.stepIndexFrom(p.ia-d, st, base))
				if used != 0 || p.drop != 0 {
					informative = true
				}
				e := p.drop - used
				if e < 0 {
					e = -e
				}
				sum += e
			}
			// On a tie keep the fit whose settle point of the latest reading
			// is the earlier (the larger Δ, the coarser step): its B0 is the smaller.
			at := s.stepIndexFrom(last-d, st, base)
			if bestErr < 0 || sum < bestErr || (sum == bestErr && at <= bestAt) {
				best, bestErr, bestAt = lagFit{lag: time.Duration(d) * time.Minute, step: time.Duration(st) * time.Minute}, sum, at
			}
		}
	}
	if !informative {
		none.known = true
		return none
	}
	best.informative, best.known = true, true
	return best
}

// B0Estimate is the day's starting free pool as the guard believes it.
type B0Estimate struct {
	Units  ledger.Units
	Known  bool
	Manual bool // a manual B0 for the day lowered (or matched) the readings' estimate at its entry
	// ManualUnits is the day's manual B0, when one was entered (0 otherwise).
	ManualUnits ledger.Units
	// Readings is what the balance readings support, when there are any
	// (ReadingsKnown): a manual B0 above it is not believed, since an
	// operator's figure may be wrong and an overstated B0 bills.
	Readings      ledger.Units
	ReadingsKnown bool
	// AtManual is what the readings taken by the manual B0's entry
	// supported then (0 when none were): the manual B0 is compared with it.
	AtManual ledger.Units
	// Latest is what the latest reading alone says the pool is (balance +
	// usage_today(t − Δ)): Units is the smallest over the day's readings
	// since the latest settled one (settledQuiet), the worst case held
	// until a reading proves it, and the difference is the lag term's
	// share of the headroom (Headroom).
	Latest ledger.Units
}

// ManualExcess is how far a manual B0 stands above what the readings
// supported when it was entered (0 when it does not, or when either is
// missing): the difference the dashboard shows the operator.
func (b B0Estimate) ManualExcess() ledger.Units {
	if b.ManualUnits == 0 || b.AtManual == 0 {
		return 0
	}
	return max(0, b.ManualUnits-b.AtManual)
}

// EstimateB0 returns the smallest balance + usage_today(t − Δ) over the
// readings, where a rise of the balance between two readings (a refund) may
// raise the estimate by at most the rise seen: consumption between the two
// settle points hides part of the refund, never adds to it. A settled
// reading — one after settledQuiet without any usage of the model — is
// exact whatever the lag up to that long, and starts the smallest afresh.
//
// A manual B0 for day is the pool as of its entry. It is taken when it is
// no higher than what the readings taken by then support — the same
// estimate, or, when the readings reveal no lag (no pair of them moved),
// their balance plus all usage since (v6's B0 + L) — and is cut down to
// that otherwise: an operator's B0 may lower the estimate, never raise it
// above the readings. A refund that shows after its entry raises
// it by the same rule as any rise: the console's starting balance cannot
// hold a refund not yet paid, and one paid before the entry but shown only
// after it rises from the readings' estimate, which the manual B0 only
// ever lowers. With no readings, the manual B0 alone.
func EstimateB0(o Options, day string, snaps []ledger.Snapshot, s *Series, lag time.Duration, now time.Time) B0Estimate {
	return estimateB0(o, day, snaps, readings(snaps, now), s, lagFit{lag: lag, step: time.Minute}, now, 0)
}

func estimateB0(o Options, day string, snaps, rs []ledger.Snapshot, s *Series, lag lagFit, now time.Time,
	refundFloor ledger.Units) B0Estimate {
	var manual *ledger.Snapshot
	for i := range snaps {
		if snaps[i].Source == SourceManualB0 && snaps[i].Day == day && !snaps[i].At.After(now) {
			if manual == nil || !snaps[i].At.Before(manual.At) {
				manual = &snaps[i]
			}
		}
	}
	f := b0Fold{o: o, s: s, day: day, dayStart: o.DayStart(now), lag: lag.lag, step: lag.step, floor: refundFloor}
	for _, r := range rs {
		f.add(r)
	}
	est := B0Estimate{Readings: f.b, ReadingsKnown: len(rs) > 0, Latest: f.last}
	est.Units, est.Known = est.Readings, est.ReadingsKnown
	if manual == nil {
		return est
	}
	est.ManualUnits = manual.B0Units
	if est.ReadingsKnown {
		if !lag.informative && (lag.known || !estimateLag(o, rs, s).informative) {
			f.lag, f.step = -time.Minute, time.Minute // lag 0, the reading's whole minute included
		}
	}
	f.reset()
	i := 0
	for ; i < len(rs) && !rs[i].At.After(manual.At); i++ {
		f.add(rs[i])
	}
	est.AtManual = f.b
	f.lower(manual.B0Units)
	est.Manual = est.AtManual == 0 || manual.B0Units <= est.AtManual
	for ; i < len(rs); i++ {
		f.add(rs[i])
	}
	est.Units, est.Known = f.b, true
	return est
}

// b0Fold folds the readings, oldest first, into the readings' B0 at lag:
// the smallest balance + usage_today(t − lag), a rise raising it by at most
// the rise seen — or, for today's rises, by up to floor, a lower bound of
// today's T+1 refund that the guard knows from its own ledger
// (RefundFloor): today's rises together never raise it by more than the
// larger of the rises seen and that bound, both at most the true refund.
// The bound is used only once the rises seen, with the most consumption
// their settle points can hide (usage in [t₁ − MaxLag, t₂ − MinLag)), could
// be the whole refund: the first part of a refund paid in two must not
// count as all of it.
type b0Fold struct {
	o        Options
	s        *Series
	day      string
	dayStart time.Time
	lag      time.Duration
	step     time.Duration
	floor    ledger.Units

	n                 int
	prev              ledger.Snapshot
	b, seen, credited ledger.Units
	last              ledger.Units // the latest reading's own estimate
	since             ledger.Units // the smallest estimate since the last rise (seed 002's v6-era rule)
	lowered, started  bool
}

func (f *b0Fold) reset() {
	f.n, f.b, f.seen, f.credited, f.since, f.lowered, f.started = 0, 0, 0, 0, 0, false, false
}

// lower applies a manual B0 entered after the readings folded so far: the
// estimate (and the pool the readings since the last rise agree on) is at
// most it. Before any reading it is the estimate.
func (f *b0Fold) lower(u ledger.Units) {
	if !f.started {
		f.b, f.since, f.started, f.lowered = u, u, true, true
		return
	}
	f.b, f.since = min(f.b, u), min(f.since, u)
}

func (f *b0Fold) add(r ledger.Snapshot) {
	b0 := r.BalanceUnits + UsageToday(f.s, f.dayStart, settleAt(r.At, f.lag, f.step))
	f.last = b0
	switch {
	case !f.started:
		f.b, f.since, f.started = b0, b0, true
	case f.settled(r) && !f.lowered:
		// Exact, refunds granted by its settle point included: from here on
		// a rise raises it by the rise seen, never by the refund's bound,
		// part of which this figure already holds.
		f.b, f.since, f.floor = b0, b0, 0
	case f.n > 0 && r.BalanceUnits > f.prev.BalanceUnits:
		rise := r.BalanceUnits - f.prev.BalanceUnits
		base := f.b
		if r.Day == f.day {
			f.seen += rise
			hidden := UsageToday(f.s, f.dayStart, r.At.Add(-f.o.MinLag)) - UsageToday(f.s, f.dayStart, f.prev.At.Add(-f.o.MaxLag))
			if f.floor > 0 && f.seen+hidden >= f.floor {
				// The whole refund may have landed: it raises the pool the
				// readings since the last rise agree on by up to the bound.
				rise, base = max(f.seen, f.floor)-f.credited, max(f.b, f.since)
			}
		}
		next := min(b0, base+max(0, rise))
		if r.Day == f.day {
			f.credited += max(0, next-base)
		}
		f.b, f.since = next, b0
	default:
		f.b, f.since = min(f.b, b0), min(f.since, b0)
	}
	f.prev = r
	f.n++
}

// settledQuiet: a reading taken after this long without any settled usage
// of the model is settled — whatever the lag, up to this long, the balance
// it shows has taken in all of the model's usage, so its B0 is exact. Seed
// 002 measured a lag of ≈14 min; the harshest balance API the simulator
// models (a 60 min lag frozen for 2 h) reaches about 3 h: an hour beyond it.
const settledQuiet = 4 * time.Hour

// settled reports whether r is a settled reading: no usage of the model
// settled in the settledQuiet before it (nor in its own minute), within
// what the series holds.
func (f *b0Fold) settled(r ledger.Snapshot) bool {
	from := r.At.Add(-settledQuiet)
	return f.s != nil && len(f.s.cum) > 0 && !from.Before(f.s.start) &&
		f.s.Between(from, r.At.Add(time.Minute)) == 0
}

// refundSkew bounds how far the provider's day may turn from the guard's:
// the provider's clock and its day's end are its own (±10 min seen).
const refundSkew = 10 * time.Minute

// RefundFloor is a lower bound of today's T+1 refund (seed 002 §1.1: the
// provider refunds yesterday's collection, up to the cap): what yesterday's
// runs consumed by midnight — yesterday's quota-day usage, less what its runs
// settled since (collected today), less what was settled in the last
// refundSkew before midnight (the provider's day may have turned early).
// Other consumers of the same account only make the refund larger.
func RefundFloor(o Options, yesterdayUsage ledger.Units, carry Carry, s *Series, now time.Time) ledger.Units {
	start := o.DayStart(now)
	late := s.Between(start.Add(-refundSkew), start)
	return clamp(min(o.DailyCap, yesterdayUsage-carry.Settled-late))
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
	LagStep       time.Duration // the balance API's settlement step the lag fit found
	B0            B0Estimate
	Limit         ledger.Units // quotagate's limit; 0 when B0 is unknown
	LimitV6       ledger.Units
	Expiring      []Expiry     // the source's package expiries at the last sync
	ExpiryBase    ledger.Units // usage_today when the listed units were current
	ExpiringUnits ledger.Units // units expiring within the horizon, left out of Limit
	// Carry is what yesterday's runs draw from today's pool.
	Carry Carry
	// OverrunMilli is the model's learned ratio of trusted usage to reserve,
	// in thousandths (0 or 1000: none), and OverrunTail the units held back
	// once beyond it (Overrun.Bound); see AdmitLimit.
	OverrunMilli int64
	OverrunTail  ledger.Units
	// OverrunKnown: the overrun is learned from OverrunMinSamples calls or
	// more (Overrun.Known). Until then no call of the model has shown
	// that it stays within its reserve, and the whole small buffer stays.
	OverrunKnown  bool
	at            time.Time
	series        *Series
	BalanceAtSync ledger.Units // latest reading (or manual B0 − usage)
	UsageAtSync   ledger.Units
	SyncedAt      time.Time
	Synced        bool
	DailyCap      ledger.Units // the options' cap, for AdmitLimit
	// Listed: the balance source lists its packages' expiries, so the
	// expiry horizon leaves expiring units out and, while the model has
	// not overrun its reserves, the small buffer holds only the settlement
	// residue (Buffer).
	Listed bool
	// Buffer is what the limit holds back below B0: the small buffer, or
	// with a listing only the settlement residue.
	Buffer ledger.Units
	// SkewHeld is what the provider's day, turning up to refundSkew from
	// the guard's, may already have collected beyond today's own usage: the
	// cap room AdmitLimit leaves today is DailyCap − SkewHeld.
	SkewHeld ledger.Units
	// RiseToday: a reading of today's rose above the one before it (the
	// day's T+1 refund has shown). Until then the guard syncs often, so
	// that the rise is seen between close readings (see RefundWatch).
	RiseToday bool
}

// Assess derives the limit at now from the snapshots and the usage series.
func Assess(o Options, now time.Time, snaps []ledger.Snapshot, s *Series) Assessment {
	return AssessWith(o, now, snaps, s, 0)
}

// AssessWith is Assess knowing a lower bound of today's refund (RefundFloor).
func AssessWith(o Options, now time.Time, snaps []ledger.Snapshot, s *Series, refundFloor ledger.Units) Assessment {
	a := Assessment{Day: o.Day(now), at: now, series: s}
	rs := readings(snaps, now)
	fit := estimateLag(o, rs, s)
	a.Lag, a.LagStep = fit.lag, fit.step
	a.B0 = estimateB0(o, a.Day, snaps, rs, s, fit, now, refundFloor)
	for i := 1; i < len(rs); i++ {
		if rs[i].Day == a.Day && rs[i].BalanceUnits > rs[i-1].BalanceUnits {
			a.RiseToday = true
		}
	}
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
	a.Listed = !listedAt.IsZero()
	a.Expiring = append([]Expiry(nil), exp...)
	sort.SliceStable(a.Expiring, func(i, j int) bool { return a.Expiring[i].At.Before(a.Expiring[j].At) })
	a.ExpiryBase = 0
	if len(exp) > 0 {
		a.ExpiryBase = UsageToday(s, o.DayStart(a.at), settleAt(listedAt, a.Lag, a.LagStep))
	}
}

// Carry is what yesterday's runs draw from today's free pool: the pool is
// the balance at 00:00, and a run admitted before midnight that settles
// after it is paid from it, yet counts in yesterday's quota day.
type Carry struct {
	Settled ledger.Units // units yesterday's runs settled since 00:00
	Held    ledger.Units // reserves of yesterday's runs still holding
}

// At recomputes Limit for now and today's usage: min(cap, B0 − small_buffer
// − E), where E is what the packages expiring by now + ExpiryHorizon still
// hold. Packages are consumed oldest first, and the oldest expire first, so
// the usage since the listing has already eaten into them — but only until
// each one's expiry: usage after it is drawn from the packages still live
// (a package still listed after its expiry must not count as
// available). Requests admitted now may finish after the expiry, so E is
// left out of the limit from the horizon on.
func (a *Assessment) At(o Options, now time.Time, usage ledger.Units) {
	consumed := usage + a.Carry.Settled // since 00:00, by settlement time
	horizon := now.Add(o.ExpiryHorizon)
	var e, eaten ledger.Units
	for _, x := range a.Expiring { // oldest first
		if x.At.After(horizon) {
			break
		}
		upTo := consumed
		if !x.At.After(now) && a.series != nil {
			upTo = min(upTo, UsageToday(a.series, o.DayStart(now), x.At))
		}
		take := min(x.Units, max(0, upTo-a.ExpiryBase-eaten))
		eaten += take
		e += x.Units - take
	}
	a.ExpiringUnits = e
	a.Buffer = o.SmallBuffer
	if a.Listed && a.OverrunKnown && a.OverrunMilli <= noOverrun && a.OverrunTail <= 0 {
		// Only while reserves are known to bound what calls consume: the
		// overrun bound covers one call beyond k, and the small buffer the
		// rest — and before enough of the model's calls have settled, the
		// calls in flight may all overrun a ratio not yet learned.
		a.Buffer = min(o.SmallBuffer, o.Residue)
	}
	a.DailyCap, a.SkewHeld = o.DailyCap, SkewHeld(a.series, o, now)
	a.Limit = 0
	if a.B0.Known {
		a.Limit = clamp(min(o.DailyCap, a.B0.Units-a.ExpiringUnits-a.Buffer))
	}
}

// SkewHeld is what the provider may have collected on its current day
// beyond the usage settled since the guard's 00:00, when its day turns up
// to refundSkew either side of the guard's (its clock and day are its own):
// turned early, its day also holds what settled in the last refundSkew
// before 00:00; not yet turned (the first refundSkew after 00:00), its day
// is still yesterday's, which holds all of yesterday's usage. Collection
// beyond the daily cap is never refunded, so the cap room today's
// admissions share is daily_cap − SkewHeld.
func SkewHeld(s *Series, o Options, now time.Time) ledger.Units {
	if s == nil {
		return 0
	}
	start := o.DayStart(now)
	held := s.Between(start.Add(-refundSkew), start)
	if now.Before(start.Add(refundSkew)) {
		held = max(held, s.Between(o.DayStart(start.Add(-time.Minute)), start))
	}
	return held
}

// noOverrun is OverrunMilli's neutral value: trusted usage ≤ reserve.
const noOverrun = 1000

// AdmitLimit is the limit the ledger enforces on today's quota day
// (ledger.QuotaCheck) given today's settled usage: the room left under
// Limit, after yesterday's carry and the overrun tail, is shared by the
// holds in flight and the new reserve scaled by the model's overrun k, so
// that
//
//	usage + carry.settled + tail + k·(carry.held + held + reserve) ≤ Limit
//
// holds for what the provider really consumes, while the ledger
// checks usage + held + reserve ≤ AdmitLimit. With no carry, k = 1 and no
// tail it is Limit. A usage that grows after this was computed only
// tightens it.
func (a *Assessment) AdmitLimit(usage ledger.Units) ledger.Units {
	k := ledger.Units(max(a.OverrunMilli, noOverrun))
	room := min(a.Limit, a.capRoom()) - usage - a.Carry.Settled - a.OverrunTail - mulMilli(a.Carry.Held, k)
	if room <= 0 {
		return min(usage, a.Limit)
	}
	return usage + room/k*noOverrun + room%k*noOverrun/k
}

// capRoom is the daily cap less what the provider's skewed day may already
// hold (SkewHeld); the cap itself when the assessment knows no cap.
func (a *Assessment) capRoom() ledger.Units {
	if a.DailyCap == 0 {
		return a.Limit
	}
	return a.DailyCap - a.SkewHeld
}

// mulMilli is ⌈u·k/1000⌉ without overflow for u ≤ MaxUnits and k ≤ 10⁶.
func mulMilli(u, k ledger.Units) ledger.Units {
	return u/noOverrun*k + (u%noOverrun*k+noOverrun-1)/noOverrun
}

// Admits reports whether a reserve fits under the limit given the day so far:
// usage_today + held_in_flight + reserve ≤ limit. The ledger applies the same
// rule atomically (ledger.QuotaCheck); this is its pure form.
func Admits(u ledger.QuotaUsage, reserve, limit ledger.Units) bool {
	return u.UsageUnits+u.HeldInFlight+reserve <= limit
}

// maxOverrun bounds a learned overrun (100×): beyond it a model's reserve
// says nothing about its consumption, and AdmitLimit admits next to nothing.
const maxOverrun = 100 * noOverrun

// LearnOverrun returns a model's overrun after a call that reserved reserve
// consumed cost (trusted usage): the largest ratio seen, in thousandths,
// rounded up. The guard reserves accordingly in AdmitLimit (seed 002's
// 34-vs-167 reasoning case, and worse) until it has seen enough
// calls for a quantile (Overrun).
func LearnOverrun(k int64, reserve, cost ledger.Units) int64 {
	if reserve <= 0 || cost <= reserve {
		return k
	}
	return max(k, ratioMilli(reserve, cost))
}

// ratioMilli is ⌈cost/reserve · 1000⌉, at most maxOverrun; reserve > 0.
func ratioMilli(reserve, cost ledger.Units) int64 {
	if cost/reserve >= maxOverrun/noOverrun {
		return maxOverrun
	}
	return int64(cost/reserve*noOverrun + (cost%reserve*noOverrun+reserve-1)/reserve)
}

// RefundWatch is how long after 00:00 the guard watches for the day's
// refund: until it has seen a rise, it syncs every SyncEveryLow. A refund
// raises B0 by at most the rise seen between two readings, and the
// consumption between their settle points hides part of it for the rest of
// the day; close readings keep that part small.
const RefundWatch = 16 * time.Hour

// SyncEvery is the sync interval the guard keeps at now: SyncEveryLow while
// the balance or the headroom is below LowBalance, or while the day's
// refund is awaited; SyncEvery otherwise.
func (a *Assessment) SyncEvery(o Options, now time.Time, usage ledger.Units) time.Duration {
	if a.BalanceAtSync < o.LowBalance || a.Limit-usage < o.LowBalance ||
		(!a.RiseToday && now.Before(o.DayStart(now).Add(RefundWatch))) {
		return o.SyncEveryLow
	}
	return o.SyncEvery
}
