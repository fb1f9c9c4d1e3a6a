package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"os"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/price"
)

// Verify opens the ledger at path (which must exist), checks it as
// Store.Verify does, and closes it. It is `quotagate verify`.
func Verify(ctx context.Context, path string) ([]string, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("verify ledger: %w", err)
	}
	s, err := Open(path, Options{})
	if err != nil {
		return nil, fmt.Errorf("verify ledger: %w", err)
	}
	problems, verr := s.Verify(ctx)
	if err := s.Close(); err != nil && verr == nil {
		verr = err
	}
	return problems, verr
}

// Verify recomputes every balance from the runs and from the audit log, in
// one read snapshot, and returns one line per difference:
//   - the file passes SQLite's quick_check;
//   - each tenant's balance row equals the sums over its runs (spent, held,
//     queued+active count) and has no negative figure;
//   - replaying the tenant's audit rows chains available_before to the
//     previous available_after and ends at the current available;
//   - the settle and reconcile audit rows add up to the tenant's spent;
//   - every run has exactly one admit row carrying its reserve, every admit
//     row has its run, and every settled or reconciled run has exactly one
//     row carrying its spent units;
//   - each guarded model's day equals the sums over its runs.
func (s *Store) Verify(ctx context.Context) ([]string, error) {
	tx, err := s.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	defer tx.Rollback()
	v := &verifier{ctx: ctx, tx: tx}
	v.quickCheck()
	v.balances()
	v.periods()
	v.auditChain()
	v.runsAgainstAudit()
	v.quotaDays()
	if v.err != nil {
		return nil, fmt.Errorf("verify: %w", v.err)
	}
	return v.Problems, nil
}

type verifier struct {
	ledger.Verification
	ctx context.Context
	tx  *sql.Tx
	err error
}

// each runs query and calls fn per row until an error.
func (v *verifier) each(query string, fn func(rows *sql.Rows) error) {
	if v.err != nil {
		return
	}
	rows, err := v.tx.QueryContext(v.ctx, query)
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

func (v *verifier) quickCheck() {
	v.each(`PRAGMA quick_check`, func(rows *sql.Rows) error {
		var line string
		if err := rows.Scan(&line); err != nil {
			return err
		}
		if line != "ok" {
			v.Addf("sqlite quick_check: %s", line)
		}
		return nil
	})
}

func (v *verifier) balances() {
	v.each(`SELECT t.id, t.budget_units, t.spent_units, t.held_units, t.active,
			coalesce(sum(CASE WHEN r.period = '' THEN r.spent_units END), 0),
			coalesce(sum(CASE WHEN r.period = '' THEN r.held_units END), 0),
			coalesce(sum(r.status IN ('queued', 'active')), 0),
			t.budget_micros, t.spent_micros, t.held_micros,
			coalesce(sum(CASE WHEN r.period = '' THEN r.cost_micros END), 0),
			coalesce(sum(CASE WHEN r.period = '' AND (r.usage = 'pending' OR r.usage = 'unknown') THEN r.reserve_micros END), 0)
		FROM tenants t LEFT JOIN runs r ON r.tenant_id = t.id GROUP BY t.id ORDER BY t.id`,
		func(rows *sql.Rows) error {
			var b ledger.Balance
			var spent, held ledger.Units
			var active int
			var budget sql.NullInt64
			var spentMicros, heldMicros price.Micros
			if err := rows.Scan(&b.TenantID, &b.BudgetUnits, &b.SpentUnits, &b.HeldUnits, &b.Active,
				&spent, &held, &active, &budget, &b.SpentMicros, &b.HeldMicros, &spentMicros, &heldMicros); err != nil {
				return err
			}
			b.BudgetMicros, b.HasMoneyBudget = price.Micros(budget.Int64), budget.Valid
			v.Tenant(b, spent, held, active)
			v.TenantMoney(b, spentMicros, heldMicros)
			return nil
		})
}

// runsMoney checks that each run's admit row carries its reserve's money
// and its settle or reconcile row its cost (rows before money carry 0, as
// their runs do).
func (v *verifier) runsMoney() {
	v.each(`SELECT r.id, CASE WHEN a.kind = 'admit' THEN 'reserve' ELSE 'cost' END,
			CASE WHEN a.kind = 'admit' THEN r.reserve_micros ELSE r.cost_micros END, sum(a.micros)
		FROM runs r JOIN audit a ON a.run_id = r.id AND a.balance = 1
			AND (a.kind = 'admit' OR a.kind = 'settle' OR a.kind = 'reconcile')
		GROUP BY r.id, a.kind = 'admit'
		HAVING sum(a.micros) != CASE WHEN a.kind = 'admit' THEN r.reserve_micros ELSE r.cost_micros END ORDER BY r.id`,
		func(rows *sql.Rows) error {
			var id, what string
			var want, got price.Micros
			if err := rows.Scan(&id, &what, &want, &got); err != nil {
				return err
			}
			v.RunMoneyRows(id, what, want, got)
			return nil
		})
}

func (v *verifier) auditChain() {
	v.each(`SELECT seq, tenant_id, period, kind, units, available_before, available_after FROM audit
		WHERE balance = 1 ORDER BY tenant_id, seq`, func(rows *sql.Rows) error {
		var seq int64
		var tenant, period, kind string
		var units, before, after ledger.Units
		if err := rows.Scan(&seq, &tenant, &period, &kind, &units, &before, &after); err != nil {
			return err
		}
		v.AuditRow(seq, tenant, period, ledger.AuditKind(kind), units, before, after)
		return nil
	})
	v.each(`SELECT p.tenant_id, p.period, t.budget_units - p.spent_units - p.held_units, p.spent_units
		FROM tenant_periods p JOIN tenants t ON t.id = p.tenant_id ORDER BY p.tenant_id, p.period`,
		func(rows *sql.Rows) error {
			var tenant, period string
			var avail, spent ledger.Units
			if err := rows.Scan(&tenant, &period, &avail, &spent); err != nil {
				return err
			}
			v.PeriodEnd(tenant, period, avail, spent)
			return nil
		})
	v.each(`SELECT id, budget_units - spent_units - held_units, spent_units FROM tenants ORDER BY id`,
		func(rows *sql.Rows) error {
			var tenant string
			var avail, spent ledger.Units
			if err := rows.Scan(&tenant, &avail, &spent); err != nil {
				return err
			}
			v.TenantEnd(tenant, avail, spent)
			return nil
		})
}

func (v *verifier) runsAgainstAudit() {
	v.each(`SELECT r.id, r.reserve_units, count(a.seq), coalesce(min(a.units), -1), coalesce(max(a.units), -1)
		FROM runs r LEFT JOIN audit a ON a.run_id = r.id AND a.kind = 'admit' AND a.balance = 1
		GROUP BY r.id HAVING count(a.seq) != 1 OR min(a.units) != r.reserve_units ORDER BY r.id`,
		func(rows *sql.Rows) error {
			var id string
			var reserve, lo, hi ledger.Units
			var n int
			if err := rows.Scan(&id, &reserve, &n, &lo, &hi); err != nil {
				return err
			}
			v.AdmitRows(id, reserve, n, lo, hi)
			return nil
		})
	v.runsMoney()
	v.each(`SELECT a.seq, a.run_id FROM audit a LEFT JOIN runs r ON r.id = a.run_id
		WHERE a.kind = 'admit' AND a.balance = 1 AND r.id IS NULL ORDER BY a.seq`,
		func(rows *sql.Rows) error {
			var seq int64
			var id string
			if err := rows.Scan(&seq, &id); err != nil {
				return err
			}
			v.MissingRun(seq, id)
			return nil
		})
	v.each(`SELECT r.id, r.usage, r.spent_units, count(a.seq), coalesce(min(a.units), -1)
		FROM runs r LEFT JOIN audit a ON a.run_id = r.id AND a.kind IN ('settle', 'reconcile') AND a.balance = 1
		WHERE r.usage IN ('trusted', 'reconciled') OR a.seq IS NOT NULL
		GROUP BY r.id HAVING count(a.seq) != 1 OR min(a.units) != r.spent_units OR r.usage NOT IN ('trusted', 'reconciled')
		ORDER BY r.id`,
		func(rows *sql.Rows) error {
			var id, usage string
			var spent, units ledger.Units
			var n int
			if err := rows.Scan(&id, &usage, &spent, &n, &units); err != nil {
				return err
			}
			v.SettleRows(id, usage, spent, n, units)
			return nil
		})
}

func (v *verifier) quotaDays() {
	v.each(`WITH sums AS (
			SELECT upstream, model, quota_day AS day, sum(spent_units + overrun_units) AS usage, sum(held_units) AS held
			FROM runs WHERE quota_day != '' GROUP BY upstream, model, quota_day
		), keys AS (
			SELECT upstream, model, day FROM sums UNION SELECT upstream, model, day FROM quota_days
		)
		SELECT k.upstream, k.model, k.day, coalesce(q.usage_units, 0), coalesce(q.held_units, 0),
			coalesce(s.usage, 0), coalesce(s.held, 0)
		FROM keys k
		LEFT JOIN quota_days q ON q.upstream = k.upstream AND q.model = k.model AND q.day = k.day
		LEFT JOIN sums s ON s.upstream = k.upstream AND s.model = k.model AND s.day = k.day
		WHERE coalesce(q.usage_units, 0) != coalesce(s.usage, 0) OR coalesce(q.held_units, 0) != coalesce(s.held, 0)
		ORDER BY k.upstream, k.model, k.day`,
		func(rows *sql.Rows) error {
			var up, model, day string
			var usage, held, rUsage, rHeld ledger.Units
			if err := rows.Scan(&up, &model, &day, &usage, &held, &rUsage, &rHeld); err != nil {
				return err
			}
			v.QuotaDay(up, model, day, usage, held, rUsage, rHeld)
			return nil
		})
}

// periods checks each tenant's period books against the sums over the runs
// admitted in it (a period with runs and no row, or a row and no runs, is
// compared with nothing spent or held).
func (v *verifier) periods() {
	v.each(`WITH sums AS (
			SELECT tenant_id, period, sum(spent_units) AS spent, sum(held_units) AS held, sum(cost_micros) AS cost,
				sum(CASE WHEN usage = 'pending' OR usage = 'unknown' THEN reserve_micros ELSE 0 END) AS held_micros
			FROM runs WHERE period != '' GROUP BY tenant_id, period
		), keys AS (
			SELECT tenant_id, period FROM sums UNION SELECT tenant_id, period FROM tenant_periods
		)
		SELECT k.tenant_id, k.period, t.budget_units, t.budget_micros,
			coalesce(p.spent_units, 0), coalesce(p.held_units, 0), coalesce(p.spent_micros, 0), coalesce(p.held_micros, 0),
			coalesce(s.spent, 0), coalesce(s.held, 0), coalesce(s.cost, 0), coalesce(s.held_micros, 0)
		FROM keys k JOIN tenants t ON t.id = k.tenant_id
		LEFT JOIN tenant_periods p ON p.tenant_id = k.tenant_id AND p.period = k.period
		LEFT JOIN sums s ON s.tenant_id = k.tenant_id AND s.period = k.period
		ORDER BY k.tenant_id, k.period`,
		func(rows *sql.Rows) error {
			var t ledger.Tenant
			var b, r ledger.PeriodBooks
			var budget sql.NullInt64
			if err := rows.Scan(&t.ID, &b.Label, &t.BudgetUnits, &budget, &b.SpentUnits, &b.HeldUnits, &b.SpentMicros,
				&b.HeldMicros, &r.SpentUnits, &r.HeldUnits, &r.SpentMicros, &r.HeldMicros); err != nil {
				return err
			}
			t.BudgetMicros, t.HasMoneyBudget = price.Micros(budget.Int64), budget.Valid
			r.Label = b.Label
			v.Period(t, b, r)
			return nil
		})
}
