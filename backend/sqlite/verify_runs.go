package sqlite

import (
	"database/sql"
	"encoding/json"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/price"
)

// runFiguresColumns reads a run as ledger.RunFigures (scanRunFigures).
const runFiguresColumns = `r.rowid, r.id, r.tenant_id, r.period, r.status = 'queued' OR r.status = 'active',
	r.usage = 'pending' OR r.usage = 'unknown', r.spent_units, r.held_units, r.overrun_units, r.cost_micros,
	r.reserve_micros, r.upstream, r.model, r.quota_day`

func scanRunFigures(rows *sql.Rows) (int64, ledger.RunFigures, error) {
	var row int64
	var r ledger.RunFigures
	err := rows.Scan(&row, &r.ID, &r.Tenant, &r.Period, &r.Open, &r.Holding, &r.Spent, &r.Held, &r.Overrun,
		&r.Cost, &r.Reserve, &r.Upstream, &r.Model, &r.QuotaDay)
	return row, r, err
}

// tallyRuns counts the runs query selects into c, every one kept by the
// next checkpoint.
func (v *verifier) tallyRuns(query string, args []any, c *ledger.RunsCount) {
	v.each2(query, args, func(rows *sql.Rows) error {
		row, r, err := scanRunFigures(rows)
		if err != nil {
			return err
		}
		c.Add(row, r, true)
		return nil
	})
}

// runsFromCheckpoint checks the books against the runs the way balances,
// periods and quotaDays do, counting only the runs written after the
// checkpoint cp and those it left pending, on top of the sums it kept of
// the rest, and returns what the next checkpoint keeps.
func (v *verifier) runsFromCheckpoint(cp *ledger.RunsCheckpoint) *ledger.RunsCheckpoint {
	c := ledger.CountFrom(cp)
	pendingJSON, err := json.Marshal(cp.Pending)
	if err != nil {
		v.err = err
		return nil
	}
	v.tallyRuns(`SELECT `+runFiguresColumns+` FROM runs r WHERE r.rowid > ?1
		UNION ALL SELECT `+runFiguresColumns+` FROM runs r WHERE r.rowid <= ?1 AND r.id IN (SELECT value FROM json_each(?2))`,
		[]any{cp.LastRow, string(pendingJSON)}, c)
	v.archivedTally(&c.All)
	v.booksAgainst(&c.All)
	return c.Checkpoint()
}

// runsCheckpoint adds up every run, as the next checkpoint keeps them.
func (v *verifier) runsCheckpoint() *ledger.RunsCheckpoint {
	c := &ledger.RunsCount{}
	v.tallyRuns(`SELECT `+runFiguresColumns+` FROM runs r`, nil, c)
	return c.Checkpoint()
}

// archivedTally adds the archived months' summaries to t.
func (v *verifier) archivedTally(t *ledger.Tally) {
	var s ledger.ArchiveSummary
	v.scan(`SELECT tenant_id, period, spent_units, spent_micros FROM archive_summaries`,
		[]any{&s.TenantID, &s.Period, &s.SpentUnits, &s.SpentMicros}, func() { t.AddSummary(s) })
	var q ledger.ArchivedQuota
	v.scan(`SELECT upstream, model, day, usage_units FROM archive_quota_days`,
		[]any{&q.Upstream, &q.Model, &q.Day, &q.Usage}, func() { t.AddQuota(q) })
}

// booksAgainst checks every tenant's balance row, period books and guarded
// model's day against t.
func (v *verifier) booksAgainst(t *ledger.Tally) {
	check := v.BooksAgainst(t)
	v.each(`SELECT id, budget_units, spent_units, held_units, active, budget_micros, spent_micros, held_micros
		FROM tenants ORDER BY id`, func(rows *sql.Rows) error {
		var b ledger.Balance
		var budget sql.NullInt64
		if err := rows.Scan(&b.TenantID, &b.BudgetUnits, &b.SpentUnits, &b.HeldUnits, &b.Active, &budget,
			&b.SpentMicros, &b.HeldMicros); err != nil {
			return err
		}
		b.BudgetMicros, b.HasMoneyBudget = price.Micros(budget.Int64), budget.Valid
		check.Balance(b)
		return nil
	})
	v.each(`SELECT p.tenant_id, p.period, t.budget_units, t.budget_micros, p.spent_units, p.held_units,
			p.spent_micros, p.held_micros FROM tenant_periods p JOIN tenants t ON t.id = p.tenant_id
		ORDER BY p.tenant_id, p.period`, func(rows *sql.Rows) error {
		var tn ledger.Tenant
		var b ledger.PeriodBooks
		var budget sql.NullInt64
		if err := rows.Scan(&tn.ID, &b.Label, &tn.BudgetUnits, &budget, &b.SpentUnits, &b.HeldUnits,
			&b.SpentMicros, &b.HeldMicros); err != nil {
			return err
		}
		tn.BudgetMicros, tn.HasMoneyBudget = price.Micros(budget.Int64), budget.Valid
		check.Period(tn, b)
		return nil
	})
	check.PeriodsDone()
	var k ledger.DayKey
	var usage, held ledger.Units
	v.scan(`SELECT upstream, model, day, usage_units, held_units FROM quota_days ORDER BY upstream, model, day`,
		[]any{&k.Upstream, &k.Model, &k.Day, &usage, &held}, func() { check.Day(k, usage, held) })
	check.DaysDone()
}

// each2 runs query with args and calls fn per row until an error.
func (v *verifier) each2(query string, args []any, fn func(rows *sql.Rows) error) {
	if v.err != nil {
		return
	}
	rows, err := v.tx.QueryContext(v.ctx, query, args...)
	if err != nil {
		v.err = err
		return
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			v.err = err
			return
		}
	}
	v.err = rows.Err()
}
