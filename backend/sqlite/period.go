package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/period"
)

// periodKey names one tenant's books in one budget period.
type periodKey struct{ tenant, label string }

// periodBook is a tenant's period as the writer's books hold it.
type periodBook struct {
	books ledger.PeriodBooks
	dirty bool
}

// current returns the position admission checks for tenant t at the
// batch's time: its row for a tenant that never renews, else its current
// period's books (p, nil for the row).
func (w *wtx) current(ctx context.Context, tenantID string, t *tenantBook) (ledger.Position, *periodBook, error) {
	return w.inPeriod(ctx, tenantID, t, t.pos.Current(w.now))
}

// runBooks returns the position of the books run belongs to: its tenant's
// row, or the period it was admitted in.
func (w *wtx) runBooks(ctx context.Context, t *tenantBook, run ledger.Run) (ledger.Position, *periodBook, error) {
	return w.inPeriod(ctx, run.TenantID, t, t.pos.RunPeriod(run))
}

func (w *wtx) inPeriod(ctx context.Context, tenantID string, t *tenantBook, per period.Period) (ledger.Position, *periodBook, error) {
	if !per.Bounded() {
		return t.pos, nil, nil
	}
	p, err := w.period(ctx, tenantID, per)
	if err != nil {
		return ledger.Position{}, nil, err
	}
	return t.pos.InPeriod(p.books), p, nil
}

// period returns a tenant's books of per, reading its row on first use (a
// period without a row has moved nothing yet).
func (w *wtx) period(ctx context.Context, tenantID string, per period.Period) (*periodBook, error) {
	k := periodKey{tenantID, per.Label}
	if p := w.books.periods[k]; p != nil {
		return p, nil
	}
	p := &periodBook{books: ledger.NewPeriodBooks(per)}
	b := &p.books
	var start, end int64
	err := w.queryRow(ctx, `SELECT starts_at, ends_at, spent_units, held_units, spent_micros, held_micros
		FROM tenant_periods WHERE tenant_id = ? AND period = ?`, tenantID, per.Label).Scan(
		&start, &end, &b.SpentUnits, &b.HeldUnits, &b.SpentMicros, &b.HeldMicros)
	switch {
	case err == nil:
		b.Start, b.End = fromNanos(start), fromNanos(end)
	case !errors.Is(err, sql.ErrNoRows):
		return nil, fmt.Errorf("period %s of tenant %s: %w", per.Label, tenantID, err)
	}
	w.books.periods[k] = p
	return p, nil
}

// flushPeriods writes each period the batch moved, once.
func (w *wtx) flushPeriods(ctx context.Context) error {
	for k, p := range w.books.periods {
		if !p.dirty {
			continue
		}
		b := p.books
		if _, err := w.exec(ctx, `INSERT INTO tenant_periods (tenant_id, period, starts_at, ends_at,
			spent_units, held_units, spent_micros, held_micros) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (tenant_id, period) DO UPDATE SET spent_units = excluded.spent_units,
			held_units = excluded.held_units, spent_micros = excluded.spent_micros, held_micros = excluded.held_micros`,
			k.tenant, k.label, nanos(b.Start), nanos(b.End), int64(b.SpentUnits), int64(b.HeldUnits),
			int64(b.SpentMicros), int64(b.HeldMicros)); err != nil {
			return fmt.Errorf("write period %s of tenant %s: %w", k.label, k.tenant, err)
		}
		p.dirty = false
	}
	return nil
}

// PeriodHistory returns what the tenant spent in its last n periods with
// books, newest first.
func (s *Store) PeriodHistory(ctx context.Context, tenantID string, n int) ([]ledger.PeriodSpend, error) {
	rows, err := s.query(ctx, `SELECT period, starts_at, spent_units, spent_micros FROM tenant_periods
		WHERE tenant_id = ? ORDER BY starts_at DESC, period DESC LIMIT ?`, tenantID, n)
	if err != nil {
		return nil, fmt.Errorf("period history of tenant %s: %w", tenantID, err)
	}
	defer rows.Close()
	var out []ledger.PeriodSpend
	for rows.Next() {
		var p ledger.PeriodSpend
		var start int64
		if err := rows.Scan(&p.Period, &start, &p.SpentUnits, &p.SpentMicros); err != nil {
			return nil, fmt.Errorf("period history of tenant %s: %w", tenantID, err)
		}
		p.PeriodStart = fromNanos(start)
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("period history of tenant %s: %w", tenantID, err)
	}
	return out, nil
}
