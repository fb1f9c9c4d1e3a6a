package sim

import (
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

func (p *guard) syncDue(now time.Time) bool {
	return p.lastSync.IsZero() || now.Sub(p.lastSync) >= p.a.SyncEvery(p.o, now, p.usage) || p.usage-p.usageAtLast >= p.o.BurstSync
}

type flight struct {
	end           time.Time
	day           int // the quota day it was admitted on
	reserve, cost ledger.Units
}

// Run simulates cfg under one policy.
func Run(cfg Config, pol Policy) Result {
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
	w := newWorld(cfg)
	res := Result{Policy: pol, Seed: cfg.Seed}

	prov := &provider{}
	for _, k := range w.initial {
		c := *k
		c.hist = append([]balancePoint(nil), k.hist...)
		prov.add(&c)
	}
	prov.record(cfg.Start.Add(-time.Hour))
	prov.settle = cfg.Start.Add(-time.Minute)

	var p policy
	base := common{o: o, day: o.Day(cfg.Start)}
	switch pol {
	case V6:
		p = &v6{common: base}
	case Quotagate:
		p = &guard{common: base, series: &quota.Series{}}
	default:
		panic("unknown policy " + pol)
	}

	var inflight []flight
	var inflightCost ledger.Units
	next := 0
	consumedToday := ledger.Units(0)
	billedToday := ledger.Units(0)
	day := 0
	// The provider's day turns w.skew after the guard's; its collection of a
	// day is refunded the next one, in one part or two.
	provNext := cfg.Start.Add(24*time.Hour + w.skew)
	collected := ledger.Units(0)
	type grant struct {
		at    time.Time
		units ledger.Units
	}
	var grants []grant
	poolAtMidnight := prov.balance()
	refundOfDay := ledger.Units(0)
	end := cfg.Start.Add(time.Duration(cfg.Days) * 24 * time.Hour)

	refusedToday, rwfToday := 0, 0
	demandToday := ledger.Units(0)
	expiredAtMidnight := prov.expired
	closeDay := func() {
		if cfg.Trace != nil {
			cfg.Trace(DayTrace{Policy: pol, Day: o.Day(now0(cfg.Start, day)), Pool: poolAtMidnight, Refund: refundOfDay,
				Consumed: consumedToday, Billed: billedToday, Refused: refusedToday, RefusedWhileFree: rwfToday,
				Expired: prov.expired - expiredAtMidnight, PoolAtEnd: prov.balance()})
		}
		avail := min(o.DailyCap, poolAtMidnight+refundOfDay-(prov.expired-expiredAtMidnight))
		if demandToday >= avail && avail > 0 {
			res.SaturatedDays++
			res.SaturatedAvail += avail
			res.SaturatedFreeUsed += min(consumedToday-billedToday, avail)
		}
		refusedToday, rwfToday, expiredAtMidnight, demandToday = 0, 0, prov.expired, 0
		res.Collected += min(consumedToday, o.DailyCap)
		below := poolAtMidnight+refundOfDay < o.DailyCap
		if below {
			res.DaysBelowCap++
		}
		if billedToday > 0 {
			res.DaysBilled++
			if below {
				res.DaysBilledBelowCap++
			}
		}
	}

	for now := cfg.Start; now.Before(end); now = now.Add(time.Minute) {
		if now.After(cfg.Start) && o.DayStart(now).Equal(now) { // 00:00 local
			closeDay()
			day++
			consumedToday, billedToday, refundOfDay = 0, 0, 0
			poolAtMidnight = prov.balance()
			p.rollover(now)
		}
		if !now.Before(provNext) { // the provider's midnight: yesterday's collection is refunded today
			refund := min(collected, o.DailyCap)
			collected = 0
			d := min(day+1, len(w.refundAt)-1)
			if w.skew >= 0 {
				d = min(day, len(w.refundAt)-1)
			}
			first := provNext.Add(w.refundAt[d])
			if two := w.refund2[d]; two > 0 {
				part := refund * ledger.Units(30+w.refundAt[d]%41) / 100
				grants = append(grants, grant{first, part}, grant{provNext.Add(two), refund - part})
			} else {
				grants = append(grants, grant{first, refund})
			}
			provNext = provNext.Add(24 * time.Hour)
		}
		prov.expire(now)
		kept := grants[:0]
		for _, g := range grants {
			if now.Before(g.at) {
				kept = append(kept, g)
				continue
			}
			prov.grant(now, g.units)
			refundOfDay += g.units
		}
		grants = kept
		if m := w.manualAt[min(day, len(w.manualAt)-1)]; m > 0 && now.Equal(o.DayStart(now).Add(m)) {
			trueB0 := poolAtMidnight + refundOfDay - (prov.expired - expiredAtMidnight)
			p.manualB0(now, trueB0+ledger.Units(float64(trueB0)*w.harsh.ManualB0High))
		}

		// Completions: the provider bills at the end of a call.
		kept2 := inflight[:0]
		for _, f := range inflight {
			if f.end.After(now) {
				kept2 = append(kept2, f)
				continue
			}
			b := prov.consume(now, f.cost)
			res.Consumed += f.cost
			res.Billed += b
			billedToday += b
			consumedToday += f.cost
			collected += f.cost
			inflightCost -= f.cost
			p.settle(now, f.day == day, f.reserve, f.cost)
			if debugHook != nil {
				debugHook(now, "settle", p, int64(f.cost), int64(prov.balance()))
			}
		}
		inflight = kept2

		prov.settle = w.settlePoint(now, prov.settle)
		if p.syncDue(now) {
			api := prov.apiBalance()
			if l := api - prov.balance(); l > res.MaxInflation {
				res.MaxInflation = l // v6's limit exceeds the true pool by exactly this much
			}
			p.sync(now, api, prov.apiExpiries(prov.settle.Add(-w.listLate[min(day, len(w.listLate)-1)])))
			res.Syncs++
			if debugHook != nil {
				debugHook(now, "sync", p, int64(api), int64(prov.balance()))
			}
		}

		for ; next < len(w.requests) && !w.requests[next].at.After(now); next++ {
			rq := w.requests[next]
			res.Requests++
			demandToday += rq.cost
			if p.admit(now, rq.reserve) {
				res.Admitted++
				inflight = append(inflight, flight{end: now.Add(rq.duration), day: day, reserve: rq.reserve, cost: rq.cost})
				inflightCost += rq.cost
				continue
			}
			res.Refused++
			refusedToday++
			// An oracle that knows the true balance and the call's true cost
			// could have served it free and within the day's cap.
			if prov.balance()-inflightCost >= rq.cost && consumedToday+inflightCost+rq.cost <= o.DailyCap {
				res.RefusedWhileFree++
				rwfToday++
			}
		}
	}
	closeDay()
	res.FreeUsed = res.Consumed - res.Billed
	res.Expired = prov.expired
	return res
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
