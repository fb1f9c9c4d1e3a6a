package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/period"
)

// periodBooksColumns are what scanPeriodBooks reads of a tenant_periods row.
const periodBooksColumns = `spent_units, held_units, spent_micros, held_micros`

func scanPeriodBooks(r pgx.Row, b *ledger.PeriodBooks) error {
	return r.Scan(&b.SpentUnits, &b.HeldUnits, &b.SpentMicros, &b.HeldMicros)
}

// readPeriod reads a tenant's books of per (nothing spent or held when the
// period has no row yet).
func readPeriod(ctx context.Context, q queryRower, tenantID string, per period.Period) (ledger.PeriodBooks, error) {
	b := ledger.NewPeriodBooks(per)
	err := scanPeriodBooks(q.QueryRow(ctx, `SELECT `+periodBooksColumns+` FROM tenant_periods
		WHERE tenant_id = $1 AND period = $2`, tenantID, per.Label), &b)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return b, fmt.Errorf("period %s of tenant %s: %w", per.Label, tenantID, err)
	}
	return b, nil
}

// readPosition is readBalance as admission checks it: for a tenant whose
// budget renews, in its current period's books.
func readPosition(ctx context.Context, w *wtx, tenantID string, lock bool) (ledger.Position, bool, error) {
	b, ok, err := readBalance(ctx, w, tenantID, lock)
	if err != nil || !ok {
		return b, ok, err
	}
	if per := b.Current(w.now); per.Bounded() {
		books, err := readPeriod(ctx, w, tenantID, per)
		if err != nil {
			return b, false, err
		}
		b = b.InPeriod(books)
	}
	return b, true, nil
}

// takePeriodHold takes req's hold in the current period's books of a
// tenant whose budget renews (b: its row, locked by the admission's
// UPDATE), if they have it available; the position returned is the
// period's after the hold. A tenant that never renews took its hold on
// its row: b is returned as it is.
func takePeriodHold(ctx context.Context, w *wtx, req ledger.AdmitRequest, b ledger.Position) (ledger.Position, error) {
	per := b.Current(w.now)
	if !per.Bounded() {
		return b, nil
	}
	if _, err := w.Exec(ctx, `INSERT INTO tenant_periods (tenant_id, period, starts_at, ends_at)
		VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`, req.TenantID, per.Label, nanos(per.Start), nanos(per.End)); err != nil {
		return b, fmt.Errorf("period %s of tenant %s: %w", per.Label, req.TenantID, err)
	}
	books := ledger.NewPeriodBooks(per)
	err := scanPeriodBooks(w.QueryRow(ctx, `UPDATE tenant_periods SET held_units = held_units + $3,
		held_micros = held_micros + $4 WHERE tenant_id = $1 AND period = $2
		AND $5 - spent_units - held_units >= $3 AND (NOT $6 OR $7 - spent_micros - held_micros >= $4)
		RETURNING `+periodBooksColumns, req.TenantID, per.Label, int64(req.ReserveUnits), int64(req.ReserveMicros),
		int64(b.BudgetUnits), b.HasMoneyBudget, int64(b.BudgetMicros)), &books)
	if errors.Is(err, pgx.ErrNoRows) {
		return b, admitRefusal(ctx, w, req)
	}
	if err != nil {
		return b, fmt.Errorf("take hold in period %s: %w", per.Label, err)
	}
	return b.InPeriod(books), nil
}

// movePeriod moves m on the books of the period run was admitted in, after
// its tenant's row (b, locked) moved its part (Moves.OnRow); the position
// returned is the period's after the move. A run without a period moved
// everything on the row: b is returned as it is.
func movePeriod(ctx context.Context, w *wtx, run ledger.Run, m ledger.Moves, b ledger.Position) (ledger.Position, error) {
	if run.Period == "" {
		return b, nil
	}
	books := ledger.NewPeriodBooks(b.RunPeriod(run))
	err := scanPeriodBooks(w.QueryRow(ctx, `UPDATE tenant_periods SET spent_units = spent_units + $3,
		held_units = held_units + $4, spent_micros = spent_micros + $5, held_micros = held_micros + $6
		WHERE tenant_id = $1 AND period = $2 RETURNING `+periodBooksColumns,
		run.TenantID, run.Period, int64(m.Spent), int64(m.Held), int64(m.SpentMicros), int64(m.HeldMicros)), &books)
	if err != nil {
		return b, fmt.Errorf("move period %s of tenant %s: %w", run.Period, run.TenantID, err)
	}
	return b.InPeriod(books), nil
}

// PeriodHistory returns what the tenant spent in its last n periods with
// books, newest first.
func (s *Store) PeriodHistory(ctx context.Context, tenantID string, n int) ([]ledger.PeriodSpend, error) {
	rows, err := s.pool.Query(ctx, `SELECT period, starts_at, spent_units, spent_micros FROM tenant_periods
		WHERE tenant_id = $1 ORDER BY starts_at DESC, period DESC LIMIT $2`, tenantID, n)
	if err != nil {
		return nil, fmt.Errorf("period history of tenant %s: %w", tenantID, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.PeriodSpend, error) {
		var p ledger.PeriodSpend
		var start int64
		err := r.Scan(&p.Period, &start, &p.SpentUnits, &p.SpentMicros)
		p.PeriodStart = fromNanos(start)
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("period history of tenant %s: %w", tenantID, err)
	}
	return out, nil
}
