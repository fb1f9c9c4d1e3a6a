package sim

import (
	"strings"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/quota"
)

// policy is what a limit policy keeps between events.
type policy interface {
	admit(now time.Time, reserve ledger.Units) bool
	// settle ends a call; today tells whether it was admitted on the current
	// quota day (a call admitted before midnight may end after it).
	settle(now time.Time, today bool, reserve, cost ledger.Units)
	sync(now time.Time, balance ledger.Units, expiries []quota.Expiry)
	manualB0(now time.Time, b0 ledger.Units)
	rollover(now time.Time)
	syncDue(now time.Time) bool
	// wall is the reason (quota.ReasonUsageWall or ReasonBalanceWall) the
	// model stands evicted at one of seed 002's walls, which refuse every
	// call whatever the admit limit says; "" when it is not.
	wall() string
}

// common is the state both policies share: today's usage, the sync schedule
// (normal, low, burst) and the soft-evict walls.
type common struct {
	o           quota.Options
	day         string
	usage       ledger.Units // settled today
	held        ledger.Units // reserves in flight
	lastSync    time.Time
	usageAtLast ledger.Units
	balAtSync   ledger.Units
	evicted     bool
}

func (c *common) syncDueWith(now time.Time, limit ledger.Units) bool {
	every := c.o.SyncEvery
	if c.balAtSync < c.o.LowBalance || limit-c.usage < c.o.LowBalance {
		every = c.o.SyncEveryLow
	}
	return c.lastSync.IsZero() || now.Sub(c.lastSync) >= every || c.usage-c.usageAtLast >= c.o.BurstSync
}

// v6 is seed 002's Snapshot-Offset: limit = min(cap, balance_at_sync +
// usage_at_sync − small_buffer); a request passes while usage + reserve <
// limit (in-flight requests are not counted); walls as §7.6. Its usage key
// is the day a call is recorded (settled), and it has no console B0.
type v6 struct {
	common
	usageAtSync ledger.Units
}

func (p *v6) limit() ledger.Units { return quota.LimitV6(p.o, p.balAtSync, p.usageAtSync) }

func (p *v6) admit(_ time.Time, reserve ledger.Units) bool {
	if p.evicted || p.lastSync.IsZero() {
		return false
	}
	if p.usage+reserve >= p.limit() {
		return false
	}
	p.held += reserve
	return true
}

func (p *v6) judge() { p.evicted, _ = quota.ShouldEvict(p.o, p.limit(), p.usage, p.balAtSync) }

func (p *v6) settle(_ time.Time, _ bool, reserve, cost ledger.Units) {
	p.held -= reserve
	p.usage += cost
	p.judge()
}

func (p *v6) sync(now time.Time, balance ledger.Units, _ []quota.Expiry) {
	p.balAtSync, p.usageAtSync = balance, p.usage
	p.lastSync, p.usageAtLast = now, p.usage
	p.judge()
}

func (p *v6) manualB0(time.Time, ledger.Units) {}

// rollover: the day's usage key starts from zero; the synced keys live on
// until the next sync (their TTL is 24 h), as in v6.
func (p *v6) rollover(now time.Time) {
	p.day, p.usage, p.usageAtLast = p.o.Day(now), 0, 0
	p.judge()
}

func (p *v6) wall() string {
	_, why := quota.ShouldEvict(p.o, p.limit(), p.usage, p.balAtSync)
	return wallReason(p.evicted, why)
}

// wallReason is the wall named by an eviction's reason.
func wallReason(evicted bool, why string) string {
	for _, w := range []string{quota.ReasonUsageWall, quota.ReasonBalanceWall} {
		if evicted && strings.HasPrefix(why, w) {
			return w
		}
	}
	return ""
}

func (p *v6) syncDue(now time.Time) bool { return p.syncDueWith(now, p.limit()) }

// guard drives quotagate's pure core exactly as the runtime Guard does, with
// the ledger's quota days: usage and held count the calls admitted today;
// yesterday's calls still in flight are the carry.
type guard struct {
	common
	snaps      []ledger.Snapshot
	series     *quota.Series
	a          quota.Assessment
	expiries   []quota.Expiry
	expiriesAt time.Time
	carry      quota.Carry
	overrun    quota.Overrun // learned, as the runtime Guard learns it from settled runs
	yUsage     ledger.Units  // yesterday's quota-day usage, as the ledger keeps it
}

func (p *guard) assess(now time.Time) {
	cut := 0
	for cut < len(p.snaps) && now.Sub(p.snaps[cut].At) > 25*time.Hour {
		cut++
	}
	p.snaps = p.snaps[cut:]
	p.a = quota.AssessWith(p.o, now, p.snaps, p.series, quota.RefundFloor(p.o, p.yUsage, p.carry, p.series, now))
	p.a.SetExpiries(p.o, p.expiries, p.expiriesAt, p.series)
	p.a.Carry = p.carry
	p.a.OverrunMilli, p.a.OverrunTail = p.overrun.Bound()
	p.a.OverrunKnown = p.overrun.Known()
	p.a.At(p.o, now, p.usage)
	p.judge()
}

func (p *guard) judge() { p.evicted, _ = quota.Verdict(p.o, p.a, p.usage) }

func (p *guard) admit(now time.Time, reserve ledger.Units) bool {
	p.a.At(p.o, now, p.usage) // as Guard.Check: expiries may have entered the horizon
	if p.evicted {
		return false
	}
	if !quota.Admits(ledger.QuotaUsage{UsageUnits: p.usage, HeldInFlight: p.held}, reserve, p.a.AdmitLimit(p.usage)) {
		return false
	}
	p.held += reserve
	return true
}

func (p *guard) settle(now time.Time, today bool, reserve, cost ledger.Units) {
	if today {
		p.held -= reserve
		p.usage += cost
	} else {
		p.carry.Held -= reserve
		p.carry.Settled += cost
		p.yUsage += cost
	}
	p.overrun.Learn(reserve, cost)
	p.a.Carry = p.carry
	p.a.OverrunMilli, p.a.OverrunTail = p.overrun.Bound()
	p.a.OverrunKnown = p.overrun.Known()
	p.series.Add(now, cost)
	p.a.At(p.o, now, p.usage)
	p.judge()
}

func (p *guard) sync(now time.Time, balance ledger.Units, expiries []quota.Expiry) {
	p.expiries, p.expiriesAt = expiries, now
	p.snaps = append(p.snaps, ledger.Snapshot{Day: p.o.Day(now), At: now, BalanceUnits: balance,
		UsageAtSync: p.usage, Source: "sim"})
	p.balAtSync, p.lastSync, p.usageAtLast = balance, now, p.usage
	p.assess(now)
}

func (p *guard) manualB0(now time.Time, b0 ledger.Units) {
	p.snaps = append(p.snaps, ledger.Snapshot{Day: p.o.Day(now), At: now, B0Units: b0,
		BalanceUnits: max(b0-p.usage, 0), UsageAtSync: p.usage, Source: quota.SourceManualB0})
	p.assess(now)
}

func (p *guard) rollover(now time.Time) {
	p.carry = quota.Carry{Held: p.held} // today's calls in flight are yesterday's now
	p.yUsage = p.usage
	p.day, p.usage, p.held, p.usageAtLast = p.o.Day(now), 0, 0, 0
	p.assess(now)
}

func (p *guard) wall() string {
	_, why := quota.Verdict(p.o, p.a, p.usage)
	return wallReason(p.evicted, why)
}

func (p *guard) syncDue(now time.Time) bool {
	return p.lastSync.IsZero() || now.Sub(p.lastSync) >= p.a.SyncEvery(p.o, now, p.usage) || p.usage-p.usageAtLast >= p.o.BurstSync
}

type flight struct {
	end           time.Time
	day           int // the quota day it was admitted on
	reserve, cost ledger.Units
}

// Run simulates cfg under one policy.
func Run(cfg Config, pol Policy) Result { return newRun(cfg, pol).run() }

func (r *simRun) run() Result {
	for now := r.cfg.Start; now.Before(r.end); now = now.Add(time.Minute) {
		r.minute(now)
	}
	r.closeDay()
	r.res.FreeUsed = r.res.Consumed - r.res.Billed
	r.res.Expired = r.prov.expired
	return r.res
}

// simRun is one simulation in progress: the world, the provider, the
// policy under test, the calls in flight and the day's figures.
type simRun struct {
	cfg  Config
	o    quota.Options
	pol  Policy
	w    *world
	prov *provider
	p    policy
	res  Result
	end  time.Time

	inflight     []flight
	inflightCost ledger.Units
	next         int // the next request of w.requests to arrive
	day          int // days since cfg.Start
	// The provider's day turns w.skew after the guard's; its collection of a
	// day is refunded the next one, in one part or two.
	provNext  time.Time
	collected ledger.Units
	grants    []grant

	consumedToday, billedToday, demandToday ledger.Units
	poolAtMidnight, refundOfDay             ledger.Units
	expiredAtMidnight                       ledger.Units
	refusedToday, rwfToday                  int

	// refusedWhileFree, when set, sees every call refused while the free
	// pool could have served it (TestRefusalTerms).
	refusedWhileFree func(r *simRun, now time.Time, rq request)
}

// grant is a part of a refund the provider grants at a time.
type grant struct {
	at    time.Time
	units ledger.Units
}

func newRun(cfg Config, pol Policy) *simRun {
	o, err := cfg.Options.Validate()
	if err != nil {
		panic(err)
	}
	cfg.Options = o
	if cfg.Start.IsZero() {
		loc, _ := o.Location()
		cfg.Start = time.Date(2026, 8, 1, 0, 0, 0, 0, loc)
	}
	if cfg.Days == 0 {
		cfg.Days = 60
	}
	r := &simRun{cfg: cfg, o: o, pol: pol, w: newWorld(cfg), prov: &provider{}, res: Result{Policy: pol, Seed: cfg.Seed}}
	for _, k := range r.w.initial {
		c := *k
		c.hist = append([]balancePoint(nil), k.hist...)
		r.prov.add(&c)
	}
	r.prov.record(cfg.Start.Add(-time.Hour))
	r.prov.settle = cfg.Start.Add(-time.Minute)
	base := common{o: o, day: o.Day(cfg.Start)}
	switch pol {
	case V6:
		r.p = &v6{common: base}
	case Quotagate:
		r.p = &guard{common: base, series: &quota.Series{}, overrun: quota.NewOverrun(o)}
	default:
		panic("unknown policy " + pol)
	}
	r.provNext = cfg.Start.Add(24*time.Hour + r.w.skew)
	r.poolAtMidnight = r.prov.balance()
	r.end = cfg.Start.Add(time.Duration(cfg.Days) * 24 * time.Hour)
	r.expiredAtMidnight = r.prov.expired
	return r
}

// minute advances the world by the minute starting at now.
func (r *simRun) minute(now time.Time) {
	if now.After(r.cfg.Start) && r.o.DayStart(now).Equal(now) { // 00:00 local
		r.closeDay()
		r.day++
		r.consumedToday, r.billedToday, r.refundOfDay = 0, 0, 0
		r.poolAtMidnight = r.prov.balance()
		r.p.rollover(now)
	}
	if !now.Before(r.provNext) { // the provider's midnight: yesterday's collection is refunded today
		r.scheduleRefund()
	}
	r.prov.expire(now)
	r.grantDue(now)
	if m := r.w.manualAt[min(r.day, len(r.w.manualAt)-1)]; m > 0 && now.Equal(r.o.DayStart(now).Add(m)) {
		trueB0 := r.poolAtMidnight + r.refundOfDay - (r.prov.expired - r.expiredAtMidnight)
		r.p.manualB0(now, trueB0+ledger.Units(float64(trueB0)*r.w.harsh.ManualB0High))
	}
	r.complete(now)
	r.prov.settle = r.w.settlePoint(now, r.prov.settle)
	if r.p.syncDue(now) {
		r.sync(now)
	}
	for ; r.next < len(r.w.requests) && !r.w.requests[r.next].at.After(now); r.next++ {
		r.arrive(now, r.w.requests[r.next])
	}
}

// scheduleRefund turns the provider's day: yesterday's collection is
// granted back today, in one part or two.
func (r *simRun) scheduleRefund() {
	refund := min(r.collected, r.o.DailyCap)
	r.res.BeyondCap += r.collected - refund
	r.collected = 0
	d := min(r.day+1, len(r.w.refundAt)-1)
	if r.w.skew >= 0 {
		d = min(r.day, len(r.w.refundAt)-1)
	}
	first := r.provNext.Add(r.w.refundAt[d])
	if two := r.w.refund2[d]; two > 0 {
		part := refund * ledger.Units(30+r.w.refundAt[d]%41) / 100
		r.grants = append(r.grants, grant{first, part}, grant{r.provNext.Add(two), refund - part})
	} else {
		r.grants = append(r.grants, grant{first, refund})
	}
	r.provNext = r.provNext.Add(24 * time.Hour)
}

// grantDue grants the refund parts due by now.
func (r *simRun) grantDue(now time.Time) {
	kept := r.grants[:0]
	for _, g := range r.grants {
		if now.Before(g.at) {
			kept = append(kept, g)
			continue
		}
		r.prov.grant(now, g.units)
		r.refundOfDay += g.units
	}
	r.grants = kept
}

// complete ends the calls due by now: the provider bills at the end of a call.
func (r *simRun) complete(now time.Time) {
	kept := r.inflight[:0]
	for _, f := range r.inflight {
		if f.end.After(now) {
			kept = append(kept, f)
			continue
		}
		b := r.prov.consume(now, f.cost)
		r.res.Consumed += f.cost
		r.res.Billed += b
		r.billedToday += b
		r.consumedToday += f.cost
		r.collected += f.cost
		r.inflightCost -= f.cost
		r.p.settle(now, f.day == r.day, f.reserve, f.cost)
		if debugHook != nil {
			debugHook(now, "settle", r.p, int64(f.cost), int64(r.prov.balance()))
		}
	}
	r.inflight = kept
}

// sync gives the policy the provider's balance API reading.
func (r *simRun) sync(now time.Time) {
	api := r.prov.apiBalance()
	if l := api - r.prov.balance(); l > r.res.MaxInflation {
		r.res.MaxInflation = l // v6's limit exceeds the true pool by exactly this much
	}
	r.p.sync(now, api, r.prov.apiExpiries(r.prov.settle.Add(-r.w.listLate[min(r.day, len(r.w.listLate)-1)])))
	r.res.Syncs++
	if debugHook != nil {
		debugHook(now, "sync", r.p, int64(api), int64(r.prov.balance()))
	}
}

// arrive puts request rq to the policy.
func (r *simRun) arrive(now time.Time, rq request) {
	r.res.Requests++
	r.demandToday += rq.cost
	if r.p.admit(now, rq.reserve) {
		r.res.Admitted++
		r.inflight = append(r.inflight, flight{end: now.Add(rq.duration), day: r.day, reserve: rq.reserve, cost: rq.cost})
		r.inflightCost += rq.cost
		return
	}
	r.res.Refused++
	r.refusedToday++
	// An oracle that knows the true balance and the call's true cost
	// could have served it free and within the day's cap.
	if r.prov.balance()-r.inflightCost >= rq.cost && r.consumedToday+r.inflightCost+rq.cost <= r.o.DailyCap {
		r.res.RefusedWhileFree++
		r.rwfToday++
		switch r.p.wall() {
		case quota.ReasonUsageWall:
			r.res.RefusedWhileFreeWalled++
		case quota.ReasonBalanceWall:
			r.res.RefusedWhileFreeWalled++
			r.res.RefusedWhileFreeBalanceWall++
		}
		if r.rwfToday == 1 {
			r.marginAt(now)
		}
		if r.refusedWhileFree != nil {
			r.refusedWhileFree(r, now, rq)
		}
	}
}

// marginAt adds, at the day's first call refused while free, where the
// guard's margin goes (its Headroom) and how far its estimated pool stands
// below the true one (the readings it has not seen yet, at the lag and the
// sync interval).
func (r *simRun) marginAt(now time.Time) {
	g, ok := r.p.(*guard)
	if !ok {
		return
	}
	g.a.At(g.o, now, g.usage)
	h := g.a.Headroom(g.o, g.usage)
	truePool := min(r.o.DailyCap, r.poolAtMidnight+r.refundOfDay-(r.prov.expired-r.expiredAtMidnight))
	m := &r.res.Margin
	m.Days++
	m.Sync += max(0, truePool-h.Pool)
	m.Lag += h.Lag
	m.Expiry += h.Expiry
	m.Buffer += h.Buffer
	m.Skew += h.Skew
	m.Carry += h.Carry
	m.Overrun += h.Overrun
	m.Wall += h.Wall
	m.Gap += h.Gap
}

// closeDay adds the ending day to the result (and the trace).
func (r *simRun) closeDay() {
	o, res := r.o, &r.res
	if r.cfg.Trace != nil {
		r.cfg.Trace(DayTrace{Policy: r.pol, Day: o.Day(now0(r.cfg.Start, r.day)), Pool: r.poolAtMidnight, Refund: r.refundOfDay,
			Consumed: r.consumedToday, Billed: r.billedToday, Refused: r.refusedToday, RefusedWhileFree: r.rwfToday,
			Expired: r.prov.expired - r.expiredAtMidnight, PoolAtEnd: r.prov.balance()})
	}
	avail := min(o.DailyCap, r.poolAtMidnight+r.refundOfDay-(r.prov.expired-r.expiredAtMidnight))
	if r.demandToday >= avail && avail > 0 {
		res.SaturatedDays++
		res.SaturatedAvail += avail
		res.SaturatedFreeUsed += min(r.consumedToday-r.billedToday, avail)
	}
	r.refusedToday, r.rwfToday, r.expiredAtMidnight, r.demandToday = 0, 0, r.prov.expired, 0
	res.Collected += min(r.consumedToday, o.DailyCap)
	below := r.poolAtMidnight+r.refundOfDay < o.DailyCap
	if below {
		res.DaysBelowCap++
	}
	if r.billedToday > 0 {
		res.DaysBilled++
		if below {
			res.DaysBilledBelowCap++
		}
	}
}

// DayTrace is one simulated day under one policy.
type DayTrace struct {
	Policy           Policy
	Day              string
	Pool             ledger.Units // free balance at 00:00
	Refund           ledger.Units // T+1 refund granted that day
	Expired          ledger.Units
	Consumed         ledger.Units
	Billed           ledger.Units
	Refused          int
	RefusedWhileFree int
	PoolAtEnd        ledger.Units
}

func now0(start time.Time, day int) time.Time {
	return start.Add(time.Duration(day)*24*time.Hour + time.Hour)
}

var debugHook func(now time.Time, what string, p policy, api, trueBal int64)
