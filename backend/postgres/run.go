package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quotagate/quotagate/backend/internal/ledgersql"
	"github.com/quotagate/quotagate/backend/ledger"
)

// runColumns are the columns of runs that scanRun reads: the stores'
// shared ones, then the instance that holds the run.
const runColumns = ledgersql.RunColumns + `, instance`

func scanRun(r ledgersql.Scanner) (ledger.Run, error) {
	var instance string
	run, err := ledgersql.ScanRun(r, &instance)
	run.Instance = instance
	return run, err
}

type queryRower interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func loadRun(ctx context.Context, q queryRower, id ledger.RunID) (ledger.Run, error) {
	run, err := scanRun(q.QueryRow(ctx, `SELECT `+runColumns+` FROM runs WHERE id = $1`, string(id)))
	return run, ledgersql.RunRead(err, pgx.ErrNoRows, id)
}

// Admit checks and records a run with its hold in one transaction: one
// conditional UPDATE of the tenant's row, then for a guarded model one
// conditional UPDATE of the model's day, then the run and its audit row.
// Refusal precedence as backend/sqlite: conflict (duplicate id),
// invalid_api_key (unknown tenant), insufficient_budget, concurrency_limit,
// quota_guard. A refusal rolls the transaction back and is audited in a
// second one.
func (s *Store) Admit(ctx context.Context, req ledger.AdmitRequest) (ledger.Run, error) {
	req, err := req.Validated()
	if err != nil {
		return ledger.Run{}, fmt.Errorf("admit run %s: %w", req.RunID, err)
	}
	epoch, err := s.admitEpoch()
	if err != nil {
		return ledger.Run{}, fmt.Errorf("admit run %s: %w", req.RunID, err)
	}
	var run ledger.Run
	err = s.write(ctx, func(w *wtx) error {
		if err := s.fenceAdmission(ctx, w, epoch); err != nil {
			return err
		}
		var err error
		run, err = s.admit(ctx, w, req, epoch)
		return err
	})
	if isRunsKey(err) {
		err = ledger.ErrRunExists(req.RunID)
	}
	// A refusal is audited; a lapsed lease is no refusal of the tenant's
	// (nothing about the call was decided) and the ledger may be away.
	var domain *ledger.Error
	if errors.As(err, &domain) && domain.Code != ledger.CodeLedgerUnavailable {
		if aerr := s.write(ctx, func(w *wtx) error { return auditReject(ctx, w, req, err) }); aerr != nil {
			err = fmt.Errorf("audit refusal %v: %w", err, aerr)
		}
	}
	if err != nil {
		return ledger.Run{}, fmt.Errorf("admit run %s: %w", req.RunID, err)
	}
	return run, nil
}

func (s *Store) admit(ctx context.Context, w *wtx, req ledger.AdmitRequest, epoch int64) (ledger.Run, error) {
	// A duplicate id is refused first, as SQLite does; one admitted
	// meanwhile by another transaction is caught by the run insert's primary
	// key when the queued statements run (the transaction rolls back whole).
	var exists bool
	if err := w.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM runs WHERE id = $1)`, string(req.RunID)).Scan(&exists); err != nil {
		return ledger.Run{}, fmt.Errorf("look up run: %w", err)
	}
	if exists {
		return ledger.Run{}, ledger.ErrRunExists(req.RunID)
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
	// A money budget is checked in the same condition ($4: the model has
	// a price, which a tenant with a money budget needs). A tenant whose
	// budget renews holds in its current period's books instead (takeHold),
	// under the row lock this UPDATE takes.
	b, err := scanPosition(w.QueryRow(ctx, `UPDATE tenants SET active = active + 1,
		held_units = held_units + CASE WHEN budget_period = 'none' THEN $1 ELSE 0 END,
		held_micros = held_micros + CASE WHEN budget_period = 'none' THEN $3 ELSE 0 END
		WHERE id = $2 AND active < max_concurrent AND (budget_micros IS NULL OR $4)
		AND (budget_period <> 'none' OR (budget_units - spent_units - held_units >= $1
			AND (budget_micros IS NULL OR budget_micros - spent_micros - held_micros >= $3)))
		RETURNING `+positionColumns,
		int64(r), req.TenantID, int64(req.ReserveMicros), req.Prices != nil))
	if errors.Is(err, pgx.ErrNoRows) {
		return ledger.Run{}, admitRefusal(ctx, w, req)
	}
	if err != nil {
		return ledger.Run{}, fmt.Errorf("take hold: %w", err)
	}
	if b, err = takePeriodHold(ctx, w, req, b); err != nil {
		return ledger.Run{}, err
	}
	run := ledger.AdmittedRunIn(req, s.opts.Instance, w.now, b.Period)
	run.RetryOf = retryOf
	if run.QuotaDay != "" {
		if err := takeQuotaHold(ctx, w, req); err != nil {
			return ledger.Run{}, err
		}
	}
	w.queue(`INSERT INTO runs (`+runColumns+`, fingerprint, lease_epoch)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21,
		$22, $23, $24, $25, $26, $27, $28, $29, $30, $31, $32, $33)`,
		append(ledgersql.RunValues(run), run.Instance, req.Fingerprint, epoch)...)
	s.insertRunAudit(w, ledger.AdmitAudit(run, req.Actor, b.Available()), run)
	return run, nil
}

// takeQuotaHold holds req's reserve on its guarded model's day, if the
// day's limit allows it.
func takeQuotaHold(ctx context.Context, w *wtx, req ledger.AdmitRequest) error {
	day := req.Quota.Day
	if _, err := w.Exec(ctx, `INSERT INTO quota_days (upstream, model, day) VALUES ($1, $2, $3)
		ON CONFLICT DO NOTHING`, req.Upstream, req.Model, day); err != nil {
		return fmt.Errorf("quota day: %w", err)
	}
	tag, err := w.Exec(ctx, `UPDATE quota_days SET held_units = held_units + $1
		WHERE upstream = $2 AND model = $3 AND day = $4 AND usage_units + held_units + $1 <= $5`,
		int64(req.ReserveUnits), req.Upstream, req.Model, day, int64(req.Quota.LimitUnits))
	if err != nil {
		return fmt.Errorf("quota hold: %w", err)
	}
	if tag.RowsAffected() == 0 {
		var usage, held ledger.Units
		if err := w.QueryRow(ctx, `SELECT usage_units, held_units FROM quota_days
			WHERE upstream = $1 AND model = $2 AND day = $3`,
			req.Upstream, req.Model, day).Scan(&usage, &held); err != nil {
			return fmt.Errorf("quota day: %w", err)
		}
		return ledger.ErrQuotaGuard(req, usage, held)
	}
	return nil
}

// admitRefusal explains why the conditional UPDATE matched no row.
func admitRefusal(ctx context.Context, w *wtx, req ledger.AdmitRequest) error {
	b, ok, err := readPosition(ctx, w, req.TenantID, false)
	if err != nil {
		return err
	}
	// Read after the UPDATE failed, the row may already have moved on; the
	// UPDATE's condition then failed on the concurrency limit.
	return cmp.Or(ledger.AdmitRefusal(b, ok, req), ledger.ErrConcurrency(b))
}

// auditReject records a refusal. It locks the tenant's row so that the
// row's available figures sit at their place in the tenant's audit chain.
func auditReject(ctx context.Context, w *wtx, req ledger.AdmitRequest, refusal error) error {
	b, ok, err := readPosition(ctx, w, req.TenantID, true)
	if err != nil {
		return err
	}
	e := ledger.RejectAudit(req, refusal, b, ok)
	counted, err := countRefusal(ctx, w, e)
	if err != nil {
		return err
	}
	if !counted {
		insertAuditIn(w, e, ok, "")
	}
	// Both append the row's change; its seq may still be on its way in.
	c := &w.changes[len(w.changes)-1]
	*c = ledger.RejectChange(*c, req)
	return nil
}

// errMoved says the run was no longer in the state the transition was
// decided on: another transaction (this gateway's or another's) changed it
// first.
var errMoved = errors.New("run changed meanwhile")

// applyChange writes t, decided on before — only if the run is still in
// before's state — then moves the same deltas on the tenant's balance row
// and the model's quota day, and audits it. Rows are locked in one order by
// every transaction: the run, then its tenant, then the quota day (an
// admission, which has no run row yet, locks tenant then quota day), so no
// two transactions wait on each other in a cycle.
//
// fenced makes the same UPDATE also require that the lease the run was
// admitted under still exists: a gateway cut off past its lease cannot end
// a run another gateway is ending (or has ended) for it.
func (s *Store) applyChange(ctx context.Context, w *wtx, before ledger.Run, t ledger.Transition, actor ledger.Actor, fenced bool) error {
	after := t.After
	tag, err := w.Exec(ctx, `UPDATE runs SET status = $1, usage = $2, spent_units = $3, held_units = $4,
		overrun_units = $5, evidence = $6, updated_at = $7, cached_tokens = $12, cost_micros = $13, overrun_micros = $14,
		provider_id = $16, relayed_units = $17
		WHERE id = $8 AND status = $9 AND usage = $10 AND spent_units = $11
		AND (NOT $15 OR lease_epoch = 0 OR EXISTS (SELECT 1 FROM instances WHERE epoch = runs.lease_epoch))`,
		string(after.Status), string(after.Usage), int64(after.SpentUnits), int64(after.HeldUnits),
		int64(after.OverrunUnits), after.Evidence, nanos(w.now),
		string(before.ID), string(before.Status), string(before.Usage), int64(before.SpentUnits), after.CachedTokens,
		int64(after.CostMicros), int64(after.OverrunMicros), fenced, after.ProviderID, int64(after.RelayedUnits))
	if err != nil {
		return fmt.Errorf("update run: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return errMoved
	}
	m := t.Moves(before)
	row := m.OnRow(before)
	b, err := scanPosition(w.QueryRow(ctx, `UPDATE tenants SET spent_units = spent_units + $1, held_units = held_units + $2,
		active = active + $3, spent_micros = spent_micros + $5, held_micros = held_micros + $6
		WHERE id = $4 RETURNING `+positionColumns,
		int64(row.Spent), int64(row.Held), row.Active, before.TenantID, int64(row.SpentMicros), int64(row.HeldMicros)))
	if err != nil {
		return fmt.Errorf("move balance of tenant %s: %w", before.TenantID, err)
	}
	if b, err = movePeriod(ctx, w, before, m, b); err != nil {
		return err
	}
	if m.QuotaMoves(before) {
		w.queue(`UPDATE quota_days SET usage_units = usage_units + $1, held_units = held_units + $2
			WHERE upstream = $3 AND model = $4 AND day = $5`, int64(m.Used), int64(m.Held),
			before.Upstream, before.Model, before.QuotaDay)
		if m.Used > 0 {
			minute := w.now.Truncate(time.Minute).Unix()
			w.queue(`INSERT INTO usage_minutes (upstream, model, minute, units) VALUES ($1, $2, $3, $4)
				ON CONFLICT (upstream, model, minute) DO UPDATE SET units = usage_minutes.units + excluded.units`,
				before.Upstream, before.Model, minute, int64(m.Used))
		}
	}
	if m.Spent != 0 || m.SpentMicros != 0 {
		w.queue(`INSERT INTO spend_hours (hour, tenant_id, upstream, model, spent_units, cost_micros)
			VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (hour, tenant_id, upstream, model) DO UPDATE SET
			spent_units = spend_hours.spent_units + excluded.spent_units,
			cost_micros = spend_hours.cost_micros + excluded.cost_micros`,
			ledger.SpendHourIndex(before.CreatedAt), before.TenantID, before.Upstream, before.Model,
			int64(m.Spent), int64(m.SpentMicros))
	}
	s.insertRunAudit(w, t.Audit(before, actor, b.Available()), after)
	return nil
}

// transition loads a run, lets rule decide its transition, and applies it
// if the run is still as loaded; otherwise it decides again on the state
// another transaction left (which then usually refuses: run_ended, not_held).
// The run's own gateway is fenced by its lease epoch (see applyChange).
func (s *Store) transition(ctx context.Context, id ledger.RunID, actor ledger.Actor, rule ledger.Rule) (ledger.Run, error) {
	out, _, err := s.transit(ctx, id, actor, rule, true)
	return out, err
}

// transit is transition, also reporting whether the run changed. fence
// says the change is this gateway's own work on a run it relays (not the
// ending of orphans), which its lease epoch must still allow.
func (s *Store) transit(ctx context.Context, id ledger.RunID, actor ledger.Actor, rule ledger.Rule, fence bool) (out ledger.Run, changed bool, err error) {
	if err := cmp.Or(rule.Err, ledger.CheckActor(actor)); err != nil {
		return ledger.Run{}, false, fmt.Errorf("%s run %s: %w", rule.Op, id, err)
	}
	var late *ledger.Run // a late end of this gateway's, refused
	err = s.write(ctx, func(w *wtx) error {
		for {
			before, err := loadRun(ctx, w, id)
			if err != nil {
				return err
			}
			mine := fence && before.Instance == s.opts.Instance && isEnd(rule)
			t, err := rule.Decide(before)
			if err != nil {
				if mine && ledger.ErrorCode(err) == ledger.CodeRunEnded {
					late = &before
				}
				return err
			}
			if t.None(before) {
				out, changed = before, false
				return nil
			}
			t.After.UpdatedAt = w.now
			fenced := fence && before.Instance == s.opts.Instance
			err = s.applyChange(ctx, w, before, t, actor, fenced)
			if errors.Is(err, errMoved) && fenced {
				if gone, gerr := leaseGone(ctx, w, id); gerr != nil || gone {
					late = &before
					return cmp.Or(gerr, errEndedElsewhere(before))
				}
			}
			if errors.Is(err, errMoved) {
				continue
			}
			if err != nil {
				return err
			}
			out, changed = t.After, true
			return nil
		}
	})
	if late != nil && ledger.ErrorCode(err) == ledger.CodeRunEnded {
		err = s.keepLateEnd(ctx, *late, rule, err)
	}
	if err != nil {
		return ledger.Run{}, false, fmt.Errorf("%s run %s: %w", rule.Op, id, err)
	}
	return out, changed, nil
}

// QueuedAtCrashEvidence is the evidence of a run released because it was
// still queued at the gate when its gateway ended (ledger's).
const QueuedAtCrashEvidence = ledger.QueuedAtCrashEvidence

// RecoverInterrupted ends the runs this instance left open (a previous life
// of the same instance name) by ledger.RecoverRule, as backend/sqlite does:
// an active run ends interrupted with usage unknown, its hold intact; a
// queued run ends failed with its hold released. Other instances' runs are
// theirs: a dead instance's runs are ended by ReapExpired once its lease
// expired.
func (s *Store) RecoverInterrupted(ctx context.Context, actor ledger.Actor) (int, error) {
	if err := ledger.CheckActor(actor); err != nil {
		return 0, fmt.Errorf("recover interrupted runs: %w", err)
	}
	n, err := s.interruptOpen(ctx, s.opts.Instance, actor, ledger.RecoveryWhy)
	if err != nil {
		return n, fmt.Errorf("recover interrupted runs: %w", err)
	}
	return n, nil
}

// interruptOpen ends instance's open runs by ledger.RecoverRule(why), each
// in its own transaction (a run locked before its tenant, as every
// transition).
func (s *Store) interruptOpen(ctx context.Context, instance string, actor ledger.Actor, why string) (int, error) {
	rows, err := s.pool.Query(ctx, `SELECT id FROM runs WHERE instance = $1 AND status IN ('queued', 'active')
		ORDER BY created_at, id`, instance)
	if err != nil {
		return 0, fmt.Errorf("list open runs: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return 0, fmt.Errorf("list open runs: %w", err)
	}
	rule := ledger.RecoverRule(why)
	rule.Op = "interrupt"
	n := 0
	for _, id := range ids {
		_, changed, err := s.transit(ctx, ledger.RunID(id), actor, rule, false)
		if err != nil {
			return n, err
		}
		if changed {
			n++
		}
	}
	return n, nil
}

// retryGroup decides req's place among the tenant's earlier runs
// (ledgersql.RetryGroup). For a key it first locks the tenant's row, which
// every admission of the tenant takes: a concurrent admission with the same
// key has committed its run (or rolled back) when the lock is granted, and
// under READ COMMITTED the next statement sees it — of two calls with one
// key, exactly one is admitted.
func retryGroup(ctx context.Context, w *wtx, req ledger.AdmitRequest) (ledger.RunID, error) {
	if req.IdempotencyKey != "" {
		if _, ok, err := readBalance(ctx, w, req.TenantID, true); err != nil || !ok {
			return "", err // an unknown tenant is refused next, as without a key
		}
	}
	return ledgersql.RetryGroup(ctx, reader{w}, pgx.ErrNoRows, req, w.now, keyedRuns, retriedRun)
}

// The admission's look-ups of earlier runs. Both repeat their partial
// index's condition: a generic plan cannot prove that the bound key or
// fingerprint is not empty (see sqlite's keyedRunsQuery).
const (
	keyedRuns = `SELECT id, usage, status, created_at FROM runs
		WHERE tenant_id = ? AND idempotency_key = ? AND idempotency_key <> '' AND created_at >= ?
		ORDER BY created_at DESC, seq DESC`
	retriedRun = `SELECT id FROM runs WHERE tenant_id = ? AND fingerprint = ? AND fingerprint <> ''
		AND created_at >= ? AND retry_count = ? ORDER BY created_at DESC, seq DESC LIMIT 1`
)
