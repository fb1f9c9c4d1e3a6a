package ledgersql

import (
	"fmt"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/period"
	"github.com/quotagate/quotagate/backend/price"
)

// PositionColumns are what ScanPosition reads of a tenant's row.
const PositionColumns = `budget_units, spent_units, held_units, active, max_concurrent,
	budget_micros, spent_micros, held_micros, budget_period, timezone, week_starts`

// ScanPosition reads PositionColumns: the tenant's budget and books, and
// the calendar its budget renews by.
func ScanPosition(r Scanner) (ledger.Position, error) {
	var b ledger.Position
	var budget *int64
	var kind, zone string
	var weekStarts int
	if err := r.Scan(&b.BudgetUnits, &b.SpentUnits, &b.HeldUnits, &b.Active, &b.MaxConcurrent,
		&budget, &b.SpentMicros, &b.HeldMicros, &kind, &zone, &weekStarts); err != nil {
		return b, err
	}
	b.BudgetMicros, b.HasMoneyBudget = MoneyFrom(budget)
	var err error
	b.Calendar, err = ledger.CalendarOf(kind, zone, weekStarts)
	return b, err
}

// MoneyFrom reads a tenant's money budget column: NULL is none.
func MoneyFrom(budget *int64) (price.Micros, bool) {
	if budget == nil {
		return 0, false
	}
	return price.Micros(*budget), true
}

// Balances selects every tenant's row as ScanBalance reads it; a store adds
// its WHERE or ORDER BY.
const Balances = `SELECT id, budget_units, spent_units, held_units, active,
	budget_micros, spent_micros, held_micros, budget_period, timezone, week_starts FROM tenants`

// ScanBalance reads a row of Balances as a balance, with the calendar that
// says which period's books the balance shows.
func ScanBalance(r Scanner) (ledger.Balance, period.Calendar, error) {
	var b ledger.Balance
	var budget *int64
	var kind, zone string
	var weekStarts int
	if err := r.Scan(&b.TenantID, &b.BudgetUnits, &b.SpentUnits, &b.HeldUnits, &b.Active,
		&budget, &b.SpentMicros, &b.HeldMicros, &kind, &zone, &weekStarts); err != nil {
		return b, period.Calendar{}, err
	}
	b.BudgetMicros, b.HasMoneyBudget = MoneyFrom(budget)
	b.AvailableUnits, b.AvailableMicros = b.Available(), b.AvailableMoney()
	cal, err := ledger.CalendarOf(kind, zone, weekStarts)
	if err != nil {
		return b, cal, fmt.Errorf("calendar of tenant %s: %w", b.TenantID, err)
	}
	return b, cal, nil
}
