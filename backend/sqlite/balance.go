package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/price"
)

const balanceQuery = `SELECT id, budget_units, spent_units, held_units, active,
	budget_micros, spent_micros, held_micros FROM tenants`

func scanBalance(r rowScanner) (ledger.Balance, error) {
	var b ledger.Balance
	var budget sql.NullInt64
	if err := r.Scan(&b.TenantID, &b.BudgetUnits, &b.SpentUnits, &b.HeldUnits, &b.Active,
		&budget, &b.SpentMicros, &b.HeldMicros); err != nil {
		return b, err
	}
	b.BudgetMicros, b.HasMoneyBudget = price.Micros(budget.Int64), budget.Valid
	b.AvailableUnits, b.AvailableMicros = b.Available(), b.AvailableMoney()
	return b, nil
}

// Balance returns one tenant's position (CodeInvalidAPIKey for an unknown tenant).
func (s *Store) Balance(ctx context.Context, tenantID string) (ledger.Balance, error) {
	b, err := scanBalance(s.queryRow(ctx, balanceQuery+` WHERE id = ?`, tenantID))
	if errors.Is(err, sql.ErrNoRows) {
		return b, ledger.Errorf(ledger.CodeInvalidAPIKey, "unknown tenant %q", tenantID)
	}
	if err != nil {
		return b, fmt.Errorf("balance of tenant %s: %w", tenantID, err)
	}
	return b, nil
}

// Balances returns every tenant's position, ordered by tenant id, from one
// consistent snapshot.
func (s *Store) Balances(ctx context.Context) ([]ledger.Balance, error) {
	rows, err := s.query(ctx, balanceQuery+` ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("balances: %w", err)
	}
	defer rows.Close()
	var out []ledger.Balance
	for rows.Next() {
		b, err := scanBalance(rows)
		if err != nil {
			return nil, fmt.Errorf("balances: %w", err)
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("balances: %w", err)
	}
	return out, nil
}
