package ledgersql

import (
	"context"
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
	var t tenantRow
	if err := r.Scan(t.into()...); err != nil {
		return t.pos, err
	}
	return t.position()
}

// TenantBalances selects every tenant's id and PositionColumns, as
// ScanBalance reads them; Reads adds a WHERE or an ORDER BY.
const TenantBalances = `SELECT id, ` + PositionColumns + ` FROM tenants`

// ScanBalance reads a row of TenantBalances as a balance, with the calendar that
// says which period's books the balance shows.
func ScanBalance(r Scanner) (ledger.Balance, period.Calendar, error) {
	var id string
	var t tenantRow
	if err := r.Scan(append([]any{&id}, t.into()...)...); err != nil {
		return ledger.Balance{}, period.Calendar{}, err
	}
	p, err := t.position()
	b := ledger.Balance{TenantID: id, BudgetUnits: p.BudgetUnits, SpentUnits: p.SpentUnits, HeldUnits: p.HeldUnits,
		Active: p.Active, SpentMicros: p.SpentMicros, HeldMicros: p.HeldMicros,
		BudgetMicros: p.BudgetMicros, HasMoneyBudget: p.HasMoneyBudget}
	b.AvailableUnits, b.AvailableMicros = b.Available(), b.AvailableMoney()
	if err != nil {
		return b, p.Calendar, fmt.Errorf("calendar of tenant %s: %w", id, err)
	}
	return b, p.Calendar, nil
}

// tenantRow is a tenant's row while it is scanned, its columns as the
// stores keep them.
type tenantRow struct {
	pos        ledger.Position
	budget     *int64
	kind, zone string
	weekStarts int
}

// into is where a Scan of PositionColumns writes.
func (t *tenantRow) into() []any {
	return []any{&t.pos.BudgetUnits, &t.pos.SpentUnits, &t.pos.HeldUnits, &t.pos.Active, &t.pos.MaxConcurrent,
		&t.budget, &t.pos.SpentMicros, &t.pos.HeldMicros, &t.kind, &t.zone, &t.weekStarts}
}

// position is the row read as a position.
func (t *tenantRow) position() (ledger.Position, error) {
	p := t.pos
	p.BudgetMicros, p.HasMoneyBudget = MoneyFrom(t.budget)
	var err error
	p.Calendar, err = ledger.CalendarOf(t.kind, t.zone, t.weekStarts)
	return p, err
}

// MoneyFrom reads a tenant's money budget column: NULL is none.
func MoneyFrom(budget *int64) (price.Micros, bool) {
	if budget == nil {
		return 0, false
	}
	return price.Micros(*budget), true
}

// storedTenants selects every tenant as LoadTenants reads it.
const storedTenants = `SELECT id, budget_units, max_concurrent, allowed_models, per_minute, per_hour,
	spent_units, held_units, budget_micros, spent_micros, held_micros, budget_period, timezone, week_starts
	FROM tenants ORDER BY id`

// LoadTenants reads every tenant as stored, ordered by id, with its key
// hashes; lock is appended to the tenants' SELECT (PostgreSQL's FOR
// UPDATE, while a gateway applies its configuration).
func LoadTenants(ctx context.Context, q Querier, lock string) ([]ledger.StoredTenant, error) {
	out, err := List(ctx, q, scanStoredTenant, "load tenants", storedTenants+lock)
	if err != nil {
		return nil, err
	}
	idx := map[string]int{}
	for i, t := range out {
		idx[t.ID] = i
	}
	keys, err := List(ctx, q, scanKey, "load tenant keys", `SELECT tenant_id, key_hash FROM tenant_keys ORDER BY tenant_id, key_hash`)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		if i, ok := idx[k[0]]; ok {
			out[i].KeyHashes = append(out[i].KeyHashes, k[1])
		}
	}
	return out, nil
}

func scanStoredTenant(r Scanner) (ledger.StoredTenant, error) {
	var t ledger.StoredTenant
	var models string
	var budget *int64
	var kind, zone string
	var weekStarts int
	if err := r.Scan(&t.ID, &t.BudgetUnits, &t.MaxConcurrent, &models, &t.PerMinute, &t.PerHour,
		&t.SpentUnits, &t.HeldUnits, &budget, &t.SpentMicros, &t.HeldMicros, &kind, &zone, &weekStarts); err != nil {
		return t, err
	}
	t.BudgetMicros, t.HasMoneyBudget = MoneyFrom(budget)
	var err error
	if t.Calendar, err = ledger.CalendarOf(kind, zone, weekStarts); err != nil {
		return t, fmt.Errorf("calendar of %s: %w", t.ID, err)
	}
	if t.AllowedModels, err = ledger.ParseAllowedModels(models); err != nil {
		return t, fmt.Errorf("allowed_models of %s: %w", t.ID, err)
	}
	return t, nil
}

// scanKey reads a tenant_keys row: the tenant and a key hash.
func scanKey(r Scanner) ([2]string, error) {
	var k [2]string
	err := r.Scan(&k[0], &k[1])
	return k, err
}
