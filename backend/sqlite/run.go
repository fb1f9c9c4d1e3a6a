package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
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
	req, err := req.Validated()
	if err != nil {
		return ledger.Run{}, fmt.Errorf("admit run %s: %w", req.RunID, err)
	}
	var run ledger.Run
	err = s.writeDecided(ctx,
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
		return ledger.Run{}, ledger.ErrRunExists(req.RunID)
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
	if err := ledger.AdmitRefusal(b, ok, req); err != nil {
		return ledger.Run{}, err
	}
	run := ledger.AdmittedRun(req, "", w.now)
	run.RetryOf = retryOf
	if day := run.QuotaDay; day != "" {
		var usage, held ledger.Units
		err := w.queryRow(ctx, `SELECT usage_units, held_units FROM quota_days WHERE upstream = ? AND model = ? AND day = ?`,
			req.Upstream, req.Model, day).Scan(&usage, &held)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return ledger.Run{}, fmt.Errorf("quota day: %w", err)
		}
		if err := ledger.QuotaRefusal(req, usage, held); err != nil {
			return ledger.Run{}, err
		}
	}
	if _, err := w.exec(ctx, `UPDATE tenants SET held_units = held_units + ?, active = active + 1 WHERE id = ?`,
		int64(r), req.TenantID); err != nil {
		return ledger.Run{}, fmt.Errorf("take hold: %w", err)
	}
	b.HeldUnits += r
	b.Active++
	if day := run.QuotaDay; day != "" {
		if _, err := w.exec(ctx, `INSERT INTO quota_days (upstream, model, day, held_units) VALUES (?, ?, ?, ?)
			ON CONFLICT (upstream, model, day) DO UPDATE SET held_units = held_units + excluded.held_units`,
			req.Upstream, req.Model, day, int64(r)); err != nil {
			return ledger.Run{}, fmt.Errorf("quota hold: %w", err)
		}
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
	if err := insertRunAudit(ctx, w, ledger.AdmitAudit(run, req.Actor, b.Available()), run); err != nil {
		return ledger.Run{}, err
	}
	return run, nil
}

func auditReject(ctx context.Context, w *wtx, req ledger.AdmitRequest, refusal error) error {
	b, ok, err := readBalance(ctx, w, req.TenantID)
	if err != nil {
		return err
	}
	c, err := insertAuditChange(ctx, w, ledger.RejectAudit(req, refusal, b, ok), ok)
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

// applyChange writes t, decided on before: the run row, the same moves on
// the tenant's balance row and the model's quota day, and its audit row.
func applyChange(ctx context.Context, w *wtx, before ledger.Run, t ledger.Transition, actor ledger.Actor) error {
	m := t.Moves(before)
	var b ledger.Position
	if err := w.queryRow(ctx, `UPDATE tenants SET spent_units = spent_units + ?, held_units = held_units + ?,
		active = active + ? WHERE id = ? RETURNING budget_units, spent_units, held_units, active, max_concurrent`,
		int64(m.Spent), int64(m.Held), m.Active, before.TenantID).Scan(&b.BudgetUnits, &b.SpentUnits, &b.HeldUnits, &b.Active, &b.MaxConcurrent); err != nil {
		return fmt.Errorf("move balance of tenant %s: %w", before.TenantID, err)
	}
	if m.QuotaMoves(before) {
		if _, err := w.exec(ctx, `UPDATE quota_days SET usage_units = usage_units + ?, held_units = held_units + ?
			WHERE upstream = ? AND model = ? AND day = ?`, int64(m.Used), int64(m.Held),
			before.Upstream, before.Model, before.QuotaDay); err != nil {
			return fmt.Errorf("move quota day: %w", err)
		}
		if m.Used > 0 {
			minute := w.now.Truncate(time.Minute).Unix()
			if _, err := w.exec(ctx, `INSERT INTO usage_minutes (upstream, model, minute, units) VALUES (?, ?, ?, ?)
				ON CONFLICT (upstream, model, minute) DO UPDATE SET units = units + excluded.units`,
				before.Upstream, before.Model, minute, int64(m.Used)); err != nil {
				return fmt.Errorf("usage minute: %w", err)
			}
		}
	}
	after := t.After
	if _, err := w.exec(ctx, `UPDATE runs SET status = ?, usage = ?, spent_units = ?, held_units = ?,
		overrun_units = ?, evidence = ?, updated_at = ?, cached_tokens = ? WHERE id = ?`, string(after.Status), string(after.Usage),
		int64(after.SpentUnits), int64(after.HeldUnits), int64(after.OverrunUnits), after.Evidence,
		nanos(w.now), after.CachedTokens, string(after.ID)); err != nil {
		return fmt.Errorf("update run: %w", err)
	}
	return insertRunAudit(ctx, w, t.Audit(before, actor, b.Available()), after)
}

// transition loads a run, lets rule decide its transition, and applies it
// as actor's change.
func (s *Store) transition(ctx context.Context, id ledger.RunID, actor ledger.Actor, rule ledger.Rule) (ledger.Run, error) {
	if err := cmp.Or(rule.Err, ledger.CheckActor(actor)); err != nil {
		return ledger.Run{}, fmt.Errorf("%s run %s: %w", rule.Op, id, err)
	}
	var out ledger.Run
	err := s.writeDecided(ctx, func(w *wtx) error {
		before, err := loadRun(ctx, w, id)
		if err != nil {
			return err
		}
		t, err := rule.Decide(before)
		if err != nil {
			return err
		}
		if t.None(before) {
			out = before
			return nil
		}
		t.After.UpdatedAt = w.now
		if err := applyChange(ctx, w, before, t, actor); err != nil {
			return err
		}
		out = t.After
		return nil
	}, nil)
	if err != nil {
		return ledger.Run{}, fmt.Errorf("%s run %s: %w", rule.Op, id, err)
	}
	return out, nil
}

// Start moves a queued run to active; starting an active run changes nothing.
func (s *Store) Start(ctx context.Context, id ledger.RunID, actor ledger.Actor) (ledger.Run, error) {
	return s.transition(ctx, id, actor, ledger.StartRule())
}

// Settle ends a run on trusted usage: spends units, releases the rest.
func (s *Store) Settle(ctx context.Context, id ledger.RunID, units ledger.Units, evidence string, actor ledger.Actor) (ledger.Run, error) {
	return s.transition(ctx, id, actor, ledger.SettleRule(units, evidence))
}

// SettleUsage is Settle recording the usage's cached tokens on the run too.
func (s *Store) SettleUsage(ctx context.Context, id ledger.RunID, st ledger.Settlement, actor ledger.Actor) (ledger.Run, error) {
	return s.transition(ctx, id, actor, ledger.SettleUsageRule(st))
}

// KeepHold ends a run whose usage is unknown; its reserve stays held.
func (s *Store) KeepHold(ctx context.Context, id ledger.RunID, status ledger.RunStatus, reason string, actor ledger.Actor) (ledger.Run, error) {
	return s.transition(ctx, id, actor, ledger.KeepHoldRule(status, reason))
}

// ReleaseHold ends a run the provider provably did no work for.
func (s *Store) ReleaseHold(ctx context.Context, id ledger.RunID, status ledger.RunStatus, evidence string, actor ledger.Actor) (ledger.Run, error) {
	return s.transition(ctx, id, actor, ledger.ReleaseHoldRule(status, evidence))
}

// Reconcile settles a held run at units with evidence, exactly once.
func (s *Store) Reconcile(ctx context.Context, id ledger.RunID, units ledger.Units, evidence string, actor ledger.Actor) (ledger.Run, error) {
	return s.transition(ctx, id, actor, ledger.ReconcileRule(units, evidence))
}

// QueuedAtCrashEvidence is the evidence of a run released at recovery
// because it was still queued at the gate when the process ended.
const QueuedAtCrashEvidence = ledger.QueuedAtCrashEvidence

// RecoverInterrupted ends the runs a dead process left open by
// ledger.RecoverRule: active ones interrupted with their holds kept, queued
// ones released with QueuedAtCrashEvidence. Every row is actor's.
func (s *Store) RecoverInterrupted(ctx context.Context, actor ledger.Actor) (int, error) {
	if err := ledger.CheckActor(actor); err != nil {
		return 0, fmt.Errorf("recover interrupted runs: %w", err)
	}
	rule := ledger.RecoverRule(ledger.RecoveryWhy)
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
			t, err := rule.Decide(before)
			if err != nil {
				return err
			}
			t.After.UpdatedAt = w.now
			if err := applyChange(ctx, w, before, t, actor); err != nil {
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
