package quota

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
)

// The nightly top-up executor (seed 002 §1.1, §8.4: 消耗任务).
//
// Usage today is refunded tomorrow (up to the cap), so spending the day's
// unused free quota costs nothing and draws the oldest packages down before
// their 30-day expiry eats them. The seed's job sent that traffic straight to
// the provider, bypassing the gate, and was safe only because of its own
// clamps. Here every filler call goes through a Caller that the server backs
// with an admitted, metered, settled run of a system tenant, so the gate's
// atomic check applies as well; the clamps below are re-applied with fresh
// usage before every call all the same, because real users keep spending
// while the job runs.

// Caller sends one filler chat completion for the top-up. maxUnits bounds
// the whole call — the run's reserve (input + output budget, reasoning
// included) — and spent is what the ledger settled for it. An error, a
// refusal included, ends the day's top-up of that model.
type Caller interface {
	Call(ctx context.Context, upstream, model string, maxUnits ledger.Units) (spent ledger.Units, err error)
}

// Top-up defaults.
const (
	DefaultTopUpTenant                    = "topup"
	DefaultTopUpCallUnits    ledger.Units = 32_768 // mostly filler input: fast to prefill, few calls for 2M
	DefaultTopUpMinCallUnits ledger.Units = 4_608  // the reasoning floor (4,096) plus a small prompt
	DefaultTopUpMaxCalls                  = 1_000
	DefaultTopUpRetry                     = 5 * time.Minute
)

// TopUpActor is the actor of the top-up's audit rows.
var TopUpActor = ledger.ActorTopUp

// Audit reasons of the top-up (kind AuditSync, actor TopUpActor, tenant the
// system tenant, detail starting "<upstream>/<model> day=<day> "). A
// topup_run row is written before the first call and makes the day's run
// taken, so that a restart — even one after a crash mid-run — never runs it
// twice.
const (
	ReasonTopUpRun      = "topup_run"
	ReasonTopUpDone     = "topup_done"
	ReasonTopUpDryRun   = "topup_dry_run"
	topUpFinalAuditWait = 5 * time.Second
)

// Why a top-up ended.
const (
	StopPlanExhausted = "plan_exhausted" // what is left of the plan or the clamps is below one call
	StopEvicted       = "evicted"
	StopRefused       = "refused" // the Caller returned an error (refusal, upstream error)
	StopCancelled     = "cancelled"
	StopDayOver       = "day_over" // the quota day rolled over: tomorrow has its own plan
	StopMaxCalls      = "max_calls"
	StopNoProgress    = "no_progress" // a call settled 0 units
	StopOverspent     = "overspent"   // a call settled more than its bound: the clamps no longer hold
	StopStoreError    = "store_error"
)

// Outcomes of one attempt (TopUpResult.Outcome).
const (
	TopUpNotDue   = "not_due"  // before TopUp.At local time
	TopUpDone     = "done"     // today's top-up already ran (or dry-ran), per the audit log
	TopUpDeferred = "deferred" // could not start now (no balance, evicted, sync failed); retried later
	TopUpDryRun   = "dry_run"  // planned and audited, nothing spent
	TopUpRan      = "ran"      // spent (possibly 0) and audited
)

// TopUpRunOptions configure the executor. Zero fields take the defaults.
type TopUpRunOptions struct {
	Tenant       string       // system tenant of the filler runs (audit rows carry it too)
	CallUnits    ledger.Units // largest bound of one filler call
	MinCallUnits ledger.Units // no call is made for less: the smallest reserve a filler call can have
	MaxCalls     int          // per model per day
	RetryEvery   time.Duration
	// Spend names the upstreams whose top-up spends for real. Absent or
	// false, and always when there is no Caller: dry run.
	Spend map[string]bool
}

func (o TopUpRunOptions) withDefaults() TopUpRunOptions {
	if o.Tenant == "" {
		o.Tenant = DefaultTopUpTenant
	}
	if o.CallUnits == 0 {
		o.CallUnits = DefaultTopUpCallUnits
	}
	if o.MinCallUnits == 0 {
		o.MinCallUnits = min(DefaultTopUpMinCallUnits, o.CallUnits)
	}
	if o.MaxCalls == 0 {
		o.MaxCalls = DefaultTopUpMaxCalls
	}
	if o.RetryEvery == 0 {
		o.RetryEvery = DefaultTopUpRetry
	}
	return o
}

// TopUpResult is one model's attempt.
type TopUpResult struct {
	Upstream string
	Model    string
	Day      string
	Outcome  string
	Plan     ledger.Units // at the start: min(cap − used, B0 − buffer − used, limit − used, wall − 1 − used)
	Spent    ledger.Units // settled by the filler calls
	Calls    int
	Stop     string // why it ended (ran) or why it did not start (deferred)
	Detail   string
}

// TopUp runs the nightly top-up of every guarded model whose TopUp.Enabled
// is set, once a day after TopUp.At local time.
type TopUp struct {
	g       topUpGuard
	log     auditLog
	now     func() time.Time
	publish func(kind string)
	caller  Caller
	o       TopUpRunOptions

	mu   sync.Mutex
	done map[modelKey]string // day whose top-up is known taken (memo of the audit log)
}

// topUpGuard is all the executor needs of the guard (*Guard implements it).
type topUpGuard interface {
	Models() []ModelOptions
	HasSource(upstream, model string) bool
	Sync(ctx context.Context, upstream, model string) (ledger.Snapshot, error)
	Position(ctx context.Context, upstream, model string) (Position, error)
	ShowTopUpPlan(upstream, model, day string, plan ledger.Units)
}

// auditLog is where the executor keeps its day taken (ledger.Store implements it).
type auditLog interface {
	AppendAudit(ctx context.Context, e ledger.AuditEntry) error
	Audit(ctx context.Context, f ledger.AuditFilter) ([]ledger.AuditEntry, error)
}

// NewTopUp builds the executor over g. caller may be nil: every model dry-runs.
func NewTopUp(g *Guard, caller Caller, o TopUpRunOptions) (*TopUp, error) {
	if g == nil {
		return nil, fmt.Errorf("quota top-up: no guard")
	}
	o = o.withDefaults()
	if o.CallUnits < 0 || o.MinCallUnits <= 0 || o.MinCallUnits > o.CallUnits || o.MaxCalls < 0 || o.RetryEvery < 0 {
		return nil, ledger.Errorf(ledger.CodeInvalidRequest,
			"quota top-up: want 0 < min_call_units %d ≤ call_units %d, max_calls %d ≥ 0, retry %s ≥ 0",
			o.MinCallUnits, o.CallUnits, o.MaxCalls, o.RetryEvery)
	}
	if err := ledger.CheckUnits("top-up call_units", o.CallUnits); err != nil {
		return nil, err
	}
	return &TopUp{g: g, log: g.store, now: g.now, publish: g.publish, caller: caller, o: o,
		done: map[modelKey]string{}}, nil
}

func (t *TopUp) dryRun(upstream string) bool { return t.caller == nil || !t.o.Spend[upstream] }

// Run attempts each enabled model at its TopUp.At, and again every
// RetryEvery while an attempt is deferred, until ctx is done.
func (t *TopUp) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for _, m := range t.g.Models() {
		if !m.TopUp.Enabled {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.loop(ctx, m)
		}()
	}
	wg.Wait()
}

func (t *TopUp) loop(ctx context.Context, m ModelOptions) {
	for {
		r := t.attempt(ctx, m)
		now := t.now()
		wait := nextTopUp(m.Options, now).Sub(now)
		if r.Outcome == TopUpDeferred {
			wait = min(wait, t.o.RetryEvery)
		}
		if !pause(ctx, wait, nil) {
			return
		}
	}
}

// nextTopUp is the next TopUp.At strictly after now (today's or tomorrow's).
func nextTopUp(o Options, now time.Time) time.Time {
	at := o.DayStart(now).Add(o.TopUp.At)
	if now.Before(at) {
		return at
	}
	return o.NextDayStart(now).Add(o.TopUp.At)
}

// Tick attempts every enabled model once, in configuration order, and
// returns what each attempt did. Run calls the same attempt on its timers.
func (t *TopUp) Tick(ctx context.Context) []TopUpResult {
	var out []TopUpResult
	for _, m := range t.g.Models() {
		if m.TopUp.Enabled {
			out = append(out, t.attempt(ctx, m))
		}
	}
	return out
}

// room is what one more call may spend now: the seed's two clamps, the
// guard's limit (which also leaves out soon-expiring packages) and one unit
// short of the usage wall, so that the job never evicts the model for the
// real users itself — all net of today's usage and the holds of runs still
// in flight (real users' included).
func room(o Options, p Position) ledger.Units {
	used := p.Usage + p.Held
	return clamp(min(o.DailyCap-used, p.B0.Units-o.SmallBuffer-used, p.Limit-used, Wall(o, p.Limit)-1-used))
}

func describe(o Options, p Position) string {
	used := p.Usage + p.Held
	manual := ""
	if p.B0.Manual {
		manual = " (manual)"
	}
	return fmt.Sprintf("usage %d + held %d = %d; cap %d − %d = %d; B0 %d%s − buffer %d − %d = %d; limit %d, wall %d",
		p.Usage, p.Held, used, o.DailyCap, used, o.DailyCap-used, p.B0.Units, manual, o.SmallBuffer, used,
		p.B0.Units-o.SmallBuffer-used, p.Limit, Wall(o, p.Limit))
}

func topUpKey(m ModelOptions, day string) string {
	return fmt.Sprintf("%s/%s day=%s ", m.Upstream, m.Model, day)
}

// taken reports whether today's top-up of m already ran (any real run
// counts, finished or not) — or, for a dry run, dry-ran — per the audit log.
func (t *TopUp) taken(ctx context.Context, m ModelOptions, day string, now time.Time, dry bool) (bool, error) {
	t.mu.Lock()
	memo := t.done[modelKey{m.Upstream, m.Model}] == day
	t.mu.Unlock()
	if memo {
		return true, nil
	}
	rows, err := t.log.Audit(ctx, ledger.AuditFilter{TenantID: t.o.Tenant, From: m.DayStart(now).Add(-time.Hour)})
	if err != nil {
		return false, fmt.Errorf("read the top-up audit of %s/%s: %w", m.Upstream, m.Model, err)
	}
	prefix := topUpKey(m, day)
	for _, r := range rows {
		if r.Kind != ledger.AuditSync || r.Actor != TopUpActor || !strings.HasPrefix(r.Detail, prefix) {
			continue
		}
		if r.Reason == ReasonTopUpRun || (dry && r.Reason == ReasonTopUpDryRun) {
			t.markDone(m, day)
			return true, nil
		}
	}
	return false, nil
}

func (t *TopUp) markDone(m ModelOptions, day string) {
	t.mu.Lock()
	t.done[modelKey{m.Upstream, m.Model}] = day
	t.mu.Unlock()
}

func (t *TopUp) audit(ctx context.Context, reason string, units ledger.Units, detail string) error {
	return t.log.AppendAudit(ctx, ledger.AuditEntry{At: t.now().UTC(), Kind: ledger.AuditSync,
		TenantID: t.o.Tenant, Actor: TopUpActor, Reason: reason, Units: units, Detail: detail})
}

// attempt runs m's top-up if it is due and not yet taken today.
func (t *TopUp) attempt(ctx context.Context, m ModelOptions) TopUpResult {
	now := t.now()
	day := m.Day(now)
	r := TopUpResult{Upstream: m.Upstream, Model: m.Model, Day: day}
	defer func() {
		if r.Outcome == TopUpRan || r.Outcome == TopUpDryRun {
			t.publish(PublishKind)
		}
	}()
	if now.Before(m.DayStart(now).Add(m.TopUp.At)) {
		r.Outcome = TopUpNotDue
		return r
	}
	dry := t.dryRun(m.Upstream)
	deferred := func(why string) TopUpResult {
		r.Outcome, r.Stop = TopUpDeferred, why
		return r
	}
	if taken, err := t.taken(ctx, m, day, now, dry); err != nil {
		return deferred(err.Error())
	} else if taken {
		r.Outcome = TopUpDone
		return r
	}
	p, why := t.position(ctx, m, day)
	if why != "" {
		return deferred(why)
	}
	r.Plan = min(PlanTopUp(m.Options, p.Usage+p.Held, p.B0.Units), room(m.Options, p))
	t.g.ShowTopUpPlan(m.Upstream, m.Model, day, r.Plan)
	head := topUpKey(m, day)
	plan := fmt.Sprintf("plan %d: %s; calls of ≤ %d units", r.Plan, describe(m.Options, p), t.o.CallUnits)

	if dry {
		r.Outcome, r.Detail = TopUpDryRun, head+plan+" (dry run: nothing spent)"
		if err := t.audit(ctx, ReasonTopUpDryRun, r.Plan, r.Detail); err != nil {
			return deferred(err.Error())
		}
		t.markDone(m, day)
		return r
	}
	// The day is taken before anything is spent: if this row cannot be
	// written, nothing is spent; once it is, a restart will not run again.
	if err := t.audit(ctx, ReasonTopUpRun, r.Plan, head+plan); err != nil {
		return deferred(err.Error())
	}
	t.markDone(m, day)
	r.Outcome = TopUpRan
	r.Stop, r.Detail = t.spend(ctx, m, day, &r)
	final, cancel := context.WithTimeout(context.WithoutCancel(ctx), topUpFinalAuditWait)
	defer cancel()
	// Best effort: the topup_run row already keeps the day from running twice.
	_ = t.audit(final, ReasonTopUpDone, r.Spent,
		fmt.Sprintf("%sspent %d of plan %d in %d calls; stop: %s: %s", head, r.Spent, r.Plan, r.Calls, r.Stop, r.Detail))
	return r
}

// position is m's position when the top-up may plan from it, else why it
// must wait.
func (t *TopUp) position(ctx context.Context, m ModelOptions, day string) (Position, string) {
	// A fresh reading first when the model has a source (seed 002 §8.4 pulls
	// the packages at the start); on failure the job does not run on the old one.
	if t.g.HasSource(m.Upstream, m.Model) {
		if _, err := t.g.Sync(ctx, m.Upstream, m.Model); err != nil {
			return Position{}, "balance sync failed: " + err.Error()
		}
	}
	p, err := t.g.Position(ctx, m.Upstream, m.Model)
	switch {
	case err != nil:
		return p, err.Error()
	case p.Day != day:
		return p, StopDayOver
	case !p.B0.Known:
		return p, "no balance reading or manual B0 yet"
	case p.Evicted && !strings.HasPrefix(p.Reason, ReasonUsageWall):
		// A balance-wall or no-balance eviction may end at the next sync.
		return p, StopEvicted + ": " + p.Reason
	}
	return p, ""
}

// spend makes filler calls until a stop condition holds, re-reading the
// position before each one. It returns the stop reason and its detail.
func (t *TopUp) spend(ctx context.Context, m ModelOptions, day string, r *TopUpResult) (string, string) {
	for {
		if ctx.Err() != nil {
			return StopCancelled, ctx.Err().Error()
		}
		if r.Calls >= t.o.MaxCalls {
			return StopMaxCalls, fmt.Sprintf("%d calls", r.Calls)
		}
		p, err := t.g.Position(ctx, m.Upstream, m.Model)
		if err != nil {
			if ctx.Err() != nil {
				return StopCancelled, err.Error()
			}
			return StopStoreError, err.Error()
		}
		switch {
		case p.Day != day || m.Day(t.now()) != day:
			return StopDayOver, "the quota day is now " + m.Day(t.now())
		case p.Evicted:
			return StopEvicted, p.Reason
		}
		size := min(t.o.CallUnits, r.Plan-r.Spent, room(m.Options, p))
		if size < t.o.MinCallUnits {
			return StopPlanExhausted, fmt.Sprintf("next call %d < %d: plan left %d, %s",
				max(size, 0), t.o.MinCallUnits, r.Plan-r.Spent, describe(m.Options, p))
		}
		spent, err := t.caller.Call(ctx, m.Upstream, m.Model, size)
		r.Calls++
		if spent > 0 {
			r.Spent += spent
		}
		switch {
		case err != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) && ctx.Err() != nil:
			return StopCancelled, err.Error()
		case err != nil && ledger.ErrorCode(err) == ledger.CodeQuotaGuard:
			return StopEvicted, err.Error()
		case err != nil:
			return StopRefused, err.Error()
		case spent > size:
			return StopOverspent, fmt.Sprintf("a call bounded by %d settled %d", size, spent)
		case spent <= 0:
			return StopNoProgress, fmt.Sprintf("a call bounded by %d settled %d", size, spent)
		}
	}
}
