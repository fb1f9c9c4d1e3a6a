package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quotagate/quotagate/backend/ledger"
)

// horizonWait is how long verify waits for the audit writes in flight to
// commit before it takes a checkpoint's horizon; past it, verify leaves no
// checkpoint.
const horizonWait = time.Second

// horizonWaits is called when verify starts waiting for writers (tests).
var horizonWaits = func() {}

// horizon is the last audit seq at or below which no transaction can still
// commit an audit row, read before verify's snapshot so that the snapshot
// holds every row up to it. PostgreSQL hands out seqs before the rows
// commit, so a row numbered lower may commit after one numbered higher:
// the last seq a snapshot sees is no such bound. A transaction takes
// ROW EXCLUSIVE on audit before its INSERT numbers a row, and holds it to
// its end; so once every transaction that held it when the sequence was
// read has ended, each seq handed out by then is committed or abandoned.
// Verify waits for them by watching pg_locks rather than by taking a lock
// of its own: a lock would queue admissions behind it, and wait for
// autovacuum. ok is false when they took longer than horizonWait (an
// archive part holding audit for long).
func (s *Store) horizon(ctx context.Context) (seq int64, ok bool, err error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return 0, false, fmt.Errorf("take the checkpoint's horizon: %w", err)
	}
	defer conn.Release()
	var writers []string
	err = conn.QueryRow(ctx, `SELECT coalesce(pg_sequence_last_value(pg_get_serial_sequence('audit', 'seq')::regclass), 0)`).
		Scan(&seq)
	if err == nil {
		err = conn.QueryRow(ctx, `SELECT coalesce(array_agg(virtualtransaction), '{}') FROM pg_locks
			WHERE database = (SELECT oid FROM pg_database WHERE datname = current_database())
				AND relation = 'audit'::regclass AND mode = 'RowExclusiveLock' AND granted AND pid <> pg_backend_pid()`).
			Scan(&writers)
	}
	deadline := time.Now().Add(horizonWait)
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for waited := false; err == nil && len(writers) > 0; waited = true {
		if !waited {
			horizonWaits()
		} else if time.Now().After(deadline) {
			return 0, false, nil
		}
		select {
		case <-ctx.Done():
			err = ctx.Err()
		case <-tick.C:
			err = conn.QueryRow(ctx, `SELECT coalesce(array_agg(virtualxid), '{}') FROM pg_locks
				WHERE locktype = 'virtualxid' AND virtualxid = ANY($1)`, writers).Scan(&writers)
		}
	}
	if err != nil {
		return 0, false, fmt.Errorf("take the checkpoint's horizon: %w", err)
	}
	return seq, true, nil
}

// readCheckpoint reads the last checkpoint, if it still stands: one that
// was changed after verify wrote it is a difference, and one that a month
// archived or restored after its seq changed under is set aside.
func (v *verifier) readCheckpoint() (ledger.Checkpoint, bool) {
	var cp ledger.Checkpoint
	var at int64
	var body, digest string
	err := v.tx.QueryRow(v.ctx, `SELECT seq, at, checkpoint, digest FROM verify_checkpoints ORDER BY seq DESC LIMIT 1`).
		Scan(&cp.Seq, &at, &body, &digest)
	if errors.Is(err, pgx.ErrNoRows) {
		return cp, false
	}
	if err != nil {
		v.err = fmt.Errorf("read checkpoint: %w", err)
		return cp, false
	}
	if checkpointDigest(body) != digest {
		v.Addf("checkpoint at seq %d: changed after verify wrote it (its digest no longer matches)", cp.Seq)
		return cp, false
	}
	if err := json.Unmarshal([]byte(body), &cp); err != nil {
		v.err = fmt.Errorf("read checkpoint at seq %d: %w", cp.Seq, err)
		return cp, false
	}
	cp.At = fromNanos(at)
	var moved bool
	if err := v.tx.QueryRow(v.ctx, `SELECT EXISTS (SELECT 1 FROM audit WHERE kind IN ('archive', 'unarchive') AND seq > $1)`,
		cp.Seq).Scan(&moved); err != nil {
		v.err = fmt.Errorf("read checkpoint at seq %d: %w", cp.Seq, err)
		return cp, false
	}
	return cp, !moved
}

func checkpointDigest(body string) string {
	sum := sha256.Sum256([]byte(body))
	return hex.EncodeToString(sum[:])
}

// writeCheckpoint keeps cp as the last checkpoint and drops those before
// it; a later one another verify wrote meanwhile stays the last.
func (s *Store) writeCheckpoint(ctx context.Context, cp ledger.Checkpoint) error {
	body, err := json.Marshal(cp)
	if err != nil {
		return fmt.Errorf("write checkpoint: %w", err)
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO verify_checkpoints (seq, at, checkpoint, digest) VALUES ($1, $2, $3, $4)
			ON CONFLICT (seq) DO UPDATE SET at = excluded.at, checkpoint = excluded.checkpoint, digest = excluded.digest`,
			cp.Seq, nanos(cp.At), string(body), checkpointDigest(string(body))); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM verify_checkpoints WHERE seq < $1`, cp.Seq)
		return err
	})
	if err != nil {
		return fmt.Errorf("write checkpoint at seq %d: %w", cp.Seq, err)
	}
	return nil
}

// runFiguresColumns reads a run as ledger.RunFigures, then the seq of its
// admit row (scanned by each into figures).
const runFiguresColumns = `r.id, r.tenant_id, r.period, r.status IN ('queued', 'active'), r.usage IN ('pending', 'unknown'),
	r.spent_units, r.held_units, r.overrun_units, r.cost_micros, r.reserve_micros, r.upstream, r.model, r.quota_day`

// countRuns counts the runs query selects into c: a checkpoint at the
// horizon keeps those admitted at or below it, and the next verify reads
// the others again by their admit rows.
func (v *verifier) countRuns(query string, args []any, c *ledger.RunsCount) {
	var r ledger.RunFigures
	var admitted int64
	v.eachWith(query, args, []any{&r.ID, &r.Tenant, &r.Period, &r.Open, &r.Holding, &r.Spent, &r.Held, &r.Overrun,
		&r.Cost, &r.Reserve, &r.Upstream, &r.Model, &r.QuotaDay, &admitted},
		func() { c.Add(admitted, r, admitted > 0 && admitted <= v.horizon) })
	c.Next.LastRow = max(v.horizon, 0)
}

// runsCheckpoint adds up every run, as the next checkpoint keeps them.
func (v *verifier) runsCheckpoint() *ledger.RunsCheckpoint {
	c := &ledger.RunsCount{}
	v.countRuns(`SELECT `+runFiguresColumns+`, coalesce(a.seq, 0) FROM runs r
		LEFT JOIN (SELECT run_id, min(seq) AS seq FROM audit WHERE kind = 'admit' AND balance GROUP BY run_id) a ON a.run_id = r.id`,
		nil, c)
	return c.Checkpoint()
}

// runsFromCheckpoint checks the books against the runs the way balances,
// periods and quotaDays do, counting only the runs admitted after the
// checkpoint and those it left pending, on top of the sums it kept of the
// rest, and returns what the next checkpoint keeps.
func (v *verifier) runsFromCheckpoint(cp *ledger.RunsCheckpoint) *ledger.RunsCheckpoint {
	c := ledger.CountFrom(cp)
	c.All.AddRows(v.archived.Rows())
	v.countRuns(`SELECT `+runFiguresColumns+`, a.seq FROM audit a JOIN runs r ON r.id = a.run_id
			WHERE a.kind = 'admit' AND a.balance AND a.seq > $1
		UNION ALL SELECT `+runFiguresColumns+`, $1 FROM runs r WHERE r.id = ANY($2)`,
		[]any{cp.LastRow, cp.Pending}, c)
	v.booksAgainst(&c.All)
	return c.Checkpoint()
}

// booksAgainst checks every tenant's balance row, period books and guarded
// model's day against t.
func (v *verifier) booksAgainst(t *ledger.Tally) {
	check := v.BooksAgainst(t)
	var b ledger.Balance
	var budget *int64
	v.each(`SELECT id, budget_units, spent_units, held_units, active, budget_micros, spent_micros, held_micros
		FROM tenants ORDER BY id`, []any{&b.TenantID, &b.BudgetUnits, &b.SpentUnits, &b.HeldUnits, &b.Active, &budget,
		&b.SpentMicros, &b.HeldMicros}, func() {
		b.BudgetMicros, b.HasMoneyBudget = moneyFrom(budget)
		check.Balance(b)
	})
	var tn ledger.Tenant
	var p ledger.PeriodBooks
	v.each(`SELECT p.tenant_id, p.period, t.budget_units, t.budget_micros, p.spent_units, p.held_units,
			p.spent_micros, p.held_micros FROM tenant_periods p JOIN tenants t ON t.id = p.tenant_id
		ORDER BY p.tenant_id, p.period`, []any{&tn.ID, &p.Label, &tn.BudgetUnits, &budget, &p.SpentUnits, &p.HeldUnits,
		&p.SpentMicros, &p.HeldMicros}, func() {
		tn.BudgetMicros, tn.HasMoneyBudget = moneyFrom(budget)
		check.Period(tn, p)
	})
	check.PeriodsDone()
	var k ledger.DayKey
	var usage, held ledger.Units
	v.each(`SELECT upstream, model, day, usage_units, held_units FROM quota_days`,
		[]any{&k.Upstream, &k.Model, &k.Day, &usage, &held}, func() { check.Day(k, usage, held) })
	check.DaysDone()
}
