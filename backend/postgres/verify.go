package postgres

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quotagate/quotagate/backend/internal/ledgersql"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/price"
)

// Verify opens the ledger at dsn, checks it as Store.Verify does, and
// closes it. It is `quotagate verify` on PostgreSQL; an unreachable
// database is an error.
func Verify(ctx context.Context, dsn string) ([]string, error) {
	return VerifyWith(ctx, dsn, ledger.VerifyOptions{Full: true})
}

// VerifyWith is Verify with opts (see Store.VerifyWith).
func VerifyWith(ctx context.Context, dsn string, opts ledger.VerifyOptions) ([]string, error) {
	s, err := Open(ctx, dsn, Options{Instance: "verify"})
	if err != nil {
		return nil, fmt.Errorf("verify ledger: %w", err)
	}
	problems, verr := s.VerifyWith(ctx, opts)
	if err := s.Close(); err != nil && verr == nil {
		verr = err
	}
	return problems, verr
}

// Verify recomputes every balance from the runs and from the audit log
// (and the summaries of archived months), in one REPEATABLE READ snapshot,
// with the checks of backend/sqlite's Verify (except SQLite's
// quick_check): balance rows against their runs, the per-tenant audit
// chain, admit and settle rows against runs, each guarded model's day
// against its runs, and each archive summary against its audit row.
func (s *Store) Verify(ctx context.Context) ([]string, error) {
	return s.VerifyWith(ctx, ledger.VerifyOptions{Full: true})
}

// VerifyWith is Verify; unless opts.Full, the replay starts from the last
// checkpoint, and the per-run checks cover the runs with an audit row
// after it; with opts.Checkpoint a clean replay writes a new one, at the
// horizon below which no gateway sharing the ledger can still commit a
// row (see horizon).
func (s *Store) VerifyWith(ctx context.Context, opts ledger.VerifyOptions) ([]string, error) {
	v, err := s.verify(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	return v.Problems, nil
}

func (s *Store) verify(ctx context.Context, opts ledger.VerifyOptions) (*verifier, error) {
	v := &verifier{ctx: ctx, horizon: -1}
	if opts.Checkpoint {
		seq, ok, err := s.horizon(ctx)
		if err != nil {
			return nil, err
		}
		if ok {
			v.horizon = seq
		}
	}
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(context.Background())
	v.tx = tx
	v.start(opts.Full)
	runs := v.checkRuns()
	cp := v.auditChain(s.opts.Now())
	v.runsAgainstAudit()
	if v.err != nil {
		return nil, v.err
	}
	tx.Rollback(context.Background())
	if v.horizon >= 0 && len(v.Problems) == 0 {
		cp.Runs = runs
		if err := s.writeCheckpoint(ctx, cp); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// start reads where the replay begins: the last checkpoint, or the first
// row when full (the checkpoint is then compared as the replay passes it),
// and the summaries of archived months.
func (v *verifier) start(full bool) {
	cp, ok := v.readCheckpoint()
	v.after, v.runs = v.Start(cp, ok, full)
	if v.horizon < v.after {
		v.horizon = -1 // another verify's checkpoint is already past this one's
	}
	v.summaries(v.after == 0)
}

// checkRuns checks the books against the runs, from what the checkpoint
// kept of them or else from every run, and returns what the checkpoint
// this verify writes keeps (nil: it writes none).
func (v *verifier) checkRuns() *ledger.RunsCheckpoint {
	if v.runs != nil {
		return v.runsFromCheckpoint(v.runs)
	}
	v.balances()
	v.periods()
	v.quotaDays()
	if v.horizon < 0 {
		return nil
	}
	return v.runsCheckpoint()
}

type verifier struct {
	ledger.Verification
	ctx context.Context
	tx  pgx.Tx
	err error
	// horizon is where the checkpoint this verify writes stands (-1: it
	// writes none).
	horizon int64
	after   int64 // the checkpoint's seq: rows up to it were replayed before
	// runs is what the checkpoint kept of the runs (nil: every run is
	// added up).
	runs *ledger.RunsCheckpoint
	// archived adds up the summaries of archived months.
	archived ledger.Tally
}

// each runs query and calls fn with the scanned row until an error.
func (v *verifier) each(query string, dest []any, fn func()) {
	v.eachWith(query, nil, dest, fn)
}

// eachWith is each with the query's arguments.
func (v *verifier) eachWith(query string, args []any, dest []any, fn func()) {
	if v.err != nil {
		return
	}
	rows, err := v.tx.Query(v.ctx, query, args...)
	if err != nil {
		v.err = err
		return
	}
	_, v.err = pgx.ForEachRow(rows, dest, func() error { fn(); return nil })
}

// runsFrom is the runs (as r) a per-run check covers: those with an audit
// row after the checkpoint (every run on a full replay): the others were
// checked then, and a run that ended does not change.
func (v *verifier) runsFrom() string {
	if v.after == 0 {
		return "runs r"
	}
	return fmt.Sprintf("(SELECT DISTINCT run_id FROM audit WHERE seq > %d AND run_id <> '') touched JOIN runs r ON r.id = touched.run_id", v.after)
}

// summaries checks each archive summary against its audit row and, on a
// replay from the first row, tells the replay of it (a replay from a
// checkpoint starts past the rows it stands for).
func (v *verifier) summaries(fromFirst bool) {
	var sum ledger.ArchiveSummary
	var seq int64
	var recorded string
	v.each(`SELECT s.month, s.part, s.tenant_id, s.period, s.runs, s.rows, s.spent_units, s.spent_micros, s.net_units,
			s.settled_units, s.first_seq, s.last_seq, s.hash, s.audit_seq, coalesce(a.detail, '')
		FROM archive_summaries s LEFT JOIN audit a ON a.seq = s.audit_seq AND a.kind = 'archive'
		ORDER BY s.month, s.part, s.tenant_id, s.period`,
		[]any{&sum.Month, &sum.Part, &sum.TenantID, &sum.Period, &sum.Runs, &sum.Rows, &sum.SpentUnits, &sum.SpentMicros,
			&sum.Net, &sum.Settled, &sum.FirstSeq, &sum.LastSeq, &sum.Hash, &seq, &recorded},
		func() {
			v.ArchiveDigest(sum, seq, recorded)
			v.archived.AddSummary(sum)
			if fromFirst {
				v.Archived(sum)
			}
		})
	var q ledger.ArchivedQuota
	v.each(`SELECT upstream, model, day, usage_units FROM archive_quota_days`,
		[]any{&q.Upstream, &q.Model, &q.Day, &q.Usage}, func() { v.archived.AddQuota(q) })
}

func (v *verifier) balances() {
	var b ledger.Balance
	var spent, held ledger.Units
	var active int
	var budget *int64
	var spentMicros, heldMicros price.Micros
	v.each(`SELECT t.id, t.budget_units, t.spent_units, t.held_units, t.active,
			coalesce(sum(r.spent_units) FILTER (WHERE r.period = ''), 0)::bigint + (SELECT coalesce(sum(s.spent_units), 0)
				FROM archive_summaries s WHERE s.tenant_id = t.id AND s.period = '')::bigint,
			coalesce(sum(r.held_units) FILTER (WHERE r.period = ''), 0)::bigint,
			count(r.id) FILTER (WHERE r.status IN ('queued', 'active'))::int,
			t.budget_micros, t.spent_micros, t.held_micros,
			coalesce(sum(r.cost_micros) FILTER (WHERE r.period = ''), 0)::bigint + (SELECT coalesce(sum(s.spent_micros), 0)
				FROM archive_summaries s WHERE s.tenant_id = t.id AND s.period = '')::bigint,
			coalesce(sum(r.reserve_micros) FILTER (WHERE r.period = '' AND r.usage IN ('pending', 'unknown')), 0)::bigint
		FROM tenants t LEFT JOIN runs r ON r.tenant_id = t.id GROUP BY t.id ORDER BY t.id`,
		[]any{&b.TenantID, &b.BudgetUnits, &b.SpentUnits, &b.HeldUnits, &b.Active, &spent, &held, &active,
			&budget, &b.SpentMicros, &b.HeldMicros, &spentMicros, &heldMicros},
		func() {
			b.BudgetMicros, b.HasMoneyBudget = moneyFrom(budget)
			v.Tenant(b, spent, held, active)
			v.TenantMoney(b, spentMicros, heldMicros)
		})
}

// auditChain replays the audit rows after the checkpoint it started from,
// in two stretches when it writes one: up to the horizon, where the
// checkpoint is taken, then the rows the snapshot holds past it (which
// the next verify replays again), so that the ends are checked against
// the whole snapshot.
func (v *verifier) auditChain(now time.Time) (cp ledger.Checkpoint) {
	var seq int64
	var tenant, per, kind string
	var units, before, after ledger.Units
	replay := func(from, to int64) {
		v.eachWith(`SELECT seq, tenant_id, period, kind, units, available_before, available_after FROM audit
			WHERE balance AND seq > $1 AND seq <= $2 ORDER BY tenant_id, seq`, []any{from, to},
			[]any{&seq, &tenant, &per, &kind, &units, &before, &after},
			func() { v.AuditRow(seq, tenant, per, ledger.AuditKind(kind), units, before, after) })
	}
	from := v.after
	if v.horizon >= 0 {
		replay(from, v.horizon)
		cp = v.Checkpoint(v.horizon, now)
		from = v.horizon
	}
	replay(from, math.MaxInt64)
	v.EndReplay()
	var avail, spent ledger.Units
	v.each(ledgersql.TenantEnds, []any{&tenant, &avail, &spent}, func() { v.TenantEnd(tenant, avail, spent) })
	v.each(ledgersql.PeriodEnds, []any{&tenant, &per, &avail, &spent}, func() { v.PeriodEnd(tenant, per, avail, spent) })
	return cp
}

func (v *verifier) runsAgainstAudit() {
	var id, usage string
	var reserve, lo, hi, spent, units ledger.Units
	var n int
	var seq int64
	v.each(`SELECT r.id, r.reserve_units, count(a.seq)::int, coalesce(min(a.units), -1), coalesce(max(a.units), -1)
		FROM `+v.runsFrom()+` LEFT JOIN audit a ON a.run_id = r.id AND a.kind = 'admit' AND a.balance
		GROUP BY r.id HAVING count(a.seq) != 1 OR min(a.units) != r.reserve_units ORDER BY r.id`,
		[]any{&id, &reserve, &n, &lo, &hi}, func() { v.AdmitRows(id, reserve, n, lo, hi) })
	var what string
	var want, got price.Micros
	// Each run's admit row carries its reserve's money and its settle or
	// reconcile row its cost (rows before money carry 0, as their runs do).
	v.each(`SELECT r.id, CASE WHEN a.kind = 'admit' THEN 'reserve' ELSE 'cost' END,
			CASE WHEN a.kind = 'admit' THEN r.reserve_micros ELSE r.cost_micros END, sum(a.micros)::bigint
		FROM `+v.runsFrom()+` JOIN audit a ON a.run_id = r.id AND a.balance AND a.kind IN ('admit', 'settle', 'reconcile')
		GROUP BY r.id, a.kind = 'admit'
		HAVING sum(a.micros) != CASE WHEN a.kind = 'admit' THEN r.reserve_micros ELSE r.cost_micros END ORDER BY r.id`,
		[]any{&id, &what, &want, &got}, func() { v.RunMoneyRows(id, what, want, got) })
	v.eachWith(`SELECT a.seq, a.run_id FROM audit a LEFT JOIN runs r ON r.id = a.run_id
		WHERE a.kind = 'admit' AND a.balance AND r.id IS NULL AND a.seq > $1 ORDER BY a.seq`, []any{v.after},
		[]any{&seq, &id}, func() { v.MissingRun(seq, id) })
	v.each(`SELECT r.id, r.usage, r.spent_units, count(a.seq)::int, coalesce(min(a.units), -1)
		FROM `+v.runsFrom()+` LEFT JOIN audit a ON a.run_id = r.id AND a.kind IN ('settle', 'reconcile') AND a.balance
		WHERE r.usage IN ('trusted', 'reconciled') OR a.seq IS NOT NULL
		GROUP BY r.id HAVING count(a.seq) != 1 OR min(a.units) != r.spent_units OR r.usage NOT IN ('trusted', 'reconciled')
		ORDER BY r.id`,
		[]any{&id, &usage, &spent, &n, &units}, func() { v.SettleRows(id, usage, spent, n, units) })
}

func (v *verifier) quotaDays() {
	var up, model, day string
	var usage, held, rUsage, rHeld ledger.Units
	v.each(`WITH sums AS (
			SELECT upstream, model, day, sum(usage) AS usage, sum(held) AS held FROM (
				SELECT upstream, model, quota_day AS day, spent_units + overrun_units AS usage, held_units AS held
				FROM runs WHERE quota_day != ''
				UNION ALL SELECT upstream, model, day, usage_units, 0 FROM archive_quota_days
			) u GROUP BY upstream, model, day
		), keys AS (
			SELECT upstream, model, day FROM sums UNION SELECT upstream, model, day FROM quota_days
		)
		SELECT k.upstream, k.model, k.day, coalesce(q.usage_units, 0), coalesce(q.held_units, 0),
			coalesce(s.usage, 0)::bigint, coalesce(s.held, 0)::bigint
		FROM keys k
		LEFT JOIN quota_days q ON q.upstream = k.upstream AND q.model = k.model AND q.day = k.day
		LEFT JOIN sums s ON s.upstream = k.upstream AND s.model = k.model AND s.day = k.day
		WHERE coalesce(q.usage_units, 0) != coalesce(s.usage, 0) OR coalesce(q.held_units, 0) != coalesce(s.held, 0)
		ORDER BY k.upstream, k.model, k.day`,
		[]any{&up, &model, &day, &usage, &held, &rUsage, &rHeld}, func() { v.QuotaDay(up, model, day, usage, held, rUsage, rHeld) })
}

// periods checks each tenant's period books against the sums over the
// runs admitted in it (a missing row or missing runs count as nothing).
func (v *verifier) periods() {
	var t ledger.Tenant
	var b, r ledger.PeriodBooks
	var budget *int64
	v.each(`SELECT t.id, coalesce(p.period, s.period), t.budget_units, t.budget_micros,
			coalesce(p.spent_units, 0), coalesce(p.held_units, 0), coalesce(p.spent_micros, 0), coalesce(p.held_micros, 0),
			coalesce(s.spent, 0)::bigint, coalesce(s.held, 0)::bigint, coalesce(s.cost, 0)::bigint, coalesce(s.held_micros, 0)::bigint
		FROM tenant_periods p
		FULL JOIN (SELECT tenant_id, period, sum(spent) AS spent, sum(held) AS held, sum(cost) AS cost,
				sum(held_micros) AS held_micros FROM (
				SELECT tenant_id, period, spent_units AS spent, held_units AS held, cost_micros AS cost,
					CASE WHEN usage IN ('pending', 'unknown') THEN reserve_micros ELSE 0 END AS held_micros
				FROM runs WHERE period <> ''
				UNION ALL SELECT tenant_id, period, spent_units, 0, spent_micros, 0 FROM archive_summaries WHERE period <> ''
			) u GROUP BY tenant_id, period) s ON s.tenant_id = p.tenant_id AND s.period = p.period
		JOIN tenants t ON t.id = coalesce(p.tenant_id, s.tenant_id)
		ORDER BY 1, 2`,
		[]any{&t.ID, &b.Label, &t.BudgetUnits, &budget, &b.SpentUnits, &b.HeldUnits, &b.SpentMicros, &b.HeldMicros,
			&r.SpentUnits, &r.HeldUnits, &r.SpentMicros, &r.HeldMicros},
		func() {
			t.BudgetMicros, t.HasMoneyBudget = moneyFrom(budget)
			r.Label = b.Label
			v.Period(t, b, r)
		})
}
