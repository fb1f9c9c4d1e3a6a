package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/quotagate/quotagate/backend/internal/ledgersql"
	"github.com/quotagate/quotagate/backend/ledger"
)

// readBalance reads a tenant's balance row inside the writer's transaction;
// ok is false when the tenant does not exist.
func readBalance(ctx context.Context, w *wtx, tenantID string) (b ledger.Position, ok bool, err error) {
	b, err = ledgersql.ScanPosition(w.queryRow(ctx, `SELECT `+ledgersql.PositionColumns+` FROM tenants WHERE id = ?`, tenantID))
	if errors.Is(err, sql.ErrNoRows) {
		return b, false, nil
	}
	if err != nil {
		return b, false, fmt.Errorf("read balance of tenant %s: %w", tenantID, err)
	}
	return b, true, nil
}

// moneyBudget is t's money budget as the tenants table keeps it: NULL for none.
func moneyBudget(t ledger.Tenant) sql.NullInt64 {
	return sql.NullInt64{Int64: int64(t.BudgetMicros), Valid: t.HasMoneyBudget}
}

// ApplyTenants upserts the configured tenants in one step, as
// ledger.PlanTenants decides.
func (s *Store) ApplyTenants(ctx context.Context, tenants []ledger.Tenant, actor ledger.Actor) error {
	if err := ledger.CheckActor(actor); err != nil {
		return fmt.Errorf("apply tenants: %w", err)
	}
	if err := ledger.ValidateTenants(tenants); err != nil {
		return err
	}
	err := s.write(ctx, func(w *wtx) error { return applyTenants(ctx, w, tenants, actor) }, nil)
	if err != nil {
		return fmt.Errorf("apply tenants: %w", err)
	}
	return nil
}

func applyTenants(ctx context.Context, w *wtx, tenants []ledger.Tenant, actor ledger.Actor) error {
	stored, err := ledgersql.LoadTenants(ctx, reader{w}, "")
	if err != nil {
		return err
	}
	for i, t := range stored {
		if per := t.Calendar.At(w.now); per.Bounded() {
			p, err := w.period(ctx, t.ID, per)
			if err != nil {
				return err
			}
			stored[i].Current = p.books
		}
	}
	p, err := ledger.PlanTenants(stored, tenants, actor)
	if err != nil {
		return err
	}
	for _, h := range p.RevokeKeys {
		if _, err := w.exec(ctx, `DELETE FROM tenant_keys WHERE key_hash = ?`, h); err != nil {
			return fmt.Errorf("revoke key: %w", err)
		}
	}
	for _, t := range p.Create {
		if _, err := w.exec(ctx, `INSERT INTO tenants (id, budget_units, max_concurrent, allowed_models, per_minute,
			per_hour, created_at, updated_at, budget_micros, budget_period, timezone, week_starts)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, t.ID, int64(t.BudgetUnits),
			t.MaxConcurrent, ledger.AllowedModelsJSON(t.AllowedModels), t.PerMinute, t.PerHour,
			nanos(w.now), nanos(w.now), moneyBudget(t), ledger.CalendarKind(t.Calendar), ledger.CalendarZone(t.Calendar),
			int(t.Calendar.WeekStarts)); err != nil {
			return fmt.Errorf("create tenant %s: %w", t.ID, err)
		}
	}
	for _, t := range p.Update {
		if _, err := w.exec(ctx, `UPDATE tenants SET budget_units = ?, max_concurrent = ?, allowed_models = ?,
			per_minute = ?, per_hour = ?, updated_at = ?, budget_micros = ?, budget_period = ?, timezone = ?,
			week_starts = ? WHERE id = ?`, int64(t.BudgetUnits), t.MaxConcurrent,
			ledger.AllowedModelsJSON(t.AllowedModels), t.PerMinute, t.PerHour, nanos(w.now), moneyBudget(t),
			ledger.CalendarKind(t.Calendar), ledger.CalendarZone(t.Calendar), int(t.Calendar.WeekStarts), t.ID); err != nil {
			return fmt.Errorf("update tenant %s: %w", t.ID, err)
		}
	}
	for _, k := range p.AddKeys {
		if _, err := w.exec(ctx, `INSERT INTO tenant_keys (key_hash, tenant_id) VALUES (?, ?)`, k.Hash, k.TenantID); err != nil {
			return fmt.Errorf("tenant %s: add key: %w", k.TenantID, err)
		}
	}
	for _, e := range p.Audit {
		if err := insertAudit(ctx, w, e, true); err != nil {
			return err
		}
	}
	return nil
}

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
