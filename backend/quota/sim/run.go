package sim

import (
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/quota"
)

// policy is what a limit policy keeps between events.
type policy interface {
	admit(now time.Time, reserve ledger.Units) bool
	settle(now time.Time, reserve, cost ledger.Units)
	sync(now time.Time, balance ledger.Units, expiries []quota.Expiry)
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
// limit (in-flight requests are not counted); walls as §7.6.
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

func (p *v6) settle(_ time.Time, reserve, cost ledger.Units) {
	p.held -= reserve
	p.usage += cost
	p.judge()
}

func (p *v6) sync(now time.Time, balance ledger.Units, _ []quota.Expiry) {
	p.balAtSync, p.usageAtSync = balance, p.usage
	p.lastSync, p.usageAtLast = now, p.usage
	p.judge()
}

// rollover: the day's usage key starts from zero; the synced keys live on
// until the next sync (their TTL is 24 h), as in v6.
func (p *v6) rollover(now time.Time) {
	p.day, p.usage, p.usageAtLast = p.o.Day(now), 0, 0
	p.judge()
}

func (p *v6) syncDue(now time.Time) bool { return p.syncDueWith(now, p.limit()) }

// guard drives quotagate's pure core exactly as the runtime Guard does.
type guard struct {
	common
	snaps      []ledger.Snapshot
	series     *quota.Series
	a          quota.Assessment
	expiries   []quota.Expiry
	expiriesAt time.Time
}

func (p *guard) assess(now time.Time) {
	cut := 0
	for cut < len(p.snaps) && now.Sub(p.snaps[cut].At) > 25*time.Hour {
		cut++
	}
	p.snaps = p.snaps[cut:]
	p.a = quota.Assess(p.o, now, p.snaps, p.series)
	p.a.SetExpiries(p.o, p.expiries, p.expiriesAt, p.series)
	p.a.At(p.o, now, p.usage)
	p.judge()
}

func (p *guard) judge() { p.evicted, _ = quota.Verdict(p.o, p.a, p.usage) }

func (p *guard) admit(now time.Time, reserve ledger.Units) bool {
	p.a.At(p.o, now, p.usage) // as Guard.Check: expiries may have entered the horizon
	if p.evicted {
		return false
	}
	if !quota.Admits(ledger.QuotaUsage{UsageUnits: p.usage, HeldInFlight: p.held}, reserve, p.a.Limit) {
		return false
	}
	p.held += reserve
	return true
}

func (p *guard) settle(now time.Time, reserve, cost ledger.Units) {
	p.held -= reserve
	p.usage += cost
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

func (p *guard) rollover(now time.Time) {
	p.day, p.usage, p.usageAtLast = p.o.Day(now), 0, 0
	p.assess(now)
}

func (p *guard) syncDue(now time.Time) bool { return p.syncDueWith(now, p.a.Limit) }

type flight struct {
	end           time.Time
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
	refundDue := time.Time{}
	var refund ledger.Units
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
			refund = min(consumedToday, o.DailyCap)
			refundDue = now.Add(w.refundAt[day])
			consumedToday, billedToday, refundOfDay = 0, 0, 0
			poolAtMidnight = prov.balance()
			p.rollover(now)
		}
		prov.expire(now)
		if !refundDue.IsZero() && !now.Before(refundDue) {
			prov.grant(now, refund)
			refundOfDay = refund
			refundDue = time.Time{}
		}

		// Completions: the provider bills at the end of a call.
		kept := inflight[:0]
		for _, f := range inflight {
			if f.end.After(now) {
				kept = append(kept, f)
				continue
			}
			b := prov.consume(now, f.cost)
			res.Consumed += f.cost
			res.Billed += b
			billedToday += b
			consumedToday += f.cost
			inflightCost -= f.cost
			p.settle(now, f.reserve, f.cost)
			if debugHook != nil {
				debugHook(now, "settle", p, int64(f.cost), int64(prov.balance()))
			}
		}
		inflight = kept

		prov.settle = w.settlePoint(now, prov.settle)
		if p.syncDue(now) {
			api := prov.apiBalance()
			if l := api - prov.balance(); l > res.MaxInflation {
				res.MaxInflation = l // v6's limit exceeds the true pool by exactly this much
			}
			p.sync(now, api, prov.apiExpiries())
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
				inflight = append(inflight, flight{end: now.Add(rq.duration), reserve: rq.reserve, cost: rq.cost})
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
