package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quotagate/quotagate/backend/ledger"
)

// Retry-After hints for the 429 refusals of Admit, as backend/sqlite gives them.
const (
	concurrencyRetryAfter = time.Second
	quotaRetryAfter       = time.Minute
)

const runColumns = `id, tenant_id, upstream, model, quota_day, status, usage, reserve_units, spent_units,
	held_units, overrun_units, evidence, created_at, updated_at, instance,
	door, upstream_protocol, idempotency_key, retry_count, retry_of, cached_tokens`

func scanRun(r pgx.Row) (ledger.Run, error) {
	var run ledger.Run
	var id, status, usage, retryOf string
	var created, updated int64
	err := r.Scan(&id, &run.TenantID, &run.Upstream, &run.Model, &run.QuotaDay, &status, &usage,
		&run.ReserveUnits, &run.SpentUnits, &run.HeldUnits, &run.OverrunUnits, &run.Evidence, &created, &updated, &run.Instance,
		&run.Door, &run.UpstreamProtocol, &run.IdempotencyKey, &run.RetryCount, &retryOf, &run.CachedTokens)
	if err != nil {
		return run, err
	}
	run.ID, run.RetryOf = ledger.RunID(id), ledger.RunID(retryOf)
	run.Status = ledger.RunStatus(status)
	run.Usage = ledger.UsageStatus(usage)
	run.CreatedAt, run.UpdatedAt = fromNanos(created), fromNanos(updated)
	return run, nil
}

type queryRower interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func loadRun(ctx context.Context, q queryRower, id ledger.RunID) (ledger.Run, error) {
	run, err := scanRun(q.QueryRow(ctx, `SELECT `+runColumns+` FROM runs WHERE id = $1`, string(id)))
	if errors.Is(err, pgx.ErrNoRows) {
		return run, ledger.Errorf(ledger.CodeRunNotFound, "run %s not found", id)
	}
	if err != nil {
		return run, fmt.Errorf("read run %s: %w", id, err)
	}
	return run, nil
}

// Admit checks and records a run with its hold in one transaction: one
// conditional UPDATE of the tenant's row, then for a guarded model one
// conditional UPDATE of the model's day, then the run and its audit row.
// Refusal precedence as backend/sqlite: conflict (duplicate id),
// invalid_api_key (unknown tenant), insufficient_budget, concurrency_limit,
// quota_guard. A refusal rolls the transaction back and is audited in a
// second one.
func (s *Store) Admit(ctx context.Context, req ledger.AdmitRequest) (ledger.Run, error) {
	if err := validateAdmit(req); err != nil {
		return ledger.Run{}, fmt.Errorf("admit run %s: %w", req.RunID, err)
	}
	var run ledger.Run
	err := s.write(ctx, func(w *wtx) error {
		var err error
		run, err = s.admit(ctx, w, req)
		return err
	})
	if isRunsKey(err) {
		err = runExists(req.RunID)
	}
	var domain *ledger.Error
	if errors.As(err, &domain) {
		if aerr := s.write(ctx, func(w *wtx) error { return auditReject(ctx, w, req, err) }); aerr != nil {
			err = fmt.Errorf("audit refusal %v: %w", err, aerr)
		}
	}
	if err != nil {
		return ledger.Run{}, fmt.Errorf("admit run %s: %w", req.RunID, err)
	}
	return run, nil
}

func validateAdmit(req ledger.AdmitRequest) error {
	if strings.TrimSpace(string(req.RunID)) == "" {
		return ledger.Errorf(ledger.CodeInvalidRequest, "a run needs an id")
	}
	if req.TenantID == "" {
		return ledger.Errorf(ledger.CodeInvalidAPIKey, "a run needs a tenant")
	}
	if err := ledger.CheckUnits("reserve", req.ReserveUnits); err != nil {
		return err
	}
	if err := ledger.CheckRunFacts(req); err != nil {
		return err
	}
	if q := req.Quota; q != nil {
		if q.Day == "" {
			return ledger.Errorf(ledger.CodeInvalidRequest, "a quota check needs a day")
		}
		if err := ledger.CheckUnits("quota limit", q.LimitUnits); err != nil {
			return err
		}
	}
	return nil
}

func runExists(id ledger.RunID) error {
	return ledger.Errorf(ledger.CodeConflict, "run %s already exists", id)
}

func (s *Store) admit(ctx context.Context, w *wtx, req ledger.AdmitRequest) (ledger.Run, error) {
	// A duplicate id is refused first, as SQLite does; one admitted
	// meanwhile by another transaction is caught by the run insert's primary
	// key when the queued statements run (the transaction rolls back whole).
	var exists bool
	if err := w.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM runs WHERE id = $1)`, string(req.RunID)).Scan(&exists); err != nil {
		return ledger.Run{}, fmt.Errorf("look up run: %w", err)
	}
	if exists {
		return ledger.Run{}, runExists(req.RunID)
	}
	retryOf, err := retryGroup(ctx, w, req)
	if err != nil {
		return ledger.Run{}, err
	}
	r := req.ReserveUnits
	// Under READ COMMITTED an UPDATE that finds the row locked waits for the
	// other transaction, then re-checks its WHERE against the row as that
	// transaction committed it: the condition is always tested on the
	// latest balance, and the row lock serialises every admission and
	// transition of one tenant.
	var b balanceRow
	err = w.QueryRow(ctx, `UPDATE tenants SET held_units = held_units + $1, active = active + 1
		WHERE id = $2 AND budget_units - spent_units - held_units >= $1 AND active < max_concurrent
		RETURNING budget_units, spent_units, held_units, active, max_concurrent`,
		int64(r), req.TenantID).Scan(&b.budget, &b.spent, &b.held, &b.active, &b.maxConc)
	if errors.Is(err, pgx.ErrNoRows) {
		return ledger.Run{}, admitRefusal(ctx, w, req)
	}
	if err != nil {
		return ledger.Run{}, fmt.Errorf("take hold: %w", err)
	}
	day := ""
	if q := req.Quota; q != nil {
		day = q.Day
		if _, err := w.Exec(ctx, `INSERT INTO quota_days (upstream, model, day) VALUES ($1, $2, $3)
			ON CONFLICT DO NOTHING`, req.Upstream, req.Model, day); err != nil {
			return ledger.Run{}, fmt.Errorf("quota day: %w", err)
		}
		tag, err := w.Exec(ctx, `UPDATE quota_days SET held_units = held_units + $1
			WHERE upstream = $2 AND model = $3 AND day = $4 AND usage_units + held_units + $1 <= $5`,
			int64(r), req.Upstream, req.Model, day, int64(q.LimitUnits))
		if err != nil {
			return ledger.Run{}, fmt.Errorf("quota hold: %w", err)
		}
		if tag.RowsAffected() == 0 {
			var usage, held ledger.Units
			if err := w.QueryRow(ctx, `SELECT usage_units, held_units FROM quota_days
				WHERE upstream = $1 AND model = $2 AND day = $3`,
				req.Upstream, req.Model, day).Scan(&usage, &held); err != nil {
				return ledger.Run{}, fmt.Errorf("quota day: %w", err)
			}
			e := ledger.Errorf(ledger.CodeQuotaGuard,
				"model %s on %s is at its daily quota guard: used %d + held %d + reserve %d > limit %d for %s",
				req.Model, req.Upstream, usage, held, r, q.LimitUnits, day)
			e.RetryAfter = quotaRetryAfter
			return ledger.Run{}, e
		}
	}
	status := ledger.RunActive
	if req.Queued {
		status = ledger.RunQueued
	}
	run := ledger.Run{
		ID: req.RunID, TenantID: req.TenantID, Upstream: req.Upstream, Model: req.Model, QuotaDay: day,
		Status: status, Usage: ledger.UsagePending, ReserveUnits: r, HeldUnits: r,
		Instance: s.opts.Instance, CreatedAt: w.now, UpdatedAt: w.now,
		Door: req.Door, UpstreamProtocol: req.UpstreamProtocol, IdempotencyKey: req.IdempotencyKey,
		RetryCount: req.RetryCount, RetryOf: retryOf,
	}
	w.queue(`INSERT INTO runs (`+runColumns+`, fingerprint)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22)`,
		string(run.ID), run.TenantID, run.Upstream, run.Model, run.QuotaDay, string(run.Status), string(run.Usage),
		int64(run.ReserveUnits), int64(run.SpentUnits), int64(run.HeldUnits), int64(run.OverrunUnits), run.Evidence,
		nanos(run.CreatedAt), nanos(run.UpdatedAt), run.Instance,
		run.Door, run.UpstreamProtocol, run.IdempotencyKey, run.RetryCount, string(run.RetryOf), run.CachedTokens,
		req.Fingerprint)
	after := b.available()
	s.insertRunAudit(w, ledger.AuditEntry{Kind: ledger.AuditAdmit, TenantID: run.TenantID, RunID: run.ID,
		Actor: string(req.Actor), Units: r, AvailableBefore: after + r, AvailableAfter: after,
		Detail: runDetail(run)}, run)
	return run, nil
}

func runDetail(run ledger.Run) string {
	d := run.Upstream + "/" + run.Model
	if run.QuotaDay != "" {
		d += " day=" + run.QuotaDay
	}
	if run.Status == ledger.RunQueued {
		d += " queued"
	}
	return d + ledger.RunFacts(run)
}

// retryGroup decides req's place among the tenant's earlier runs: a
// CodeDuplicateRequest refusal when its Idempotency-Key is in use, else the
// run it retries ("" for none); see ledger.AdmitRequest. For a key it first
// locks the tenant's row, which every admission of the tenant takes: a
// concurrent admission with the same key has committed its run (or rolled
// back) when the lock is granted, and under READ COMMITTED the next
// statement sees it — of two calls with one key, exactly one is admitted.
func retryGroup(ctx context.Context, w *wtx, req ledger.AdmitRequest) (ledger.RunID, error) {
	since := nanos(w.now.Add(-ledger.IdempotencyWindow))
	switch {
	case req.IdempotencyKey != "":
		if _, ok, err := readBalance(ctx, w, req.TenantID, true); err != nil || !ok {
			return "", err // an unknown tenant is refused next, as without a key
		}
		rows, err := w.Query(ctx, `SELECT id, usage, status, created_at FROM runs
			WHERE tenant_id = $1 AND idempotency_key = $2 AND created_at >= $3 ORDER BY created_at DESC, seq DESC`,
			req.TenantID, req.IdempotencyKey, since)
		if err != nil {
			return "", fmt.Errorf("look up idempotency key: %w", err)
		}
		defer rows.Close()
		var earlier []ledger.KeyedRun
		for rows.Next() {
			var k ledger.KeyedRun
			var id, usage, status string
			var at int64
			if err := rows.Scan(&id, &usage, &status, &at); err != nil {
				return "", fmt.Errorf("look up idempotency key: %w", err)
			}
			k.ID, k.Usage, k.Status, k.CreatedAt = ledger.RunID(id), ledger.UsageStatus(usage), ledger.RunStatus(status), fromNanos(at)
			earlier = append(earlier, k)
		}
		if err := rows.Err(); err != nil {
			return "", fmt.Errorf("look up idempotency key: %w", err)
		}
		return ledger.KeyedRetry(req, earlier)
	case req.Fingerprint != "" && req.RetryCount > 0:
		var id string
		err := w.QueryRow(ctx, `SELECT id FROM runs WHERE tenant_id = $1 AND fingerprint = $2 AND created_at >= $3
			AND retry_count = $4 ORDER BY created_at DESC, seq DESC LIMIT 1`,
			req.TenantID, req.Fingerprint, since, req.RetryCount-1).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			return "", nil
		}
		if err != nil {
			return "", fmt.Errorf("look up the attempt retried: %w", err)
		}
		return ledger.RunID(id), nil
	}
	return "", nil
}

// admitRefusal explains why the conditional UPDATE matched no row.
func admitRefusal(ctx context.Context, w *wtx, req ledger.AdmitRequest) error {
	b, ok, err := readBalance(ctx, w, req.TenantID, false)
	if err != nil {
		return err
	}
	if !ok {
		return ledger.Errorf(ledger.CodeInvalidAPIKey, "unknown tenant %q", req.TenantID)
	}
	if b.available() < req.ReserveUnits {
		return ledger.Errorf(ledger.CodeInsufficientBudget,
			"this call needs %d units but only %d of the budget of %d are available (%d spent, %d held)",
			req.ReserveUnits, b.available(), b.budget, b.spent, b.held)
	}
	e := ledger.Errorf(ledger.CodeConcurrencyLimit, "%d of %d concurrent runs are in use", b.active, b.maxConc)
	e.RetryAfter = concurrencyRetryAfter
	return e
}

// auditReject records a refusal. It locks the tenant's row so that the
// row's available figures sit at their place in the tenant's audit chain.
func auditReject(ctx context.Context, w *wtx, req ledger.AdmitRequest, refusal error) error {
	b, ok, err := readBalance(ctx, w, req.TenantID, true)
	if err != nil {
		return err
	}
	e := ledger.AuditEntry{Kind: ledger.AuditReject, TenantID: req.TenantID, RunID: req.RunID, Actor: string(req.Actor),
		Reason: ledger.ErrorCode(refusal), Units: req.ReserveUnits,
		Detail: req.Upstream + "/" + req.Model + ": " + ledger.ErrorMessage(refusal)}
	if ok {
		e.AvailableBefore, e.AvailableAfter = b.available(), b.available()
	}
	if counted, err := countRefusal(ctx, w, e); counted || err != nil {
		return err
	}
	insertAuditIn(w, e, ok, "")
	return nil
}

// change is one transition of a run, applied by applyChange.
type change struct {
	kind     ledger.AuditKind
	actor    string
	reason   string
	evidence string
	units    ledger.Units // for the audit row
}

// errMoved says the run was no longer in the state the transition was
// decided on: another transaction (this gateway's or another's) changed it
// first.
var errMoved = errors.New("run changed meanwhile")

// applyChange moves a run from before to after — only if it is still in
// before's state — then moves the same deltas on the tenant's balance row
// and the model's quota day, and audits it. Rows are locked in one order by
// every transaction: the run, then its tenant, then the quota day (an
// admission, which has no run row yet, locks tenant then quota day), so no
// two transactions wait on each other in a cycle.
func (s *Store) applyChange(ctx context.Context, w *wtx, before, after ledger.Run, c change) error {
	tag, err := w.Exec(ctx, `UPDATE runs SET status = $1, usage = $2, spent_units = $3, held_units = $4,
		overrun_units = $5, evidence = $6, updated_at = $7, cached_tokens = $12
		WHERE id = $8 AND status = $9 AND usage = $10 AND spent_units = $11`,
		string(after.Status), string(after.Usage), int64(after.SpentUnits), int64(after.HeldUnits),
		int64(after.OverrunUnits), after.Evidence, nanos(w.now),
		string(before.ID), string(before.Status), string(before.Usage), int64(before.SpentUnits), after.CachedTokens)
	if err != nil {
		return fmt.Errorf("update run: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return errMoved
	}
	dSpent := after.SpentUnits - before.SpentUnits
	dHeld := after.HeldUnits - before.HeldUnits
	dUsed := dSpent + after.OverrunUnits - before.OverrunUnits
	dActive := 0
	if !before.Status.Ended() && after.Status.Ended() {
		dActive = -1
	}
	var b balanceRow
	if err := w.QueryRow(ctx, `UPDATE tenants SET spent_units = spent_units + $1, held_units = held_units + $2,
		active = active + $3 WHERE id = $4 RETURNING budget_units, spent_units, held_units, active, max_concurrent`,
		int64(dSpent), int64(dHeld), dActive, before.TenantID).Scan(&b.budget, &b.spent, &b.held, &b.active, &b.maxConc); err != nil {
		return fmt.Errorf("move balance of tenant %s: %w", before.TenantID, err)
	}
	if before.QuotaDay != "" && (dUsed != 0 || dHeld != 0) {
		w.queue(`UPDATE quota_days SET usage_units = usage_units + $1, held_units = held_units + $2
			WHERE upstream = $3 AND model = $4 AND day = $5`, int64(dUsed), int64(dHeld),
			before.Upstream, before.Model, before.QuotaDay)
		if dUsed > 0 {
			minute := w.now.Truncate(time.Minute).Unix()
			w.queue(`INSERT INTO usage_minutes (upstream, model, minute, units) VALUES ($1, $2, $3, $4)
				ON CONFLICT (upstream, model, minute) DO UPDATE SET units = usage_minutes.units + excluded.units`,
				before.Upstream, before.Model, minute, int64(dUsed))
		}
	}
	availAfter := b.available()
	s.insertRunAudit(w, ledger.AuditEntry{Kind: c.kind, TenantID: before.TenantID, RunID: before.ID,
		Actor: c.actor, Reason: c.reason, Evidence: c.evidence, Units: c.units,
		AvailableBefore: availAfter + dSpent + dHeld, AvailableAfter: availAfter,
		Detail: fmt.Sprintf("%s/%s → %s/%s", before.Status, before.Usage, after.Status, after.Usage)}, after)
	return nil
}

// transition loads a run, lets decide compute its next state, and applies
// it if the run is still as loaded; otherwise it decides again on the state
// another transaction left (which then usually refuses: run_ended, not_held).
func (s *Store) transition(ctx context.Context, op string, id ledger.RunID, actor ledger.Actor,
	decide func(run ledger.Run) (ledger.Run, change, error)) (ledger.Run, error) {
	if err := ledger.CheckActor(actor); err != nil {
		return ledger.Run{}, fmt.Errorf("%s run %s: %w", op, id, err)
	}
	var out ledger.Run
	err := s.write(ctx, func(w *wtx) error {
		for {
			before, err := loadRun(ctx, w, id)
			if err != nil {
				return err
			}
			after, c, err := decide(before)
			if err != nil {
				return err
			}
			if after == before {
				out = before // nothing to do (idempotent Start)
				return nil
			}
			after.UpdatedAt = w.now
			if c.actor == "" {
				c.actor = string(actor)
			}
			err = s.applyChange(ctx, w, before, after, c)
			if errors.Is(err, errMoved) {
				continue
			}
			if err != nil {
				return err
			}
			out = after
			return nil
		}
	})
	if err != nil {
		return ledger.Run{}, fmt.Errorf("%s run %s: %w", op, id, err)
	}
	return out, nil
}

func ended(run ledger.Run) error {
	return ledger.Errorf(ledger.CodeRunEnded, "run %s already ended (%s, usage %s)", run.ID, run.Status, run.Usage)
}

// Start moves a queued run to active; starting an active run changes nothing.
func (s *Store) Start(ctx context.Context, id ledger.RunID, actor ledger.Actor) (ledger.Run, error) {
	return s.transition(ctx, "start", id, actor, func(run ledger.Run) (ledger.Run, change, error) {
		switch {
		case run.Status.Ended():
			return run, change{}, ended(run)
		case run.Status == ledger.RunActive:
			return run, change{}, nil
		}
		run.Status = ledger.RunActive
		return run, change{kind: ledger.AuditStart}, nil
	})
}

// Settle ends a run on trusted usage: spends units, releases the rest.
func (s *Store) Settle(ctx context.Context, id ledger.RunID, units ledger.Units, evidence string, actor ledger.Actor) (ledger.Run, error) {
	return s.SettleUsage(ctx, id, ledger.Settlement{Units: units, Evidence: evidence}, actor)
}

// SettleUsage is Settle recording the usage's cached tokens on the run too.
func (s *Store) SettleUsage(ctx context.Context, id ledger.RunID, st ledger.Settlement, actor ledger.Actor) (ledger.Run, error) {
	if err := ledger.CheckSettlement(st); err != nil {
		return ledger.Run{}, fmt.Errorf("settle run %s: %w", id, err)
	}
	units, evidence := st.Units, st.Evidence
	return s.transition(ctx, "settle", id, actor, func(run ledger.Run) (ledger.Run, change, error) {
		if run.Status.Ended() {
			return run, change{}, ended(run)
		}
		spent := min(units, run.ReserveUnits)
		ev := evidence
		if over := units - spent; over > 0 {
			run.OverrunUnits = over
			ev = fmt.Sprintf("%s; %d above the reserve %d: the tenant is charged the reserve, the quota day counts all %d",
				evidence, over, run.ReserveUnits, units)
		}
		run.Status, run.Usage = ledger.RunCompleted, ledger.UsageTrusted
		run.SpentUnits, run.HeldUnits, run.Evidence = spent, 0, ev
		run.CachedTokens = st.CachedTokens
		return run, change{kind: ledger.AuditSettle, evidence: ev, units: spent}, nil
	})
}

// KeepHold ends a run whose usage is unknown; its reserve stays held.
func (s *Store) KeepHold(ctx context.Context, id ledger.RunID, status ledger.RunStatus, reason string, actor ledger.Actor) (ledger.Run, error) {
	switch status {
	case ledger.RunCompleted, ledger.RunInterrupted, ledger.RunCancelled, ledger.RunFailed:
	default:
		return ledger.Run{}, fmt.Errorf("keep hold of run %s: %w", id,
			ledger.Errorf(ledger.CodeInvalidRequest, "a run that keeps its hold must end; %q is not an end status", status))
	}
	return s.transition(ctx, "keep hold of", id, actor, func(run ledger.Run) (ledger.Run, change, error) {
		if run.Status.Ended() {
			return run, change{}, ended(run)
		}
		run.Status, run.Usage, run.Evidence = status, ledger.UsageUnknown, reason
		kind := ledger.AuditHold
		if status == ledger.RunCancelled {
			kind = ledger.AuditCancel
		}
		return run, change{kind: kind, reason: reason, units: run.HeldUnits}, nil
	})
}

// ReleaseHold ends a run the provider provably did no work for.
func (s *Store) ReleaseHold(ctx context.Context, id ledger.RunID, status ledger.RunStatus, evidence string, actor ledger.Actor) (ledger.Run, error) {
	if status != ledger.RunFailed && status != ledger.RunCancelled {
		return ledger.Run{}, fmt.Errorf("release hold of run %s: %w", id,
			ledger.Errorf(ledger.CodeInvalidRequest, "a released run ends failed or cancelled, not %q", status))
	}
	if strings.TrimSpace(evidence) == "" {
		return ledger.Run{}, fmt.Errorf("release hold of run %s: %w", id,
			ledger.Errorf(ledger.CodeInvalidRequest, "releasing a hold needs the evidence that the provider did no work"))
	}
	return s.transition(ctx, "release hold of", id, actor, func(run ledger.Run) (ledger.Run, change, error) {
		if run.Status.Ended() {
			return run, change{}, ended(run)
		}
		released := run.HeldUnits
		run.Status, run.Usage, run.Evidence = status, ledger.UsageReleased, evidence
		run.SpentUnits, run.HeldUnits = 0, 0
		kind := ledger.AuditRelease
		if status == ledger.RunCancelled {
			kind = ledger.AuditCancel
		}
		return run, change{kind: kind, evidence: evidence, units: released, reason: "hold released"}, nil
	})
}

// Reconcile settles a held run at units with evidence, exactly once.
func (s *Store) Reconcile(ctx context.Context, id ledger.RunID, units ledger.Units, evidence string, actor ledger.Actor) (ledger.Run, error) {
	if err := ledger.CheckUnits("reconciled units", units); err != nil {
		return ledger.Run{}, fmt.Errorf("reconcile run %s: %w", id, err)
	}
	if strings.TrimSpace(evidence) == "" {
		return ledger.Run{}, fmt.Errorf("reconcile run %s: %w", id,
			ledger.Errorf(ledger.CodeInvalidRequest, "reconciling a hold needs evidence (a bill, a console figure)"))
	}
	return s.transition(ctx, "reconcile", id, actor, func(run ledger.Run) (ledger.Run, change, error) {
		if run.Usage != ledger.UsageUnknown {
			why := "its usage is " + string(run.Usage)
			if run.Usage == ledger.UsagePending {
				why = "it is still " + string(run.Status)
			}
			return run, change{}, ledger.Errorf(ledger.CodeNotHeld, "run %s holds nothing to reconcile: %s", run.ID, why)
		}
		if units > run.ReserveUnits {
			return run, change{}, ledger.Errorf(ledger.CodeInvalidRequest,
				"reconciled units %d exceed the reserve %d of run %s", units, run.ReserveUnits, run.ID)
		}
		run.Usage, run.SpentUnits, run.HeldUnits, run.Evidence = ledger.UsageReconciled, units, 0, evidence
		return run, change{kind: ledger.AuditReconcile, actor: string(actor), evidence: evidence, units: units}, nil
	})
}

// QueuedAtCrashEvidence is the evidence of a run released because it was
// still queued at the gate when its gateway ended (as backend/sqlite's).
const QueuedAtCrashEvidence = "queued at the crash, never sent upstream"

// RecoverInterrupted ends the runs this instance left open (a previous life
// of the same instance name), as backend/sqlite does: an active run ends
// interrupted with usage unknown, its hold intact; a queued run never
// reached the provider (Start commits before the request is sent), so it
// ends failed with its hold released and that evidence. Other instances'
// runs are theirs: a dead instance's runs are ended by ReapExpired once its
// lease expired.
func (s *Store) RecoverInterrupted(ctx context.Context, actor ledger.Actor) (int, error) {
	if err := ledger.CheckActor(actor); err != nil {
		return 0, fmt.Errorf("recover interrupted runs: %w", err)
	}
	n, err := s.interruptOpen(ctx, s.opts.Instance, string(actor), "the process ended while the run was ")
	if err != nil {
		return n, fmt.Errorf("recover interrupted runs: %w", err)
	}
	return n, nil
}

// interruptOpen ends instance's open runs as RecoverInterrupted does, each
// in its own transaction (a run locked before its tenant, as every
// transition).
func (s *Store) interruptOpen(ctx context.Context, instance, actor, why string) (int, error) {
	rows, err := s.pool.Query(ctx, `SELECT id FROM runs WHERE instance = $1 AND status IN ('queued', 'active')
		ORDER BY created_at, id`, instance)
	if err != nil {
		return 0, fmt.Errorf("list open runs: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return 0, fmt.Errorf("list open runs: %w", err)
	}
	n := 0
	for _, id := range ids {
		did := false
		_, err := s.transition(ctx, "interrupt", ledger.RunID(id), ledger.Actor(actor), func(run ledger.Run) (ledger.Run, change, error) {
			did = false
			if run.Status.Ended() {
				return run, change{}, nil // ended meanwhile by its own transition
			}
			did = true
			if run.Status == ledger.RunQueued {
				released := run.HeldUnits
				run.Status, run.Usage, run.Evidence = ledger.RunFailed, ledger.UsageReleased, QueuedAtCrashEvidence
				run.SpentUnits, run.HeldUnits = 0, 0
				return run, change{kind: ledger.AuditRelease, actor: actor, reason: "hold released",
					evidence: run.Evidence, units: released}, nil
			}
			evidence := why + string(run.Status)
			run.Status, run.Usage, run.Evidence = ledger.RunInterrupted, ledger.UsageUnknown, evidence
			return run, change{kind: ledger.AuditRecover, actor: actor, reason: evidence, units: run.HeldUnits}, nil
		})
		if err != nil {
			return n, err
		}
		if did {
			n++
		}
	}
	return n, nil
}

// Run returns one run.
func (s *Store) Run(ctx context.Context, id ledger.RunID) (ledger.Run, error) {
	return loadRun(ctx, s.pool, id)
}

// DefaultRunsLimit is how many runs Runs returns when the filter sets no limit.
const DefaultRunsLimit = 100

// Runs lists runs newest first.
func (s *Store) Runs(ctx context.Context, f ledger.RunFilter) ([]ledger.Run, error) {
	var where []string
	var args []any
	if f.TenantID != "" {
		args = append(args, f.TenantID)
		where = append(where, fmt.Sprintf("tenant_id = $%d", len(args)))
	}
	if f.HoldingOnly {
		where = append(where, "usage IN ('pending', 'unknown')")
	}
	q := `SELECT ` + runColumns + ` FROM runs`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	limit := f.Limit
	if limit <= 0 {
		limit = DefaultRunsLimit
	}
	args = append(args, limit)
	q += fmt.Sprintf(" ORDER BY created_at DESC, seq DESC LIMIT $%d", len(args))
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.Run, error) { return scanRun(r) })
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	return out, nil
}
