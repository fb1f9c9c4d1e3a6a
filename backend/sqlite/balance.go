package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/quotagate/quotagate/backend/internal/ledgersql"
	"github.com/quotagate/quotagate/backend/ledger"
)

// tenantBalance is a tenant's row as a balance reads it, with its calendar.
type tenantBalance struct {
	ledger.Balance
	pos ledger.Position // the calendar only
}

func scanBalance(r ledgersql.Scanner) (tenantBalance, error) {
	var b tenantBalance
	var err error
	b.Balance, b.pos.Calendar, err = ledgersql.ScanBalance(r)
	return b, err
}

// inPeriod is b as of now: for a tenant that renews, its current period's
// figures (nothing spent or held in a period without a row yet).
func (s *Store) inPeriod(ctx context.Context, q interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}, b tenantBalance) (ledger.Balance, error) {
	per := b.pos.Current(s.opts.Now())
	if !per.Bounded() {
		return b.Balance, nil
	}
	books := ledger.NewPeriodBooks(per)
	err := q.QueryRowContext(ctx, `SELECT spent_units, held_units, spent_micros, held_micros FROM tenant_periods
		WHERE tenant_id = ? AND period = ?`, b.TenantID, per.Label).Scan(
		&books.SpentUnits, &books.HeldUnits, &books.SpentMicros, &books.HeldMicros)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return b.Balance, fmt.Errorf("period %s of tenant %s: %w", per.Label, b.TenantID, err)
	}
	return b.WithPeriod(per, books), nil
}

// Balance returns one tenant's position (CodeInvalidAPIKey for an unknown
// tenant), in its current period for a tenant that renews.
func (s *Store) Balance(ctx context.Context, tenantID string) (ledger.Balance, error) {
	out, err := s.balances(ctx, ledgersql.Balances+` WHERE id = ?`, tenantID)
	return ledger.OnlyBalance(tenantID, out, err)
}

// Balances returns every tenant's position, ordered by tenant id, from one
// consistent snapshot.
func (s *Store) Balances(ctx context.Context) ([]ledger.Balance, error) {
	out, err := s.balances(ctx, ledgersql.Balances+` ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("balances: %w", err)
	}
	return out, nil
}

// balances reads the tenants query selects and their current periods in
// one read transaction.
func (s *Store) balances(ctx context.Context, query string, args ...any) ([]ledger.Balance, error) {
	tx, err := s.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	var read []tenantBalance
	for rows.Next() {
		b, err := scanBalance(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		read = append(read, b)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]ledger.Balance, 0, len(read))
	for _, b := range read {
		bal, err := s.inPeriod(ctx, tx, b)
		if err != nil {
			return nil, err
		}
		out = append(out, bal)
	}
	return out, nil
}
