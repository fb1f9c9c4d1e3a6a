package ledger

import (
	"strings"
	"time"

	"github.com/quotagate/quotagate/backend/period"
	"github.com/quotagate/quotagate/backend/price"
)

// Retry-After hints of Admit's 429 refusals; the gateway may refine them.
const (
	ConcurrencyRetryAfter = time.Second
	QuotaRetryAfter       = time.Minute
)

// Position is a tenant's balance row as a store's transaction reads it:
// the balance figures and the concurrency limit Admit checks.
type Position struct {
	BudgetUnits, SpentUnits, HeldUnits Units
	Active, MaxConcurrent              int
	// Money, checked only when HasMoneyBudget.
	BudgetMicros, SpentMicros, HeldMicros price.Micros
	HasMoneyBudget                        bool
	// Calendar is the tenant's, which cuts its budget into periods; Period
	// the label of the period whose books the figures are ("" for the
	// tenant's row: runs admitted without a period).
	Calendar period.Calendar
	Period   string
}

// Available is budget − spent − held.
func (p Position) Available() Units { return p.BudgetUnits - p.SpentUnits - p.HeldUnits }

// Validated returns req with its actor filled in ("" is the tenant itself),
// or refuses a request no store should look at: no run id, no tenant, a
// reserve or quota limit out of range, a quota check without a day.
func (req AdmitRequest) Validated() (AdmitRequest, error) {
	if err := req.validate(); err != nil {
		return req, err
	}
	if req.Actor.IsZero() {
		req.Actor = TenantActor(req.TenantID)
	}
	return req, nil
}

func (req AdmitRequest) validate() error {
	if strings.TrimSpace(string(req.RunID)) == "" {
		return Errorf(CodeInvalidRequest, "a run needs an id")
	}
	if req.TenantID == "" {
		return Errorf(CodeInvalidAPIKey, "a run needs a tenant")
	}
	if err := CheckUnits("reserve", req.ReserveUnits); err != nil {
		return err
	}
	if err := CheckUnits("counted input", req.InputUnits); err != nil {
		return err
	}
	if err := CheckMicros("reserve", req.ReserveMicros); err != nil {
		return err
	}
	if err := CheckRunFacts(req); err != nil {
		return err
	}
	if q := req.Quota; q != nil {
		if q.Day == "" {
			return Errorf(CodeInvalidRequest, "a quota check needs a day")
		}
		if err := CheckUnits("quota limit", q.LimitUnits); err != nil {
			return err
		}
	}
	return nil
}

// ErrRunExists refuses a second admission with a run id already used.
func ErrRunExists(id RunID) error { return Errorf(CodeConflict, "run %s already exists", id) }

// ErrUnknownTenant refuses an admission for a tenant the ledger does not know.
func ErrUnknownTenant(id string) error { return Errorf(CodeInvalidAPIKey, "unknown tenant %q", id) }

// AdmitRefusal says why the tenant at p (known: its row exists) cannot take
// req — unknown tenant, then an unpriced model for a money budget, then
// insufficient budget (units, then money), then the concurrency limit — or
// nil when it can.
func AdmitRefusal(p Position, known bool, req AdmitRequest) error {
	if !known {
		return ErrUnknownTenant(req.TenantID)
	}
	if p.HasMoneyBudget && req.Prices == nil {
		return ErrModelUnpriced(req)
	}
	if p.Available() < req.ReserveUnits {
		return Errorf(CodeInsufficientBudget,
			"this call needs %d units but only %d of the budget of %d are available (%d spent, %d held)",
			req.ReserveUnits, p.Available(), p.BudgetUnits, p.SpentUnits, p.HeldUnits)
	}
	if err := moneyRefusal(p, req); err != nil {
		return err
	}
	if p.Active >= p.MaxConcurrent {
		return ErrConcurrency(p)
	}
	return nil
}

// ErrConcurrency refuses an admission at the tenant's concurrency limit.
func ErrConcurrency(p Position) error {
	e := Errorf(CodeConcurrencyLimit, "%d of %d concurrent runs are in use", p.Active, p.MaxConcurrent)
	e.RetryAfter = ConcurrencyRetryAfter
	return e
}

// QuotaRefusal says why the guarded model's day, at usage settled and held
// in flight, cannot take req's reserve under req.Quota, or nil.
func QuotaRefusal(req AdmitRequest, usage, held Units) error {
	if q := req.Quota; q == nil || usage+held+req.ReserveUnits <= q.LimitUnits {
		return nil
	}
	return ErrQuotaGuard(req, usage, held)
}

// ErrQuotaGuard refuses req at its model's daily quota guard, which stood
// at usage and held when it refused.
func ErrQuotaGuard(req AdmitRequest, usage, held Units) error {
	var limit Units
	var day string
	if q := req.Quota; q != nil {
		limit, day = q.LimitUnits, q.Day
	}
	e := Errorf(CodeQuotaGuard,
		"model %s on %s is at its daily quota guard: used %d + held %d + reserve %d > limit %d for %s",
		req.Model, req.Upstream, usage, held, req.ReserveUnits, limit, day)
	e.RetryAfter = QuotaRetryAfter
	return e
}

// AdmittedRun is the run an accepted req starts, at now, relayed by
// instance ("" on a gateway's own ledger): queued or active, usage pending,
// its whole reserve held.
func AdmittedRun(req AdmitRequest, instance string, now time.Time) Run {
	return AdmittedRunIn(req, instance, now, "")
}

// AdmittedRunIn is AdmittedRun for a run that belongs to budget period
// label ("" for none): its hold, settlement and reconcile stay there.
func AdmittedRunIn(req AdmitRequest, instance string, now time.Time, label string) Run {
	status := RunActive
	if req.Queued {
		status = RunQueued
	}
	day := ""
	if req.Quota != nil {
		day = req.Quota.Day
	}
	return Run{
		ID: req.RunID, TenantID: req.TenantID, Upstream: req.Upstream, Model: req.Model, QuotaDay: day,
		Status: status, Usage: UsagePending, ReserveUnits: req.ReserveUnits, HeldUnits: req.ReserveUnits,
		InputUnits: req.InputUnits, ReserveMicros: req.ReserveMicros, Prices: req.Prices,
		Instance: instance, CreatedAt: now, UpdatedAt: now,
		Door: req.Door, UpstreamProtocol: req.UpstreamProtocol, IdempotencyKey: req.IdempotencyKey,
		RetryCount: req.RetryCount, Period: label,
		Attempts: max(1, req.Attempt), FailoverOf: req.FailoverOf,
	}
}

// AdmitAudit is the audit row of run's admission by actor, given the
// tenant's available units after the hold was taken.
func AdmitAudit(run Run, actor Actor, availableAfter Units) AuditEntry {
	d := run.Upstream + "/" + run.Model
	if run.QuotaDay != "" {
		d += " day=" + run.QuotaDay
	}
	if run.Status == RunQueued {
		d += " queued"
	}
	return AuditEntry{Kind: AuditAdmit, TenantID: run.TenantID, RunID: run.ID, Actor: actor, Period: run.Period,
		Units: run.ReserveUnits, Micros: run.ReserveMicros, AvailableBefore: availableAfter + run.ReserveUnits, AvailableAfter: availableAfter,
		Detail: d + RunFacts(run)}
}

// RejectChange is c, the change of req's refusal row (new or counted), as
// the commit hook is told it: a refused run never existed, so it names no
// run, but it names the model that refused and its quota day.
func RejectChange(c Change, req AdmitRequest) Change {
	c.RunID, c.Status, c.Usage = "", "", ""
	c.Upstream, c.Model, c.Day = req.Upstream, req.Model, ""
	if req.Quota != nil {
		c.Day = req.Quota.Day
	}
	return c
}

// RejectAudit is the audit row of req's refusal, given the tenant's
// position (known: the tenant exists; a refusal moves nothing, so its
// available figures are the position's). It moves a balance only when known.
func RejectAudit(req AdmitRequest, refusal error, p Position, known bool) AuditEntry {
	e := AuditEntry{Kind: AuditReject, TenantID: req.TenantID, RunID: req.RunID, Actor: req.Actor,
		Reason: ErrorCode(refusal), Units: req.ReserveUnits, Micros: req.ReserveMicros,
		Detail: req.Upstream + "/" + req.Model + ": " + ErrorMessage(refusal)}
	if known {
		e.AvailableBefore, e.AvailableAfter = p.Available(), p.Available()
		e.Period = p.Period
	}
	return e
}
