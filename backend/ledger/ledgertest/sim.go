package ledgertest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/price"
)

// Machine drives a store with a program of operations (admit, start, settle,
// keep hold, release, reconcile, budget change, restart) and keeps an
// in-memory model of what the ledger must hold. After every step it compares
// the store with the model and checks the invariants; the first divergence
// is returned as an error naming the step.
//
// Programs are bytes so that the same interpreter serves the seeded
// simulation (bytes from a PRNG) and the fuzzer (bytes from the engine).
// Many programs may share one store: each uses its own tenants, runs and
// guarded model under Prefix, and Finish ends its open runs.
type Machine struct {
	Store ledger.Store
	// Reopen closes the store and opens the same ledger again, as a restart
	// of the process would; nil disables the restart operation.
	Reopen func(ledger.Store) (ledger.Store, error)
	Prefix string
	// SkipFinalVerify leaves Verify to the caller (Simulate verifies once per
	// store); restarts still verify.
	SkipFinalVerify bool

	prog    []byte
	pos     int
	args    [4]byte
	argPos  int
	step    int
	tenants []*mTenant
	runs    []*mRun
	byID    map[ledger.RunID]*mRun
	quota   struct{ limit, usage, held ledger.Units }
	nextRun int
	log     []string
}

type mTenant struct {
	id                  string
	budget, spent, held ledger.Units
	active, max         int
	// Money: the first tenant also budgets in money; both hold and spend
	// money for their priced runs.
	hasMoney                           bool
	moneyBudget, moneySpent, moneyHeld price.Micros
}

func (t *mTenant) available() ledger.Units { return t.budget - t.spent - t.held }

func (t *mTenant) availableMoney() price.Micros {
	return t.moneyBudget - t.moneySpent - t.moneyHeld
}

// hold adds r's reserve (units and money) to what t holds, or takes it
// away (sign −1) when r stops holding.
func (t *mTenant) hold(r *mRun, sign int) {
	t.held += ledger.Units(sign) * r.reserve
	t.moneyHeld += price.Micros(sign) * r.reserveMicros
}

type mRun struct {
	id      ledger.RunID
	tenant  *mTenant
	reserve ledger.Units
	spent   ledger.Units
	status  ledger.RunStatus
	usage   ledger.UsageStatus
	quota   bool
	// A priced run (at TestPrice) reserved reserveMicros for input counted
	// tokens and the rest of its reserve as output, and was charged cost.
	priced              bool
	input               ledger.Units
	reserveMicros, cost price.Micros
}

// charge is what the model charges r for tokens: their cost at TestPrice,
// at most the reserve's; nothing for an unpriced run.
func (r *mRun) charge(t price.Tokens) price.Micros {
	if !r.priced {
		return 0
	}
	c, err := TestPrice.Cost(t)
	if err != nil {
		panic(err) // the simulation's counts are small
	}
	return min(c, r.reserveMicros)
}

// unitsCharge is r's charge for units as its input first, the rest output.
func (r *mRun) unitsCharge(units ledger.Units) price.Micros {
	in := min(units, r.input)
	return r.charge(price.Tokens{Input: int64(in), Output: int64(units - in)})
}

func (r *mRun) held() ledger.Units {
	if r.usage.Holding() {
		return r.reserve
	}
	return 0
}

// Operation codes of a program.
const (
	opAdmit = iota
	opStart
	opSettle
	opKeepHold
	opRelease
	opReconcile
	opBudget
	opRestart
	opCount
)

var opNames = [...]string{"admit", "start", "settle", "keep-hold", "release", "reconcile", "budget", "restart"}

func (m *Machine) next() byte {
	if m.pos >= len(m.prog) {
		return 0
	}
	b := m.prog[m.pos]
	m.pos++
	return b
}

// arg returns the current operation's next argument byte.
func (m *Machine) arg() byte {
	if m.argPos >= len(m.args) {
		return 0
	}
	b := m.args[m.argPos]
	m.argPos++
	return b
}

func (m *Machine) upstream() string { return "up-" + m.Prefix }

const quotaDay = "2026-11-29"

// Run executes prog from a fresh set of tenants and returns the first
// divergence. The first five bytes choose the two tenants' budgets and
// concurrency limits and the guarded model's daily limit.
func (m *Machine) Run(prog []byte) error {
	ctx := context.Background()
	m.prog, m.pos, m.byID = prog, 0, map[ledger.RunID]*mRun{}
	for i := range 2 {
		t := &mTenant{id: fmt.Sprintf("%s-t%d", m.Prefix, i), budget: ledger.Units(50 + int(m.next())%200), max: 1 + int(m.next())%3}
		// The first tenant's money budget fits a few priced runs (a
		// token costs 2 to 8 micros), so money refuses as often as units.
		t.hasMoney, t.moneyBudget = i == 0, price.Micros(t.budget)*9
		m.tenants = append(m.tenants, t)
	}
	m.quota.limit = ledger.Units(100 + int(m.next())%300)
	if err := m.Store.ApplyTenants(ctx, m.policy(), ledger.Operator("sim")); err != nil {
		return fmt.Errorf("apply tenants: %w", err)
	}
	if err := m.check(nil); err != nil {
		return err
	}
	for m.pos < len(m.prog) {
		m.step++
		op := int(m.next()) % opCount
		// Every operation takes four argument bytes, used or not, so that a
		// program's operations stay aligned whatever each one reads.
		for i := range m.args {
			m.args[i] = m.next()
		}
		m.argPos = 0
		if err := m.exec(ctx, op); err != nil {
			return fmt.Errorf("step %d: %w\nlog:\n%s", m.step, err, m.tail())
		}
	}
	return m.Finish()
}

func (m *Machine) tail() string {
	from := max(0, len(m.log)-12)
	s := ""
	for _, l := range m.log[from:] {
		s += "  " + l + "\n"
	}
	return s
}

func (m *Machine) policy() []ledger.Tenant {
	var ts []ledger.Tenant
	for _, t := range m.tenants {
		tn := Tenant(t.id, t.budget, t.max)
		tn.HasMoneyBudget, tn.BudgetMicros = t.hasMoney, t.moneyBudget
		ts = append(ts, tn)
	}
	return ts
}

// Finish ends the program's open runs (keeping their holds) and verifies the
// whole store, so that the next program sharing it starts with no open run.
func (m *Machine) Finish() error {
	ctx := context.Background()
	for _, r := range m.runs {
		if !r.status.Ended() {
			if _, err := m.Store.KeepHold(ctx, r.id, ledger.RunInterrupted, "sim: program ended", by); err != nil {
				return fmt.Errorf("finish: keep hold of %s: %w", r.id, err)
			}
			r.status, r.usage = ledger.RunInterrupted, ledger.UsageUnknown
			r.tenant.active--
		}
	}
	if err := m.check(nil); err != nil {
		return fmt.Errorf("finish: %w", err)
	}
	if err := m.checkAllRuns(); err != nil {
		return fmt.Errorf("finish: %w", err)
	}
	if m.SkipFinalVerify {
		return nil
	}
	return m.verify()
}

// checkAllRuns compares every run of the program, as the store lists them,
// with the model.
func (m *Machine) checkAllRuns() error {
	n := 0
	for _, t := range m.tenants {
		runs, err := m.Store.Runs(context.Background(), ledger.RunFilter{TenantID: t.id, Limit: len(m.runs) + 1})
		if err != nil {
			return fmt.Errorf("runs: %w", err)
		}
		for _, got := range runs {
			r := m.byID[got.ID]
			if r == nil {
				return fmt.Errorf("the store has run %s, the model does not", got.ID)
			}
			if err := m.checkRun(r, &got); err != nil {
				return err
			}
		}
		n += len(runs)
	}
	if n != len(m.runs) {
		return fmt.Errorf("the store lists %d runs, the model has %d", n, len(m.runs))
	}
	return nil
}

func (m *Machine) verify() error {
	problems, err := m.Store.Verify(context.Background())
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	if len(problems) > 0 {
		return fmt.Errorf("verify: %v", problems)
	}
	return nil
}

// pick chooses one of the program's runs, or nil when there is none.
func (m *Machine) pick() *mRun {
	b := m.arg()
	if len(m.runs) == 0 {
		return nil
	}
	return m.runs[int(b)%len(m.runs)]
}

func (m *Machine) exec(ctx context.Context, op int) error {
	switch op {
	case opAdmit:
		return m.admit(ctx)
	case opStart:
		r := m.pick()
		if r == nil {
			return nil
		}
		m.logf("start %s", r.id)
		run, err := m.Store.Start(ctx, r.id, by)
		want := ""
		switch {
		case r.status.Ended():
			want = ledger.CodeRunEnded
		case r.status == ledger.RunQueued:
			r.status = ledger.RunActive
		}
		return m.expect(err, want, r, &run)
	case opSettle:
		r := m.pick()
		if r == nil {
			return nil
		}
		units := ledger.Units(int(m.arg()) % (int(r.reserve) + 2))
		s, cost := m.settlement(r, units, m.arg())
		m.logf("settle %s %d usage=%+v", r.id, units, s.Usage)
		run, err := m.Store.SettleUsage(ctx, r.id, s, by)
		want := ""
		switch {
		case r.status.Ended():
			want = ledger.CodeRunEnded
		default:
			spent := min(units, r.reserve) // above the reserve: an overrun, counted in the quota day only
			r.tenant.spent += spent
			r.tenant.hold(r, -1)
			r.tenant.moneySpent += cost
			r.cost = cost
			r.tenant.active--
			if r.quota {
				m.quota.usage += units
				m.quota.held -= r.reserve
			}
			r.status, r.usage, r.spent = ledger.RunCompleted, ledger.UsageTrusted, spent
		}
		return m.expect(err, want, r, &run)
	case opKeepHold:
		r := m.pick()
		if r == nil {
			return nil
		}
		status := []ledger.RunStatus{ledger.RunInterrupted, ledger.RunCancelled, ledger.RunCompleted, ledger.RunFailed}[m.arg()%4]
		m.logf("keep-hold %s %s", r.id, status)
		run, err := m.Store.KeepHold(ctx, r.id, status, "usage unknown", by)
		want := ""
		if r.status.Ended() {
			want = ledger.CodeRunEnded
		} else {
			r.status, r.usage = status, ledger.UsageUnknown
			r.tenant.active--
		}
		return m.expect(err, want, r, &run)
	case opRelease:
		r := m.pick()
		if r == nil {
			return nil
		}
		status := []ledger.RunStatus{ledger.RunFailed, ledger.RunCancelled}[m.arg()%2]
		m.logf("release %s %s", r.id, status)
		run, err := m.Store.ReleaseHold(ctx, r.id, status, "HTTP 503 before any output", by)
		want := ""
		if r.status.Ended() {
			want = ledger.CodeRunEnded
		} else {
			r.tenant.hold(r, -1)
			r.tenant.active--
			if r.quota {
				m.quota.held -= r.reserve
			}
			r.status, r.usage = status, ledger.UsageReleased
		}
		return m.expect(err, want, r, &run)
	case opReconcile:
		r := m.pick()
		if r == nil {
			return nil
		}
		units := ledger.Units(int(m.arg()) % (int(r.reserve) + 2))
		evidence := "provider bill"
		if m.arg()%8 == 0 {
			evidence = ""
		}
		c := m.reconciliation(r, units, evidence, m.arg())
		m.logf("reconcile %s %d %q bill=%v %s", r.id, units, evidence, c.HasCost, c.CostMicros)
		run, err := m.Store.ReconcileCost(ctx, r.id, c, ledger.ActorAdmin)
		want := ""
		switch {
		case evidence == "":
			want = ledger.CodeInvalidRequest
		case r.usage != ledger.UsageUnknown:
			want = ledger.CodeNotHeld
		case units > r.reserve || (c.HasCost && c.CostMicros > r.reserveMicros):
			want = ledger.CodeInvalidRequest
		default:
			r.cost = c.CostMicros
			if !c.HasCost {
				r.cost = r.unitsCharge(units)
			}
			r.tenant.spent += units
			r.tenant.moneySpent += r.cost
			r.tenant.hold(r, -1)
			if r.quota {
				m.quota.usage += units
				m.quota.held -= r.reserve
			}
			r.usage, r.spent = ledger.UsageReconciled, units
		}
		return m.expect(err, want, r, &run)
	case opBudget:
		t := m.tenants[m.arg()%2]
		committed := t.spent + t.held
		budget := committed + ledger.Units(m.arg()%64) - 8
		maxConc := int(m.arg() % 4)
		m.logf("budget %s %d (committed %d) max %d", t.id, budget, committed, maxConc)
		old := *t
		t.budget, t.max = budget, maxConc
		err := m.Store.ApplyTenants(ctx, m.policy(), ledger.Operator("sim"))
		want := ""
		if budget < committed {
			want = ledger.CodeInvalidRequest
			*t = old
		}
		return m.expect(err, want, nil, nil)
	case opRestart:
		if m.Reopen == nil {
			return nil
		}
		m.logf("restart")
		st, err := m.Reopen(m.Store)
		if err != nil {
			return fmt.Errorf("reopen: %w", err)
		}
		m.Store = st
		n, err := st.RecoverInterrupted(ctx, ledger.ActorRecovery)
		if err != nil {
			return fmt.Errorf("recover: %w", err)
		}
		open := 0
		for _, r := range m.runs {
			if r.status.Ended() {
				continue
			}
			open++
			r.tenant.active--
			if r.status == ledger.RunQueued { // never sent upstream: released
				r.tenant.hold(r, -1)
				if r.quota {
					m.quota.held -= r.reserve
				}
				r.status, r.usage = ledger.RunFailed, ledger.UsageReleased
				continue
			}
			r.status, r.usage = ledger.RunInterrupted, ledger.UsageUnknown
		}
		if n != open {
			return fmt.Errorf("recover marked %d runs, the model had %d open", n, open)
		}
		if err := m.check(nil); err != nil {
			return err
		}
		if err := m.checkAllRuns(); err != nil {
			return err
		}
		return m.verify()
	}
	return fmt.Errorf("unknown op %d", op)
}

func (m *Machine) admit(ctx context.Context) error {
	a, b, c, d := m.arg(), m.arg(), m.arg(), m.arg()
	var t *mTenant
	tenantID := m.Prefix + "-ghost"
	if int(a)%5 != 4 {
		t = m.tenants[int(a)%2]
		tenantID = t.id
	}
	reserve := ledger.Units(b % 80)
	queued := c&1 != 0
	guarded := c&2 != 0
	var dup *mRun
	var id ledger.RunID
	if c&0x1c == 0x1c && len(m.runs) > 0 {
		dup = m.runs[int(c>>5)%len(m.runs)]
		id = dup.id
	} else {
		m.nextRun++
		id = ledger.RunID(fmt.Sprintf("%s-r%d", m.Prefix, m.nextRun))
	}
	req := ledger.AdmitRequest{RunID: id, TenantID: tenantID, Upstream: m.upstream(), Model: "m",
		ReserveUnits: reserve, Queued: queued, Actor: ledger.System("sim")}
	// Most runs are priced, their counted input some part of the reserve.
	priced := d%8 != 0
	if priced {
		req.Prices = TestPrice
		req.InputUnits = ledger.Units(int(d>>3) % (int(reserve) + 1))
		req.ReserveMicros, _ = TestPrice.ReserveCost(int64(req.InputUnits), int64(reserve-req.InputUnits))
	}
	if guarded {
		req.Quota = &ledger.QuotaCheck{Day: quotaDay, LimitUnits: m.quota.limit}
	}
	m.logf("admit %s tenant=%s reserve=%d (%s) queued=%v guarded=%v", id, tenantID, reserve, req.ReserveMicros, queued, guarded)
	run, err := m.Store.Admit(ctx, req)
	want := ""
	switch {
	case dup != nil:
		want = ledger.CodeConflict
	case t == nil:
		want = ledger.CodeInvalidAPIKey
	case t.hasMoney && !priced:
		want = ledger.CodeModelUnpriced
	case t.available() < reserve || (t.hasMoney && t.availableMoney() < req.ReserveMicros):
		want = ledger.CodeInsufficientBudget
	case t.active >= t.max:
		want = ledger.CodeConcurrencyLimit
	case guarded && m.quota.usage+m.quota.held+reserve > m.quota.limit:
		want = ledger.CodeQuotaGuard
	}
	if want != "" {
		return m.expect(err, want, dup, nil)
	}
	r := &mRun{id: id, tenant: t, reserve: reserve, status: ledger.RunActive, usage: ledger.UsagePending, quota: guarded,
		priced: priced, input: req.InputUnits, reserveMicros: req.ReserveMicros}
	if queued {
		r.status = ledger.RunQueued
	}
	t.hold(r, 1)
	t.active++
	if guarded {
		m.quota.held += reserve
	}
	m.runs = append(m.runs, r)
	m.byID[id] = r
	return m.expect(err, "", r, &run)
}

// settlement is how the program settles r at units, by arg: as units
// alone (priced as input first), or as a usage whose prompt is up to the
// run's input with part of it read from or written to the cache; and the
// charge the model expects.
func (m *Machine) settlement(r *mRun, units ledger.Units, arg byte) (ledger.Settlement, price.Micros) {
	s := ledger.Settlement{Units: units, Evidence: "usage"}
	if arg%3 == 0 {
		return s, r.unitsCharge(units)
	}
	prompt := min(units, r.input)
	read := prompt * ledger.Units(arg>>2%3) / 2
	write := (prompt - read) * ledger.Units(arg>>4%2)
	s.Usage = &ledger.Usage{PromptTokens: int64(prompt), CachedTokens: int64(read), CacheCreationTokens: int64(write),
		CompletionTokens: int64(units - prompt)}
	return s, r.charge(price.Tokens{Input: int64(prompt - read - write), CacheRead: int64(read),
		CacheWrite: int64(write), Output: int64(units - prompt)})
}

// reconciliation is how the program reconciles r, by arg: with a bill of
// part of its reserve's cost (now and then a micro above it), or without.
func (m *Machine) reconciliation(r *mRun, units ledger.Units, evidence string, arg byte) ledger.Reconciliation {
	c := ledger.Reconciliation{Units: units, Evidence: evidence}
	if arg%2 == 0 {
		return c
	}
	c.HasCost = true
	c.CostMicros = r.reserveMicros * price.Micros(arg>>1%16) / 15
	if arg>>1%16 == 15 && arg>>5 == 7 {
		c.CostMicros = r.reserveMicros + 1
	}
	return c
}

func (m *Machine) logf(format string, args ...any) {
	m.log = append(m.log, fmt.Sprintf(format, args...))
}

// expect compares an outcome with the model's and then checks the store.
func (m *Machine) expect(err error, want string, r *mRun, got *ledger.Run) error {
	if code := ledger.ErrorCode(err); code != want {
		return fmt.Errorf("got %q (%v), the model wants %q", code, err, want)
	}
	if err == nil && r != nil && got != nil {
		if err := m.checkRun(r, got); err != nil {
			return fmt.Errorf("returned run: %w", err)
		}
	}
	if err != nil && r != nil {
		// A refusal must leave the run as it was.
		if err := m.checkRun(r, nil); err != nil {
			return fmt.Errorf("after refusal: %w", err)
		}
	}
	return m.check(r)
}

func (m *Machine) checkRun(r *mRun, got *ledger.Run) error {
	if got == nil {
		run, err := m.Store.Run(context.Background(), r.id)
		if err != nil {
			return fmt.Errorf("run %s: %w", r.id, err)
		}
		got = &run
	}
	if got.ID != r.id || got.TenantID != r.tenant.id || got.Status != r.status || got.Usage != r.usage ||
		got.ReserveUnits != r.reserve || got.SpentUnits != r.spent || got.HeldUnits != r.held() ||
		got.ReserveMicros != r.reserveMicros || got.CostMicros != r.cost || !samePrices(got.Prices, r.priced) {
		return fmt.Errorf("run %s is %+v; the model has status %s usage %s reserve %d spent %d held %d, reserve %s cost %s",
			r.id, *got, r.status, r.usage, r.reserve, r.spent, r.held(), r.reserveMicros, r.cost)
	}
	return nil
}

// samePrices reports whether a run's prices, as the store keeps them
// across restarts, are TestPrice exactly when the model priced it.
func samePrices(p *price.Price, priced bool) bool {
	return (p != nil) == priced && (p == nil || *p == *TestPrice)
}

// check compares every tenant's balance, the touched run and the guarded
// model's day with the model, and checks the invariants.
func (m *Machine) check(touched *mRun) error {
	ctx := context.Background()
	for _, t := range m.tenants {
		b, err := m.Store.Balance(ctx, t.id)
		if err != nil {
			return fmt.Errorf("balance: %w", err)
		}
		if err := b.Check(); err != nil {
			return err
		}
		want := ledger.Balance{TenantID: t.id, BudgetUnits: t.budget, SpentUnits: t.spent, HeldUnits: t.held,
			AvailableUnits: t.available(), Active: t.active,
			SpentMicros: t.moneySpent, HeldMicros: t.moneyHeld, HasMoneyBudget: t.hasMoney}
		if t.hasMoney {
			want.BudgetMicros, want.AvailableMicros = t.moneyBudget, t.availableMoney()
		}
		if b != want {
			return fmt.Errorf("balance %+v; the model has %+v", b, want)
		}
	}
	if touched != nil {
		if touched.quota {
			u, err := m.Store.QuotaUsage(ctx, m.upstream(), "m", quotaDay)
			if err != nil {
				return fmt.Errorf("quota usage: %w", err)
			}
			if u.UsageUnits != m.quota.usage || u.HeldInFlight != m.quota.held {
				return fmt.Errorf("quota usage %+v; the model has usage %d held %d", u, m.quota.usage, m.quota.held)
			}
		}
	}
	return nil
}

// SimOptions configures Simulate.
type SimOptions struct {
	FirstSeed uint64
	Seeds     int
	Ops       int // operations per seed
	// SeedsPerStore bounds how many seeds share one store before a fresh
	// one is opened; Verify runs over the whole store after its last seed
	// (and at every restart). 0 means 50.
	SeedsPerStore int
	// Workers is how many subtests share the seeds in parallel.
	Workers int
	// Open returns a store and its Reopen function.
	Open func(tb testing.TB) (ledger.Store, func(ledger.Store) (ledger.Store, error))
	// Replay is how to rerun one seed, printed with a failing seed (%d is the seed).
	Replay string
}

// Program generates the operations of one seed. Restarts are rare (they cost
// a close and an open) and the rest is weighted towards admissions.
func Program(seed uint64, ops int) []byte {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	prog := []byte{byte(rng.Uint32()), byte(rng.Uint32()), byte(rng.Uint32()), byte(rng.Uint32()), byte(rng.Uint32())}
	weights := [opCount]int{opAdmit: 30, opStart: 8, opSettle: 14, opKeepHold: 12, opRelease: 8, opReconcile: 14, opBudget: 4, opRestart: 1}
	total := 0
	for _, w := range weights {
		total += w
	}
	for range ops {
		n := rng.IntN(total)
		op := 0
		for n >= weights[op] {
			n -= weights[op]
			op++
		}
		prog = append(prog, byte(op))
		for range 4 {
			prog = append(prog, byte(rng.Uint32()))
		}
	}
	return prog
}

// Simulate runs one program per seed, spread over Workers parallel
// subtests each with its own stores, and reports a failing seed with its
// replay command.
func Simulate(t *testing.T, o SimOptions) {
	if o.SeedsPerStore <= 0 {
		o.SeedsPerStore = 50
	}
	workers := max(1, min(o.Workers, o.Seeds))
	per := (o.Seeds + workers - 1) / workers
	for w := range workers {
		first := o.FirstSeed + uint64(w*per)
		n := min(per, o.Seeds-w*per)
		t.Run(fmt.Sprintf("seeds-%d-%d", first, first+uint64(n)-1), func(t *testing.T) {
			if workers > 1 {
				t.Parallel()
			}
			simulate(t, o, first, n)
		})
	}
}

func simulate(t *testing.T, o SimOptions, firstSeed uint64, seeds int) {
	var st ledger.Store
	var reopen func(ledger.Store) (ledger.Store, error)
	defer func() {
		if st != nil {
			st.Close()
		}
	}()
	for i := range seeds {
		seed := firstSeed + uint64(i)
		if i%o.SeedsPerStore == 0 {
			if st != nil {
				if err := st.Close(); err != nil {
					t.Fatal(err)
				}
			}
			st, reopen = o.Open(t)
		}
		last := i == seeds-1 || (i+1)%o.SeedsPerStore == 0
		m := &Machine{Store: st, Reopen: reopen, Prefix: fmt.Sprintf("s%d", seed), SkipFinalVerify: !last}
		err := m.Run(Program(seed, o.Ops))
		st = m.Store
		if err != nil {
			t.Fatalf("simulation seed %d failed: %v\nreplay: "+o.Replay, seed, err, seed)
		}
	}
}
