package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
)

// Retry-After hints for the 429 refusals of Admit; the gateway may refine them.
const (
	concurrencyRetryAfter = time.Second
	quotaRetryAfter       = time.Minute
)

const runColumns = `id, tenant_id, upstream, model, quota_day, status, usage, reserve_units, spent_units,
	held_units, overrun_units, evidence, created_at, updated_at,
	door, upstream_protocol, idempotency_key, retry_count, retry_of, cached_tokens`

type rowScanner interface{ Scan(dest ...any) error }

func scanRun(r rowScanner) (ledger.Run, error) {
	var run ledger.Run
	var id, status, usage, retryOf string
	var created, updated int64
	err := r.Scan(&id, &run.TenantID, &run.Upstream, &run.Model, &run.QuotaDay, &status, &usage,
		&run.ReserveUnits, &run.SpentUnits, &run.HeldUnits, &run.OverrunUnits, &run.Evidence, &created, &updated,
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

func loadRun(ctx context.Context, w *wtx, id ledger.RunID) (ledger.Run, error) {
	run, err := scanRun(w.queryRow(ctx, `SELECT `+runColumns+` FROM runs WHERE id = ?`, string(id)))
	if errors.Is(err, sql.ErrNoRows) {
		return run, ledger.Errorf(ledger.CodeRunNotFound, "run %s not found", id)
	}
	if err != nil {
		return run, fmt.Errorf("read run %s: %w", id, err)
	}
	return run, nil
}

// Admit checks and records a run with its hold in one conditional step.
// Refusal precedence: conflict (duplicate id), invalid_api_key (unknown
// tenant), insufficient_budget, concurrency_limit, quota_guard.
func (s *Store) Admit(ctx context.Context, req ledger.AdmitRequest) (ledger.Run, error) {
	if err := validateAdmit(req); err != nil {
		return ledger.Run{}, fmt.Errorf("admit run %s: %w", req.RunID, err)
	}
	if req.Actor == "" {
		req.Actor = ledger.TenantActor(req.TenantID)
	}
	var run ledger.Run
	err := s.writeDecided(ctx,
		func(w *wtx) error {
			var err error
			run, err = admit(ctx, w, req)
			return err
		},
		func(w *wtx, refusal error) error { return auditReject(ctx, w, req, refusal) })
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

// admit decides from what it reads (the run id, the tenant's balance row,
// the quota day) before it writes anything, so that a refusal leaves nothing
// to roll back and the op needs no savepoint; the writer goroutine is the
// only writer, so nothing moves between the reads and the writes.
func admit(ctx context.Context, w *wtx, req ledger.AdmitRequest) (ledger.Run, error) {
	var exists int
	err := w.queryRow(ctx, `SELECT count(*) FROM runs WHERE id = ?`, string(req.RunID)).Scan(&exists)
	if err != nil {
		return ledger.Run{}, fmt.Errorf("look up run: %w", err)
	}
	if exists > 0 {
		return ledger.Run{}, ledger.Errorf(ledger.CodeConflict, "run %s already exists", req.RunID)
	}
	r := req.ReserveUnits
	b, ok, err := readBalance(ctx, w, req.TenantID)
	if err != nil {
		return ledger.Run{}, err
	}
	var retryOf ledger.RunID
	if ok {
		// The writer is the only writer: no run with this key can appear
		// between this read and the insert below (nor in this batch unseen).
		if retryOf, err = retryGroup(ctx, w, req); err != nil {
			return ledger.Run{}, err
		}
	}
	if err := admitRefusal(b, ok, req); err != nil {
		return ledger.Run{}, err
	}
	day := ""
	if q := req.Quota; q != nil {
		day = q.Day
		var usage, held ledger.Units
		err := w.queryRow(ctx, `SELECT usage_units, held_units FROM quota_days WHERE upstream = ? AND model = ? AND day = ?`,
			req.Upstream, req.Model, day).Scan(&usage, &held)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return ledger.Run{}, fmt.Errorf("quota day: %w", err)
		}
		if usage+held+r > q.LimitUnits {
			e := ledger.Errorf(ledger.CodeQuotaGuard,
				"model %s on %s is at its daily quota guard: used %d + held %d + reserve %d > limit %d for %s",
				req.Model, req.Upstream, usage, held, r, q.LimitUnits, day)
			e.RetryAfter = quotaRetryAfter
			return ledger.Run{}, e
		}
	}
	if _, err := w.exec(ctx, `UPDATE tenants SET held_units = held_units + ?, active = active + 1 WHERE id = ?`,
		int64(r), req.TenantID); err != nil {
		return ledger.Run{}, fmt.Errorf("take hold: %w", err)
	}
	b.held += r
	b.active++
	if day != "" {
		if _, err := w.exec(ctx, `INSERT INTO quota_days (upstream, model, day, held_units) VALUES (?, ?, ?, ?)
			ON CONFLICT (upstream, model, day) DO UPDATE SET held_units = held_units + excluded.held_units`,
			req.Upstream, req.Model, day, int64(r)); err != nil {
			return ledger.Run{}, fmt.Errorf("quota hold: %w", err)
		}
	}
	status := ledger.RunActive
	if req.Queued {
		status = ledger.RunQueued
	}
	run := ledger.Run{
		ID: req.RunID, TenantID: req.TenantID, Upstream: req.Upstream, Model: req.Model, QuotaDay: day,
		Status: status, Usage: ledger.UsagePending, ReserveUnits: r, HeldUnits: r,
		CreatedAt: w.now, UpdatedAt: w.now,
		Door: req.Door, UpstreamProtocol: req.UpstreamProtocol, IdempotencyKey: req.IdempotencyKey,
		RetryCount: req.RetryCount, RetryOf: retryOf,
	}
	if _, err := w.exec(ctx, `INSERT INTO runs (`+runColumns+`, fingerprint)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		string(run.ID), run.TenantID, run.Upstream, run.Model, run.QuotaDay, string(run.Status), string(run.Usage),
		int64(run.ReserveUnits), int64(run.SpentUnits), int64(run.HeldUnits), int64(run.OverrunUnits), run.Evidence,
		nanos(run.CreatedAt), nanos(run.UpdatedAt),
		run.Door, run.UpstreamProtocol, run.IdempotencyKey, run.RetryCount, string(run.RetryOf), run.CachedTokens,
		req.Fingerprint); err != nil {
		return ledger.Run{}, fmt.Errorf("insert run: %w", err)
	}
	after := b.available()
	if err := insertRunAudit(ctx, w, ledger.AuditEntry{Kind: ledger.AuditAdmit, TenantID: run.TenantID, RunID: run.ID,
		Actor: string(req.Actor), Units: r, AvailableBefore: after + r, AvailableAfter: after,
		Detail: runDetail(run)}, run); err != nil {
		return ledger.Run{}, err
	}
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
// run it retries ("" for none). See ledger.AdmitRequest.
func retryGroup(ctx context.Context, w *wtx, req ledger.AdmitRequest) (ledger.RunID, error) {
	since := nanos(w.now.Add(-ledger.IdempotencyWindow))
	switch {
	case req.IdempotencyKey != "":
		rows, err := w.query(ctx, `SELECT id, usage, status, created_at FROM runs
			WHERE tenant_id = ? AND idempotency_key = ? AND created_at >= ? ORDER BY created_at DESC, rowid DESC`,
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
		err := w.queryRow(ctx, `SELECT id FROM runs WHERE tenant_id = ? AND fingerprint = ? AND created_at >= ?
			AND retry_count = ? ORDER BY created_at DESC, rowid DESC LIMIT 1`,
			req.TenantID, req.Fingerprint, since, req.RetryCount-1).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return "", nil
		}
		if err != nil {
			return "", fmt.Errorf("look up the attempt retried: %w", err)
		}
		return ledger.RunID(id), nil
	}
	return "", nil
}

// admitRefusal says why the tenant's balance row b (ok: it exists) cannot
// take req, or nil when it can.
func admitRefusal(b balanceRow, ok bool, req ledger.AdmitRequest) error {
	if !ok {
		return ledger.Errorf(ledger.CodeInvalidAPIKey, "unknown tenant %q", req.TenantID)
	}
	if b.available() < req.ReserveUnits {
		return ledger.Errorf(ledger.CodeInsufficientBudget,
			"this call needs %d units but only %d of the budget of %d are available (%d spent, %d held)",
			req.ReserveUnits, b.available(), b.budget, b.spent, b.held)
	}
	if b.active >= b.maxConc {
		e := ledger.Errorf(ledger.CodeConcurrencyLimit, "%d of %d concurrent runs are in use", b.active, b.maxConc)
		e.RetryAfter = concurrencyRetryAfter
		return e
	}
	return nil
}

func auditReject(ctx context.Context, w *wtx, req ledger.AdmitRequest, refusal error) error {
	b, ok, err := readBalance(ctx, w, req.TenantID)
	if err != nil {
		return err
	}
	e := ledger.AuditEntry{Kind: ledger.AuditReject, TenantID: req.TenantID, RunID: req.RunID, Actor: string(req.Actor),
		Reason: ledger.ErrorCode(refusal), Units: req.ReserveUnits,
		Detail: req.Upstream + "/" + req.Model + ": " + ledger.ErrorMessage(refusal)}
	if ok {
		e.AvailableBefore, e.AvailableAfter = b.available(), b.available()
	}
	c, err := insertAuditChange(ctx, w, e, ok)
	if err != nil {
		return err
	}
	// A refused run never existed; the hook still learns which model refused.
	c.RunID, c.Upstream, c.Model = "", req.Upstream, req.Model
	if req.Quota != nil {
		c.Day = req.Quota.Day
	}
	return nil
}

// change is one transition of a run, applied by applyChange.
type change struct {
	kind     ledger.AuditKind
	actor    ledger.Actor
	reason   string
	evidence string
	units    ledger.Units // for the audit row
}

// applyChange moves a run from before to after, moving the same deltas on
// the tenant's balance row and the model's quota day, and audits it.
func applyChange(ctx context.Context, w *wtx, before, after ledger.Run, c change) error {
	dSpent := after.SpentUnits - before.SpentUnits
	dHeld := after.HeldUnits - before.HeldUnits
	dUsed := dSpent + after.OverrunUnits - before.OverrunUnits // what the quota day counts
	dActive := 0
	if !before.Status.Ended() && after.Status.Ended() {
		dActive = -1
	}
	var b balanceRow
	if err := w.queryRow(ctx, `UPDATE tenants SET spent_units = spent_units + ?, held_units = held_units + ?,
		active = active + ? WHERE id = ? RETURNING budget_units, spent_units, held_units, active, max_concurrent`,
		int64(dSpent), int64(dHeld), dActive, before.TenantID).Scan(&b.budget, &b.spent, &b.held, &b.active, &b.maxConc); err != nil {
		return fmt.Errorf("move balance of tenant %s: %w", before.TenantID, err)
	}
	if before.QuotaDay != "" && (dUsed != 0 || dHeld != 0) {
		if _, err := w.exec(ctx, `UPDATE quota_days SET usage_units = usage_units + ?, held_units = held_units + ?
			WHERE upstream = ? AND model = ? AND day = ?`, int64(dUsed), int64(dHeld),
			before.Upstream, before.Model, before.QuotaDay); err != nil {
			return fmt.Errorf("move quota day: %w", err)
		}
		if dUsed > 0 {
			minute := w.now.Truncate(time.Minute).Unix()
			if _, err := w.exec(ctx, `INSERT INTO usage_minutes (upstream, model, minute, units) VALUES (?, ?, ?, ?)
				ON CONFLICT (upstream, model, minute) DO UPDATE SET units = units + excluded.units`,
				before.Upstream, before.Model, minute, int64(dUsed)); err != nil {
				return fmt.Errorf("usage minute: %w", err)
			}
		}
	}
	if _, err := w.exec(ctx, `UPDATE runs SET status = ?, usage = ?, spent_units = ?, held_units = ?,
		overrun_units = ?, evidence = ?, updated_at = ?, cached_tokens = ? WHERE id = ?`, string(after.Status), string(after.Usage),
		int64(after.SpentUnits), int64(after.HeldUnits), int64(after.OverrunUnits), after.Evidence,
		nanos(w.now), after.CachedTokens, string(after.ID)); err != nil {
		return fmt.Errorf("update run: %w", err)
	}
	availAfter := b.available()
	return insertRunAudit(ctx, w, ledger.AuditEntry{Kind: c.kind, TenantID: before.TenantID, RunID: before.ID,
		Actor: string(c.actor), Reason: c.reason, Evidence: c.evidence, Units: c.units,
		AvailableBefore: availAfter + dSpent + dHeld, AvailableAfter: availAfter,
		Detail: fmt.Sprintf("%s/%s → %s/%s", before.Status, before.Usage, after.Status, after.Usage)}, after)
}

// transition loads a run, lets decide compute its next state, and applies
// it as actor's change.
func (s *Store) transition(ctx context.Context, op string, id ledger.RunID, actor ledger.Actor,
	decide func(run ledger.Run) (ledger.Run, change, error)) (ledger.Run, error) {
	if err := ledger.CheckActor(actor); err != nil {
		return ledger.Run{}, fmt.Errorf("%s run %s: %w", op, id, err)
	}
	var out ledger.Run
	err := s.writeDecided(ctx, func(w *wtx) error {
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
		c.actor = actor
		if err := applyChange(ctx, w, before, after, c); err != nil {
			return err
		}
		out = after
		return nil
	}, nil)
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
		spent, over := ledger.SplitOverrun(run.ReserveUnits, units)
		if over > 0 {
			// The provider consumed more than was held: the tenant pays the
			// reserve; the quota day counts everything the provider reported.
			run.OverrunUnits = over
			evidence = fmt.Sprintf("%s; %d above the reserve %d: the tenant is charged the reserve, the quota day counts all %d",
				evidence, over, run.ReserveUnits, units)
		}
		run.Status, run.Usage = ledger.RunCompleted, ledger.UsageTrusted
		run.SpentUnits, run.HeldUnits, run.Evidence = spent, 0, evidence
		run.CachedTokens = st.CachedTokens
		return run, change{kind: ledger.AuditSettle, evidence: evidence, units: spent}, nil
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
		return run, change{kind: ledger.AuditReconcile, evidence: evidence, units: units}, nil
	})
}

// QueuedAtCrashEvidence is the evidence of a run released at recovery
// because it was still queued at the gate when the process ended.
const QueuedAtCrashEvidence = "queued at the crash, never sent upstream"

// RecoverInterrupted marks runs left active by a dead process as
// interrupted with usage unknown, their holds kept; runs left queued are
// released with QueuedAtCrashEvidence. Every row is actor's.
func (s *Store) RecoverInterrupted(ctx context.Context, actor ledger.Actor) (int, error) {
	if err := ledger.CheckActor(actor); err != nil {
		return 0, fmt.Errorf("recover interrupted runs: %w", err)
	}
	var n int
	err := s.write(ctx, func(w *wtx) error {
		n = 0
		rows, err := w.query(ctx, `SELECT `+runColumns+` FROM runs WHERE status IN ('queued', 'active') ORDER BY created_at, id`)
		if err != nil {
			return fmt.Errorf("list open runs: %w", err)
		}
		var open []ledger.Run
		for rows.Next() {
			run, err := scanRun(rows)
			if err != nil {
				rows.Close()
				return fmt.Errorf("list open runs: %w", err)
			}
			open = append(open, run)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("list open runs: %w", err)
		}
		for _, before := range open {
			after := before
			c := change{kind: ledger.AuditRecover, actor: actor}
			if before.Status == ledger.RunQueued {
				// Start is committed before the request is sent, so a run
				// still queued never reached the provider: proof of no work,
				// released as a queued run that gives up is (issue 12).
				after.Status, after.Usage = ledger.RunFailed, ledger.UsageReleased
				after.SpentUnits, after.HeldUnits = 0, 0
				after.Evidence = QueuedAtCrashEvidence
				c = change{kind: ledger.AuditRelease, actor: actor, reason: "hold released",
					evidence: after.Evidence, units: before.HeldUnits}
			} else {
				after.Status, after.Usage = ledger.RunInterrupted, ledger.UsageUnknown
				after.Evidence = "the process ended while the run was " + string(before.Status)
				c.reason, c.units = after.Evidence, after.HeldUnits
			}
			if err := applyChange(ctx, w, before, after, c); err != nil {
				return err
			}
		}
		n = len(open)
		return nil
	}, nil)
	if err != nil {
		return 0, fmt.Errorf("recover interrupted runs: %w", err)
	}
	return n, nil
}

// Run returns one run.
func (s *Store) Run(ctx context.Context, id ledger.RunID) (ledger.Run, error) {
	run, err := scanRun(s.queryRow(ctx, `SELECT `+runColumns+` FROM runs WHERE id = ?`, string(id)))
	if errors.Is(err, sql.ErrNoRows) {
		return run, ledger.Errorf(ledger.CodeRunNotFound, "run %s not found", id)
	}
	if err != nil {
		return run, fmt.Errorf("read run %s: %w", id, err)
	}
	return run, nil
}

// DefaultRunsLimit is how many runs Runs returns when the filter sets no limit.
const DefaultRunsLimit = 100

// Runs lists runs newest first.
func (s *Store) Runs(ctx context.Context, f ledger.RunFilter) ([]ledger.Run, error) {
	var where []string
	var args []any
	if f.TenantID != "" {
		where = append(where, "tenant_id = ?")
		args = append(args, f.TenantID)
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
	q += " ORDER BY created_at DESC, rowid DESC LIMIT ?"
	args = append(args, limit)
	rows, err := s.query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	defer rows.Close()
	var out []ledger.Run
	for rows.Next() {
		run, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("list runs: %w", err)
		}
		out = append(out, run)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	return out, nil
}
