package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/quota"
)

// Policy names a limit policy under test.
type Policy string

const (
	V6        Policy = "v6"        // seed 002 §7.5/§7.6: snapshot-offset limit, walls, no in-flight holds
	Quotagate Policy = "quotagate" // the guard: lag-aware B0, usage + held + reserve ≤ limit, walls
)

// Config of one simulated run.
type Config struct {
	Seed    uint64
	Days    int            // simulated days (60)
	Start   time.Time      // 00:00 local of the first day; zero: 2026-08-01 Asia/Shanghai
	Options quota.Options  // the guard's options (also v6's cap, buffer, walls, sync schedule)
	Trace   func(DayTrace) // optional: called at the end of every simulated day
	// MaxStall: the longest balance-API stall (default 30 min; the lag then
	// reaches ≈ 50 min, beyond the guard's MaxLag of 45).
	MaxStall time.Duration
	// BaseLag overrides the balance API's base lag (default 8–16 min by seed).
	BaseLag time.Duration
	Harsh   Harsh // a harsher provider and traffic; zero: the usual conditions
}

// Harsh is a provider harsher than seed 002's, one knob per factor: what
// the guard must survive without being billed. Its draws
// come from a second random stream, so that the usual world of a seed stays
// the same whatever is switched on.
type Harsh struct {
	PoolMin, PoolMax ledger.Units  // the starting pool (usual: 800k–2.6M)
	RefundBy         time.Duration // the T+1 refund arrives by this offset after 00:00 (usual: 10:00)
	RefundSplit      bool          // sometimes in two parts
	LagDrift         bool          // the API's lag drifts 5–60 min within a day
	MaxFreeze        time.Duration // freezes (stalls) up to this long
	ListingLate      time.Duration // the package listing lags the balance by up to this: expiry shown late
	SeveralExpiring  bool          // the starting pool is several packages expiring the same day
	Bursts           int           // per day: bursts of 20 concurrent 150k-token calls at any hour
	BurstsAtMidnight bool          // a burst just before local midnight, every day
	Overrun          float64       // reasoning calls' true output up to this × the output cap (> 1)
	ManualB0High     float64       // on some days the operator enters B0 this fraction too high
	DaySkew          time.Duration // the provider's day turns this far from the guard's (±)
	// ReasoningColdStart: on the first day, before the model has settled
	// any call, a burst of reasoning calls whose true output is 1–4× their
	// output cap (the guard is told the model reasons: Options.Reasoning).
	ReasoningColdStart bool
}

// Environment variables that move the guard's options away from their
// defaults for a measurement (Measurement), never as a default: the walls
// are the operator's rule, the residue the settlement error seed 002 saw.
const (
	// WallsEnv: "cap" puts the usage wall at the daily cap, "off" also
	// takes the balance wall away (1 unit: only a reading of 0 evicts).
	WallsEnv = "QUOTAGATE_SIM_WALLS"
	// ResidueEnv: the residue held below B0, in units (≥ 1).
	ResidueEnv = "QUOTAGATE_SIM_RESIDUE"
)

// Measurement is o moved as WallsEnv and ResidueEnv say (read by getenv),
// and a note naming what moved ("" when nothing did). What the walls or the
// residue cost, and whether the guard stays unbilled without them, is then
// read off the same tables.
func Measurement(o quota.Options, getenv func(string) string) (quota.Options, string, error) {
	var moved []string
	switch w := getenv(WallsEnv); w {
	case "":
	case "off":
		o.BalanceWall = 1
		fallthrough
	case "cap":
		o.UsageWall = max(o.DailyCap, quota.DefaultDailyCap)
		moved = append(moved, WallsEnv+"="+w)
	default:
		return o, "", fmt.Errorf("%s=%q: want cap or off", WallsEnv, w)
	}
	if r := getenv(ResidueEnv); r != "" {
		u, err := strconv.ParseInt(r, 10, 64)
		if err != nil || u < 1 {
			return o, "", fmt.Errorf("%s=%q: want units ≥ 1", ResidueEnv, r)
		}
		o.Residue = ledger.Units(u)
		moved = append(moved, ResidueEnv+"="+r)
	}
	return o, strings.Join(moved, " "), nil
}

// Result is what one run cost and refused.
type Result struct {
	Policy           Policy
	Seed             uint64
	Consumed         ledger.Units // everything the provider served
	Billed           ledger.Units // consumed beyond the free balance: real money
	FreeUsed         ledger.Units // Consumed − Billed
	Collected        ledger.Units // Σ min(day's consumption, cap): tomorrow's refunds
	Expired          ledger.Units // free units lost to the 30-day expiry
	Requests         int
	Admitted         int
	Refused          int
	RefusedWhileFree int // refused although serving it would have been free and within the cap
	// RefusedWhileFreeWalled: of those, refused while the model stood
	// evicted at the usage or the balance wall (seed 002's soft eviction).
	RefusedWhileFreeWalled int
	// RefusedWhileFreeBalanceWall: of those, at the balance wall (the
	// reading below balance_wall with usage today), which on a day whose
	// pool is below the cap stops a policy that stays within the pool
	// while up to balance_wall units of it are left.
	RefusedWhileFreeBalanceWall int
	DaysBelowCap                int // days whose B0 (pool at 00:00 + that day's refund) < the daily cap
	DaysBilled                  int
	DaysBilledBelowCap          int // billed days whose B0 was below the cap (v6's static wall cannot help)
	// Days whose demand reached the free pool available (min(cap, B0)): how
	// much of that pool each policy served free. The gap to 100% is what a
	// policy leaves unused to stay safe.
	SaturatedDays     int
	SaturatedAvail    ledger.Units
	SaturatedFreeUsed ledger.Units
	MaxInflation      ledger.Units // largest v6 limit − true pool seen at a sync (seed 002's L)
	// BeyondCap is what the provider collected beyond its daily cap on its
	// own days (their turn skewed from the guard's): never refunded, the
	// free pool shrinks by it for good.
	BeyondCap ledger.Units
	// Margin sums, over the days quotagate refused a call the free pool
	// could have served, where its margin went at the first such refusal.
	Margin Margin
	Syncs  int
}

// Margin is quotagate's headroom (quota.Headroom) summed over days, with
// Sync the true pool's lead over the guard's estimated pool: the part of
// the margin the readings' timing holds (a refund or reading not yet seen).
type Margin struct {
	Days                                                       int
	Sync, Lag, Expiry, Buffer, Skew, Carry, Overrun, Wall, Gap ledger.Units
}

// request is one call of the traffic, identical under every policy.
type request struct {
	at       time.Time
	input    ledger.Units
	reserve  ledger.Units // input + max(declared output, reasoning floor)
	cost     ledger.Units // what the provider bills: ≤ reserve
	duration time.Duration
}

// world is the randomness shared by both policies of a seed.
type world struct {
	start      time.Time
	requests   []request
	refundAt   []time.Duration // per day: offset after 00:00 of the T+1 refund
	settleLag  time.Duration   // base lag of the balance API
	settleStep time.Duration   // the API settles in steps of this size
	stalls     []stall         // periods in which the API does not settle
	initial    []*pkg
	harsh      Harsh
	lagKnots   []lagKnot       // LagDrift: the lag at each knot, linear in between
	listLate   []time.Duration // per day: how far the listing lags the balance
	refund2    []time.Duration // per day: offset of the refund's second part (0: one part)
	manualAt   []time.Duration // per day: when a too-high manual B0 is entered (0: not that day)
	skew       time.Duration
}

type lagKnot struct {
	at  time.Time
	lag time.Duration
}

type stall struct{ from, to time.Time }

const reasoningFloor = 4096

func newWorld(cfg Config) *world {
	r := rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15))
	w := &world{start: cfg.Start}
	w.settleLag = time.Duration(8+r.IntN(9)) * time.Minute // 8–16 min (seed 002: ≈14)
	if cfg.BaseLag > 0 {
		w.settleLag = cfg.BaseLag
	}
	w.settleStep = []time.Duration{time.Minute, 2 * time.Minute, 5 * time.Minute}[r.IntN(3)]
	// The pool the account starts with: below the cap on a third of the seeds.
	pool := ledger.Units(800_000 + r.IntN(1_800_001))
	age := time.Duration(r.IntN(30)) * 24 * time.Hour
	seedPack := &pkg{granted: w.start.Add(-age), expires: w.start.Add(-age + packageLife)}
	seedPack.set(seedPack.granted, pool)
	w.initial = []*pkg{seedPack}
	w.harsh = cfg.Harsh
	hr := rand.New(rand.NewPCG(cfg.Seed^0x5bd1e995, cfg.Seed+17)) // the harsher provider's own stream
	w.harshPackages(hr, pool, age)
	w.harshClock(hr, cfg.Days)
	for d := 0; d < cfg.Days; d++ {
		w.addDay(r, hr, cfg, d)
	}
	sort.SliceStable(w.requests, func(i, j int) bool { return w.requests[i].at.Before(w.requests[j].at) })
	return w
}

// harshPackages replaces the initial package by the harsher provider's: a
// pool of its own size, split over several packages that expire the same
// day, when it asks for either.
func (w *world) harshPackages(hr *rand.Rand, pool ledger.Units, age time.Duration) {
	h := w.harsh
	if h.PoolMax == 0 && !h.SeveralExpiring {
		return
	}
	if h.PoolMax > 0 {
		pool = h.PoolMin + ledger.Units(hr.Int64N(int64(h.PoolMax-h.PoolMin)+1))
	}
	n := 1
	if h.SeveralExpiring {
		n = 2 + hr.IntN(3)
	}
	w.initial = nil
	for i := range n { // several packages granted the same day, a few hours apart: they expire the same day
		k := &pkg{granted: w.start.Add(-age + time.Duration(i*3+hr.IntN(3))*time.Hour)}
		k.expires = k.granted.Add(packageLife)
		k.set(k.granted, pool/ledger.Units(n))
		w.initial = append(w.initial, k)
	}
}

// harshClock draws the harsher provider's day skew and the knots of its
// drifting balance lag.
func (w *world) harshClock(hr *rand.Rand, days int) {
	h := w.harsh
	if h.DaySkew != 0 {
		w.skew = time.Duration(hr.Int64N(int64(2*h.DaySkew)+1)) - h.DaySkew
	}
	if h.LagDrift {
		last := w.start.Add(time.Duration(days+1) * 24 * time.Hour)
		for t := w.start.Add(-2 * time.Hour); !t.After(last); t = t.Add(time.Duration(60+hr.IntN(180)) * time.Minute) {
			w.lagKnots = append(w.lagKnots, lagKnot{t, time.Duration(5+hr.IntN(56)) * time.Minute})
		}
	}
}

// addDay draws day d: when its refund comes (in one part or two), how late
// the listing is, whether a too-high manual B0 is entered, the balance
// API's stalls, and the day's requests.
func (w *world) addDay(r, hr *rand.Rand, cfg Config, d int) {
	h := w.harsh
	w.refundAt = append(w.refundAt, time.Duration(5+r.IntN(595))*time.Minute) // 00:05–10:00
	if h.RefundBy > 0 {
		w.refundAt[d] = time.Duration(5+hr.IntN(int(h.RefundBy/time.Minute)-4)) * time.Minute
	}
	var two time.Duration
	if h.RefundSplit && hr.IntN(3) == 0 {
		two = w.refundAt[d] + time.Duration(10+hr.IntN(300))*time.Minute
	}
	w.refund2 = append(w.refund2, two)
	w.listLate = append(w.listLate, time.Duration(hr.Int64N(int64(h.ListingLate)+1)))
	var man time.Duration
	if h.ManualB0High > 0 && hr.IntN(3) == 0 {
		man = time.Duration(6*60+hr.IntN(10*60)) * time.Minute
	}
	w.manualAt = append(w.manualAt, man)
	dayStart := w.start.Add(time.Duration(d) * 24 * time.Hour)
	// A stall or two a day: the API stops settling for 10–30 minutes.
	for k := r.IntN(3); k > 0; k-- {
		from := dayStart.Add(time.Duration(r.IntN(24*60)) * time.Minute)
		n := 10 + r.IntN(21)
		if cfg.MaxStall > 0 {
			n = 10 + r.IntN(int(cfg.MaxStall/time.Minute)-9)
		}
		if h.MaxFreeze > 0 {
			n = 10 + hr.IntN(int(h.MaxFreeze/time.Minute)-9)
		}
		w.stalls = append(w.stalls, stall{from, from.Add(time.Duration(n) * time.Minute)})
	}
	w.requests = append(w.requests, w.dayRequests(r, hr, dayStart, cfg.Options.DailyCap)...)
	if h.ReasoningColdStart && d == 0 {
		w.requests = append(w.requests, reasoningBurst(hr, dayStart.Add(time.Hour))...)
	}
}

// reasoningBurst is 40 concurrent reasoning calls (output caps 8k–32k)
// whose true output is 1–4× the cap: the cold start of a model
// that reasons, before any of its calls has settled.
func reasoningBurst(r *rand.Rand, at time.Time) []request {
	out := make([]request, 40)
	for i := range out {
		input := 1_000 + r.IntN(7_001)
		declared := 8_192 + r.IntN(24_577)
		cost := input + int(float64(declared)*(1+3*r.Float64()))
		out[i] = request{at: at, input: ledger.Units(input), reserve: ledger.Units(input + declared),
			cost: ledger.Units(cost), duration: time.Duration(5+r.IntN(11)) * time.Minute}
	}
	return out
}

// dayRequests is the traffic of the day starting at dayStart, with the
// harsher provider's overruns and bursts, in time order.
func (w *world) dayRequests(r, hr *rand.Rand, dayStart time.Time, dailyCap ledger.Units) []request {
	h := w.harsh
	reqs := dayTraffic(r, dayStart, dailyCap)
	if h.Overrun > 1 {
		for i := range reqs {
			overrun(hr, &reqs[i], h.Overrun)
		}
	}
	for b := 0; b < h.Bursts; b++ {
		reqs = append(reqs, burst(hr, dayStart.Add(time.Duration(hr.IntN(24*60))*time.Minute))...)
	}
	if h.BurstsAtMidnight {
		reqs = append(reqs, burst(hr, dayStart.Add(24*time.Hour-time.Duration(1+hr.IntN(10))*time.Minute))...)
	}
	sort.SliceStable(reqs, func(i, j int) bool { return reqs[i].at.Before(reqs[j].at) })
	return reqs
}

// burst is 20 concurrent calls of ≈150k tokens each, running 3–12 minutes.
func burst(r *rand.Rand, at time.Time) []request {
	out := make([]request, 20)
	for i := range out {
		input := 140_000 + r.IntN(10_001)
		declared := max(256+r.IntN(7_937), reasoningFloor)
		cost := input + int(float64(declared)*(0.2+0.8*r.Float64()))
		out[i] = request{at: at, reserve: ledger.Units(input + declared), cost: ledger.Units(cost),
			duration: time.Duration(3+r.IntN(10)) * time.Minute}
	}
	return out
}

// overrun makes a third of the calls reasoning calls whose true output is up
// to k × the output cap (seed 002's 34-vs-167 case, and worse).
func overrun(r *rand.Rand, rq *request, k float64) {
	if r.IntN(3) != 0 {
		return
	}
	out := float64(rq.reserve - rq.input)
	rq.cost = rq.input + ledger.Units(out*(0.5+(k-0.5)*r.Float64()))
}

// dayTraffic draws one day of bursty demand: quiet, normal or heavy days,
// each made of a few sessions with Poisson arrivals.
func dayTraffic(r *rand.Rand, dayStart time.Time, dailyCap ledger.Units) []request {
	var demand float64
	switch x := r.Float64(); {
	case x < 0.2:
		demand = 20_000 + r.Float64()*280_000
	case x < 0.55:
		demand = 600_000 + r.Float64()*1_000_000
	default:
		demand = float64(dailyCap) * (1.1 + r.Float64()*1.0) // more than the free quota can serve
	}
	type session struct{ from, minutes int }
	var sessions []session
	total := 0
	for k := 1 + r.IntN(5); k > 0; k-- {
		s := session{from: 7*60 + r.IntN(16*60+30), minutes: 15 + r.IntN(106)}
		sessions = append(sessions, s)
		total += s.minutes
	}
	const meanCost = 22_000.0 // ≈ the mean cost of newRequest's distribution
	rate := demand / meanCost / float64(total)
	var out []request
	for _, s := range sessions {
		for m := 0; m < s.minutes; m++ {
			minute := s.from + m
			if minute >= 24*60 {
				break
			}
			for n := poisson(r, rate); n > 0; n-- {
				out = append(out, newRequest(r, dayStart.Add(time.Duration(minute)*time.Minute)))
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].at.Before(out[j].at) }) // sessions overlap
	return out
}

func newRequest(r *rand.Rand, at time.Time) request {
	var input int
	switch x := r.Float64(); {
	case x < 0.70:
		input = 500 + r.IntN(7_500)
	case x < 0.95:
		input = 10_000 + r.IntN(50_000)
	default:
		input = 100_000 + r.IntN(100_001) // seed 002 §7.6: 126k–200k inputs happen
	}
	declared := 256 + r.IntN(7_937)
	out := max(declared, reasoningFloor)
	cost := input + int(float64(out)*(0.2+0.8*r.Float64()))
	return request{at: at, input: ledger.Units(input), reserve: ledger.Units(input + out), cost: ledger.Units(cost),
		duration: time.Duration(1+r.IntN(3)) * time.Minute}
}

func poisson(r *rand.Rand, lambda float64) int {
	l, k, p := math.Exp(-lambda), 0, 1.0
	for {
		p *= r.Float64()
		if p <= l {
			return k
		}
		k++
	}
}

// settlePoint is the API's settle point at now: now − lag, rounded down to
// the settle step, frozen during stalls, never moving backwards.
func (w *world) settlePoint(now, prev time.Time) time.Time {
	for _, s := range w.stalls {
		if !now.Before(s.from) && now.Before(s.to) {
			return prev
		}
	}
	p := now.Add(-w.lagAt(now))
	p = w.start.Add(p.Sub(w.start) / w.settleStep * w.settleStep)
	if p.Before(prev) {
		return prev
	}
	return p
}

// lagAt is the balance API's lag at now: the seed's base lag, or with
// LagDrift the drifting one.
func (w *world) lagAt(now time.Time) time.Duration {
	if len(w.lagKnots) == 0 {
		return w.settleLag
	}
	i := sort.Search(len(w.lagKnots), func(i int) bool { return w.lagKnots[i].at.After(now) })
	if i == 0 {
		return w.lagKnots[0].lag
	}
	if i == len(w.lagKnots) {
		return w.lagKnots[i-1].lag
	}
	a, b := w.lagKnots[i-1], w.lagKnots[i]
	f := float64(now.Sub(a.at)) / float64(b.at.Sub(a.at))
	return (a.lag + time.Duration(f*float64(b.lag-a.lag))).Truncate(time.Minute)
}
