package ledger

import (
	"context"
	"fmt"
	"strings"

	"github.com/quotagate/quotagate/backend/price"
)

// Transition is a decided change of one run: the run after it, and what its
// audit row says. A store loads the run, asks a Rule for the Transition, and
// writes After, the Moves on the tenant's balance and the quota day, and the
// Audit row — it decides nothing itself, so that every store applies the
// same rules (backend/sqlite, backend/postgres).
type Transition struct {
	After    Run
	Kind     AuditKind
	Reason   string
	Evidence string
	Units    Units        // the units the audit row says the change moved
	Micros   price.Micros // the money it says the change moved
}

// None reports whether the transition changes nothing (starting a run
// that is already active): no write, no audit row.
func (t Transition) None(before Run) bool { return t.After == before }

// Moves are the deltas a transition makes on the tenant's balance row and
// on the guarded model's quota day.
type Moves struct {
	Spent  Units // on the tenant's spent_units
	Held   Units // on the tenant's and the quota day's held_units
	Used   Units // on the quota day's usage_units: spent plus overrun
	Active int   // on the tenant's active count: −1 when the run ended
	// SpentMicros and HeldMicros are the money on the tenant's spent and
	// held micros.
	SpentMicros, HeldMicros price.Micros
}

// Moves returns what moving from before to t.After moves.
func (t Transition) Moves(before Run) Moves {
	m := Moves{
		Spent: t.After.SpentUnits - before.SpentUnits,
		Held:  t.After.HeldUnits - before.HeldUnits,

		SpentMicros: t.After.CostMicros - before.CostMicros,
		HeldMicros:  t.After.HeldMicros() - before.HeldMicros(),
	}
	m.Used = m.Spent + t.After.OverrunUnits - before.OverrunUnits
	if !before.Status.Ended() && t.After.Status.Ended() {
		m.Active = -1
	}
	return m
}

// QuotaMoves reports whether the transition moves before's quota day.
func (m Moves) QuotaMoves(before Run) bool {
	return before.QuotaDay != "" && (m.Used != 0 || m.Held != 0)
}

// Audit is the transition's audit row, made by actor, given the tenant's
// available units after the change.
func (t Transition) Audit(before Run, actor Actor, availableAfter Units) AuditEntry {
	m := t.Moves(before)
	return AuditEntry{Kind: t.Kind, TenantID: before.TenantID, RunID: before.ID, Period: before.Period,
		Actor: actor, Reason: t.Reason, Evidence: t.Evidence, Units: t.Units, Micros: t.Micros, ProviderID: t.After.ProviderID,
		AvailableBefore: availableAfter + m.Spent + m.Held, AvailableAfter: availableAfter,
		Detail: fmt.Sprintf("%s/%s → %s/%s", before.Status, before.Usage, t.After.Status, t.After.Usage)}
}

// Rule decides a run's transition from the run as the store holds it. Op
// names the operation for error messages ("settle", "keep hold of", …);
// Err, when set, refuses the arguments before any run is read (a bad
// status, units out of range, missing evidence).
type Rule struct {
	Op     string
	Err    error
	decide func(run Run) (Transition, error)
}

// Decide returns the transition of run, or the typed error that refuses it
// (CodeRunEnded, CodeNotHeld, CodeInvalidRequest).
func (r Rule) Decide(run Run) (Transition, error) {
	if r.Err != nil {
		return Transition{}, r.Err
	}
	return r.decide(run)
}

// Answered is what a run's answer told the gateway beyond its usage: the
// provider's id of the call, and the output it relayed to the client
// (units under the run's meter). A usage lookup asks the provider about
// the id, and refuses a figure whose output is below what was relayed.
type Answered struct {
	ProviderID   string
	RelayedUnits Units
}

// Noting is r that also records what the answer told (Run.ProviderID,
// Run.RelayedUnits) on the run it ends, unless r changes nothing: both
// arrive with the answer and are written with the run's end.
func (r Rule) Noting(a Answered) Rule {
	if a == (Answered{}) || r.decide == nil {
		return r
	}
	decide := r.decide
	r.decide = func(run Run) (Transition, error) {
		t, err := decide(run)
		if err != nil || t.None(run) {
			return t, err
		}
		if t.After.ProviderID == "" {
			t.After.ProviderID = a.ProviderID
		}
		t.After.RelayedUnits = max(t.After.RelayedUnits, a.RelayedUnits)
		return t, nil
	}
	return r
}

func refuse(op string, err error) Rule { return Rule{Op: op, Err: err} }

// ErrEnded is the refusal of a transition of a run that already ended.
func ErrEnded(run Run) error {
	e := Errorf(CodeRunEnded, "run %s already ended (%s, usage %s)", run.ID, run.Status, run.Usage)
	e.Params = map[string]any{"run": run.ID, "status": run.Status, "usage": run.Usage}
	return e
}

// StartRule moves a queued run to active; starting an active run changes
// nothing.
func StartRule() Rule {
	return Rule{Op: "start", decide: func(run Run) (Transition, error) {
		switch {
		case run.Status.Ended():
			return Transition{}, ErrEnded(run)
		case run.Status == RunActive:
			return Transition{After: run}, nil
		}
		run.Status = RunActive
		return Transition{After: run, Kind: AuditStart}, nil
	}}
}

// NamedRule keeps the provider's id of a run still in flight, as its answer
// named it: a run that a crash then ends held can still be looked up at its
// provider. A run that ended, or whose id is kept already, is left as it
// is (no row).
func NamedRule(providerID string) Rule {
	return Rule{Op: "name", decide: func(run Run) (Transition, error) {
		if run.Status.Ended() || run.ProviderID != "" || providerID == "" {
			return Transition{After: run}, nil
		}
		run.ProviderID = providerID
		return Transition{After: run, Kind: AuditNamed, Reason: "the provider named the call"}, nil
	}}
}

// SettleRule ends a run on trusted usage of units: the tenant is charged
// at most the reserve (SplitOverrun), the rest of the hold is released,
// and an overrun is written into the evidence. A priced run's units are
// priced as its input first, the rest as output (SettleUsageRule prices
// the usage they came from instead).
func SettleRule(units Units, evidence string) Rule {
	return settleRule(Settlement{Units: units, Evidence: evidence})
}

func settleRule(s Settlement) Rule {
	const op = "settle"
	if err := CheckSettlement(s); err != nil {
		return refuse(op, err)
	}
	units, evidence := s.Units, s.Evidence
	return Rule{Op: op, decide: func(run Run) (Transition, error) {
		if run.Status.Ended() {
			return Transition{}, ErrEnded(run)
		}
		cost, overMicros, err := runCost(run, func() (price.Tokens, error) { return settledTokens(run, s) })
		if err != nil {
			return Transition{}, err
		}
		spent, over := SplitOverrun(run.ReserveUnits, units)
		ev := evidence
		if over > 0 {
			// The provider consumed more than was held: the tenant pays the
			// reserve; the quota day counts everything the provider reported.
			run.OverrunUnits = over
			ev = fmt.Sprintf("%s; %d above the reserve %d: the tenant is charged the reserve, the quota day counts all %d",
				evidence, over, run.ReserveUnits, units)
		}
		if overMicros > 0 {
			run.OverrunMicros = overMicros
			ev = fmt.Sprintf("%s; cost %s above the reserve's %s: the tenant is charged the reserve's",
				ev, cost+overMicros, run.ReserveMicros)
		}
		run.Status, run.Usage = RunCompleted, UsageTrusted
		run.SpentUnits, run.HeldUnits, run.CostMicros, run.Evidence = spent, 0, cost, ev
		return Transition{After: run, Kind: AuditSettle, Evidence: ev, Units: spent, Micros: cost}, nil
	}}
}

// KeepHoldRule ends a run whose usage is unknown with status; its reserve
// stays held. A cancelled run's row is a cancel, any other a hold.
func KeepHoldRule(status RunStatus, reason string) Rule {
	const op = "keep hold of"
	switch status {
	case RunCompleted, RunInterrupted, RunCancelled, RunFailed:
	default:
		return refuse(op, Errorf(CodeInvalidRequest, "a run that keeps its hold must end; %q is not an end status", status))
	}
	return Rule{Op: op, decide: func(run Run) (Transition, error) {
		if run.Status.Ended() {
			return Transition{}, ErrEnded(run)
		}
		run.Status, run.Usage, run.Evidence = status, UsageUnknown, reason
		kind := AuditHold
		if status == RunCancelled {
			kind = AuditCancel
		}
		return Transition{After: run, Kind: kind, Reason: reason, Units: run.HeldUnits, Micros: run.HeldMicros()}, nil
	}}
}

// ReleaseHoldRule ends a run the provider provably did no work for, failed
// or cancelled: spent 0, hold released, evidence recorded.
func ReleaseHoldRule(status RunStatus, evidence string) Rule {
	const op = "release hold of"
	if status != RunFailed && status != RunCancelled {
		return refuse(op, Errorf(CodeInvalidRequest, "a released run ends failed or cancelled, not %q", status))
	}
	if strings.TrimSpace(evidence) == "" {
		return refuse(op, Errorf(CodeInvalidRequest, "releasing a hold needs the evidence that the provider did no work").Because(ReasonEvidenceRequired, nil))
	}
	return Rule{Op: op, decide: func(run Run) (Transition, error) {
		if run.Status.Ended() {
			return Transition{}, ErrEnded(run)
		}
		kind := AuditRelease
		if status == RunCancelled {
			kind = AuditCancel
		}
		return release(run, status, evidence, kind), nil
	}}
}

func release(run Run, status RunStatus, evidence string, kind AuditKind) Transition {
	released, releasedMicros := run.HeldUnits, run.HeldMicros()
	run.Status, run.Usage, run.Evidence = status, UsageReleased, evidence
	run.SpentUnits, run.HeldUnits, run.CostMicros = 0, 0, 0
	return Transition{After: run, Kind: kind, Reason: "hold released", Evidence: evidence, Units: released, Micros: releasedMicros}
}

// ReconcileRule settles a held (usage unknown) run at units, 0 ≤ units ≤
// reserve, with non-empty evidence, exactly once: CodeNotHeld when the run
// holds nothing to reconcile. A priced run's units are priced as its input
// first, the rest as output (ReconcileCostRule may give the bill instead).
func ReconcileRule(units Units, evidence string) Rule {
	return ReconcileCostRule(Reconciliation{Units: units, Evidence: evidence})
}

// ReconcileCostRule is ReconcileRule with the provider's bill when
// c.HasCost: 0 ≤ c.CostMicros ≤ the run's ReserveMicros.
func ReconcileCostRule(c Reconciliation) Rule {
	const op = "reconcile"
	units, evidence := c.Units, c.Evidence
	if err := CheckUnits("reconciled units", units); err != nil {
		return refuse(op, err)
	}
	if err := CheckMicros("reconciled cost", c.CostMicros); err != nil {
		return refuse(op, err)
	}
	if strings.TrimSpace(evidence) == "" {
		return refuse(op, Errorf(CodeInvalidRequest, "reconciling a hold needs evidence (a bill, a console figure)").Because(ReasonEvidenceRequired, nil))
	}
	return Rule{Op: op, decide: func(run Run) (Transition, error) {
		if run.Usage != UsageUnknown {
			why := "its usage is " + string(run.Usage)
			if run.Usage == UsagePending {
				why = "it is still " + string(run.Status)
			}
			e := Errorf(CodeNotHeld, "run %s holds nothing to reconcile: %s", run.ID, why)
			e.Params = map[string]any{"run": run.ID, "status": run.Status, "usage": run.Usage}
			return Transition{}, e
		}
		if c.FromProvider {
			return providerReconcile(run, c)
		}
		if units > run.ReserveUnits {
			return Transition{}, Errorf(CodeInvalidRequest,
				"reconciled units %d exceed the reserve %d of run %s", units, run.ReserveUnits, run.ID).
				Because(ReasonReconcileOverReserve, map[string]any{"run": run.ID, "units": units, "reserve": run.ReserveUnits})
		}
		cost, err := reconciledCost(run, c)
		if err != nil {
			return Transition{}, err
		}
		run.Usage, run.SpentUnits, run.HeldUnits, run.Evidence = UsageReconciled, units, 0, evidence
		run.CostMicros = cost
		return Transition{After: run, Kind: AuditReconcile, Evidence: evidence, Units: units, Micros: cost}, nil
	}}
}

// providerReconcile settles held run on a provider's own figure c: at most
// the reserve is charged, the rest recorded as the run's overrun (in units
// and in money), as SettleRule does with trusted usage.
func providerReconcile(run Run, c Reconciliation) (Transition, error) {
	cost, overMicros, err := runCost(run, func() (price.Tokens, error) {
		if c.Tokens != nil {
			return *c.Tokens, nil
		}
		return unitTokens(c.Units, run.InputUnits)
	})
	if err != nil {
		return Transition{}, err
	}
	spent, over := SplitOverrun(run.ReserveUnits, c.Units)
	ev := c.Evidence
	if over > 0 {
		ev = fmt.Sprintf("%s; %d above the reserve %d: the tenant is charged the reserve, the quota day counts all %d",
			ev, over, run.ReserveUnits, c.Units)
	}
	if overMicros > 0 {
		ev = fmt.Sprintf("%s; cost %s above the reserve's %s: the tenant is charged the reserve's", ev, cost+overMicros, run.ReserveMicros)
	}
	run.Usage, run.SpentUnits, run.HeldUnits, run.Evidence = UsageReconciled, spent, 0, ev
	run.OverrunUnits, run.CostMicros, run.OverrunMicros = over, cost, overMicros
	return Transition{After: run, Kind: AuditReconcile, Evidence: ev, Units: spent, Micros: cost}, nil
}

// QueuedAtCrashEvidence is the evidence of a run released at recovery
// because it was still queued at the gate when its process ended.
const QueuedAtCrashEvidence = "queued at the crash, never sent upstream"

// RecoveryWhy is what RecoverRule's evidence says of a run its own
// gateway left active: why + the status it was in.
const RecoveryWhy = "the process ended while the run was "

// RecoverRule ends a run its gateway left open when it ended (why explains
// how, RecoveryWhy at a restart): a run left active ends interrupted with
// usage unknown, its hold intact; a run left queued never reached the
// provider (Start is committed before the request is sent), so it ends
// failed with its hold released and QueuedAtCrashEvidence. A
// run that ended meanwhile is left as it is.
func RecoverRule(why string) Rule {
	return Rule{Op: "recover", decide: func(run Run) (Transition, error) {
		switch {
		case run.Status.Ended():
			return Transition{After: run}, nil
		case run.Status == RunQueued:
			return release(run, RunFailed, QueuedAtCrashEvidence, AuditRelease), nil
		}
		evidence := why + string(run.Status)
		run.Status, run.Usage, run.Evidence = RunInterrupted, UsageUnknown, evidence
		return Transition{After: run, Kind: AuditRecover, Reason: evidence, Units: run.HeldUnits, Micros: run.HeldMicros()}, nil
	}}
}

// Transitions gives a store the Store methods that are one rule each. A
// store embeds it with Apply set to its own step: load the run, decide by
// the rule, write the transition (or nothing when Transition.None), in one
// transaction, refusing the rule's Err and an empty actor first.
type Transitions struct {
	Apply func(ctx context.Context, id RunID, actor Actor, rule Rule) (Run, error)
}

// ApplyRule applies any rule: the store's one transition step.
func (t Transitions) ApplyRule(ctx context.Context, id RunID, actor Actor, rule Rule) (Run, error) {
	return t.Apply(ctx, id, actor, rule)
}

// Start moves a queued run to active; starting an active run changes nothing.
func (t Transitions) Start(ctx context.Context, id RunID, actor Actor) (Run, error) {
	return t.Apply(ctx, id, actor, StartRule())
}

// Settle ends a run on trusted usage: spends units, releases the rest.
func (t Transitions) Settle(ctx context.Context, id RunID, units Units, evidence string, actor Actor) (Run, error) {
	return t.Apply(ctx, id, actor, SettleRule(units, evidence))
}

// KeepHold ends a run whose usage is unknown; its reserve stays held.
func (t Transitions) KeepHold(ctx context.Context, id RunID, status RunStatus, reason string, actor Actor) (Run, error) {
	return t.Apply(ctx, id, actor, KeepHoldRule(status, reason))
}

// ReleaseHold ends a run the provider provably did no work for.
func (t Transitions) ReleaseHold(ctx context.Context, id RunID, status RunStatus, evidence string, actor Actor) (Run, error) {
	return t.Apply(ctx, id, actor, ReleaseHoldRule(status, evidence))
}

// Reconcile settles a held run at units with evidence, exactly once.
func (t Transitions) Reconcile(ctx context.Context, id RunID, units Units, evidence string, actor Actor) (Run, error) {
	return t.Apply(ctx, id, actor, ReconcileRule(units, evidence))
}

// ReconcileCost is Reconcile with the provider's bill when c.HasCost.
func (t Transitions) ReconcileCost(ctx context.Context, id RunID, c Reconciliation, actor Actor) (Run, error) {
	return t.Apply(ctx, id, actor, ReconcileCostRule(c))
}
