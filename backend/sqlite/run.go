package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"

	"github.com/quotagate/quotagate/backend/internal/ledgersql"
	"github.com/quotagate/quotagate/backend/ledger"
)

// runColumns are the columns of runs that scanRun reads.
const runColumns = ledgersql.RunColumns

func scanRun(r ledgersql.Scanner) (ledger.Run, error) { return ledgersql.ScanRun(r) }

func loadRun(ctx context.Context, w *wtx, id ledger.RunID) (ledger.Run, error) {
	run, err := scanRun(w.queryRow(ctx, `SELECT `+runColumns+` FROM runs WHERE id = ?`, string(id)))
	return run, ledgersql.RunRead(err, sql.ErrNoRows, id)
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

// admit decides on the writer's books (the tenant's balance, the quota
// day) before it writes anything, so that a refusal leaves nothing to roll
// back and the op needs no savepoint; the writer goroutine is the only
// writer, so nothing moves between the decision and the writes. An accepted
// run costs two statements: its row and its audit row (the balance and the
// quota day are written once per batch, see books).
func admit(ctx context.Context, w *wtx, req ledger.AdmitRequest) (ledger.Run, error) {
	if _, open := w.books.runs[req.RunID]; open {
		return ledger.Run{}, ledger.ErrRunExists(req.RunID)
	}
	r := req.ReserveUnits
	t, ok, err := w.tenant(ctx, req.TenantID)
	if err != nil {
		return ledger.Run{}, err
	}
	var pos ledger.Position
	var pb *periodBook
	if ok {
		if pos, pb, err = w.current(ctx, req.TenantID, t); err != nil {
			return ledger.Run{}, err
		}
	}
	run := ledger.AdmittedRunIn(req, "", w.now, pos.Period)
	var refusal error
	if ok {
		// The writer is the only writer: no run with this key can appear
		// between this read and the insert below (nor in this batch unseen).
		if run.RetryOf, refusal = retryGroup(ctx, w, req); ledger.ErrorCode(refusal) == ledger.CodeInternal {
			return ledger.Run{}, refusal
		}
	}
	refusal = cmp.Or(refusal, ledger.AdmitRefusal(pos, ok, req))
	var d *dayBook
	if refusal == nil && run.QuotaDay != "" {
		if d, err = w.day(ctx, dayKey{run.Upstream, run.Model, run.QuotaDay}); err != nil {
			return ledger.Run{}, err
		}
		refusal = ledger.QuotaRefusal(req, d.usage, d.held)
	}
	if refusal != nil {
		// A duplicate id is refused first, whatever else would refuse it.
		if err := refuseDuplicate(ctx, w, req.RunID); err != nil {
			return ledger.Run{}, err
		}
		return ledger.Run{}, refusal
	}
	inserted, err := w.insertOnce(ctx, `INSERT INTO runs (`+runColumns+`, fingerprint)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
		append(ledgersql.RunValues(run), req.Fingerprint)...)
	if err != nil {
		return ledger.Run{}, fmt.Errorf("insert run: %w", err)
	}
	if !inserted {
		return ledger.Run{}, ledger.ErrRunExists(req.RunID)
	}
	if err := insertRunAudit(ctx, w, ledger.AdmitAudit(run, req.Actor, pos.Available()-r), run); err != nil {
		return ledger.Run{}, err
	}
	w.move(t, pb, d, run, ledger.Moves{Held: r, Active: 1, HeldMicros: run.ReserveMicros})
	w.noteRun(run)
	return run, nil
}

// refuseDuplicate returns CodeConflict when a run id is taken.
func refuseDuplicate(ctx context.Context, w *wtx, id ledger.RunID) error {
	var exists int
	if err := w.queryRow(ctx, `SELECT count(*) FROM runs WHERE id = ?`, string(id)).Scan(&exists); err != nil {
		return fmt.Errorf("look up run: %w", err)
	}
	if exists > 0 {
		return ledger.ErrRunExists(id)
	}
	return nil
}

func auditReject(ctx context.Context, w *wtx, req ledger.AdmitRequest, refusal error) error {
	t, ok, err := w.tenant(ctx, req.TenantID)
	if err != nil {
		return err
	}
	var pos ledger.Position
	if ok {
		if pos, _, err = w.current(ctx, req.TenantID, t); err != nil {
			return err
		}
	}
	c, err := insertAuditChange(ctx, w, ledger.RejectAudit(req, refusal, pos, ok), ok)
	if err != nil {
		return err
	}
	*c = ledger.RejectChange(*c, req)
	return nil
}

// applyChange writes t, decided on before: the run row and its audit row;
// the moves on the tenant's balance and the model's quota day go to the
// books (written once per batch).
func applyChange(ctx context.Context, w *wtx, before ledger.Run, t ledger.Transition, actor ledger.Actor) error {
	m := t.Moves(before)
	tb, ok, err := w.tenant(ctx, before.TenantID)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("move balance of tenant %s: the tenant is missing", before.TenantID)
	}
	pos, pb, err := w.runBooks(ctx, tb, before)
	if err != nil {
		return err
	}
	var d *dayBook
	if m.QuotaMoves(before) {
		if d, err = w.day(ctx, dayKey{before.Upstream, before.Model, before.QuotaDay}); err != nil {
			return err
		}
	}
	after := t.After
	if _, err := w.exec(ctx, `UPDATE runs SET status = ?, usage = ?, spent_units = ?, held_units = ?,
		overrun_units = ?, evidence = ?, updated_at = ?, cached_tokens = ?, cost_micros = ?, overrun_micros = ?,
		provider_id = ?, relayed_units = ?
		WHERE id = ?`, string(after.Status), string(after.Usage),
		int64(after.SpentUnits), int64(after.HeldUnits), int64(after.OverrunUnits), after.Evidence,
		nanos(w.now), after.CachedTokens, int64(after.CostMicros), int64(after.OverrunMicros),
		after.ProviderID, int64(after.RelayedUnits), string(after.ID)); err != nil {
		return fmt.Errorf("update run: %w", err)
	}
	availAfter := pos.Available() - m.Spent - m.Held
	if err := insertRunAudit(ctx, w, t.Audit(before, actor, availAfter), after); err != nil {
		return err
	}
	w.move(tb, pb, d, before, m)
	w.noteRun(after)
	return nil
}

// transition loads a run, lets rule decide its transition, and applies it
// as actor's change.
func (s *Store) transition(ctx context.Context, id ledger.RunID, actor ledger.Actor, rule ledger.Rule) (ledger.Run, error) {
	if err := cmp.Or(rule.Err, ledger.CheckActor(actor)); err != nil {
		return ledger.Run{}, fmt.Errorf("%s run %s: %w", rule.Op, id, err)
	}
	var out ledger.Run
	err := s.writeDecided(ctx, func(w *wtx) error {
		var err error
		out, err = applyRule(ctx, w, id, actor, rule)
		return err
	}, nil)
	if err != nil {
		return ledger.Run{}, fmt.Errorf("%s run %s: %w", rule.Op, id, err)
	}
	return out, nil
}

// applyRule is one transition inside the writer's transaction: the run as
// written, rule's decision on it, and its change (nothing when the rule
// changes nothing). It returns the run after.
func applyRule(ctx context.Context, w *wtx, id ledger.RunID, actor ledger.Actor, rule ledger.Rule) (ledger.Run, error) {
	before, err := w.run(ctx, id)
	if err != nil {
		return ledger.Run{}, err
	}
	t, err := rule.Decide(before)
	if err != nil {
		return ledger.Run{}, err
	}
	if t.None(before) {
		return before, nil
	}
	t.After.UpdatedAt = w.now
	if err := applyChange(ctx, w, before, t, actor); err != nil {
		return ledger.Run{}, err
	}
	return t.After, nil
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
		rows, err := w.query(ctx, `SELECT `+runColumns+` FROM runs
			WHERE usage IN ('pending', 'unknown') AND status IN ('queued', 'active') ORDER BY created_at, id`)
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

// The admission's look-ups of earlier runs. Each repeats its partial index's
// condition (a key or fingerprint that is not empty): a bound parameter
// does not imply it, so without it SQLite cannot use the index and walks
// every run of the tenant's last 24 h instead, and CPU per call grows with
// the ledger (TestWriterPlans pins the plans).
const (
	keyedRunsQuery = `SELECT id, usage, status, created_at FROM runs
		WHERE tenant_id = ? AND idempotency_key = ? AND idempotency_key != '' AND created_at >= ?
		ORDER BY created_at DESC, rowid DESC`
	retriedRunQuery = `SELECT id FROM runs WHERE tenant_id = ? AND fingerprint = ? AND fingerprint != ''
		AND created_at >= ? AND retry_count = ? ORDER BY created_at DESC, rowid DESC LIMIT 1`
)

// retryGroup decides req's place among the tenant's earlier runs with the
// look-ups above (ledgersql.RetryGroup).
func retryGroup(ctx context.Context, w *wtx, req ledger.AdmitRequest) (ledger.RunID, error) {
	return ledgersql.RetryGroup(ctx, reader{w}, sql.ErrNoRows, req, w.now, keyedRunsQuery, retriedRunQuery)
}
