package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/quotagate/quotagate/backend/internal/ledgersql"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/price"
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
	stored, err := loadTenants(ctx, w)
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

type querier interface {
	query(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func loadTenants(ctx context.Context, q querier) ([]ledger.StoredTenant, error) {
	rows, err := q.query(ctx, `SELECT id, budget_units, max_concurrent, allowed_models, per_minute, per_hour,
		spent_units, held_units, budget_micros, spent_micros, held_micros, budget_period, timezone, week_starts
		FROM tenants ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("load tenants: %w", err)
	}
	var out []ledger.StoredTenant
	for rows.Next() {
		var t ledger.StoredTenant
		var models string
		var budget sql.NullInt64
		var kind, zone string
		var weekStarts int
		if err := rows.Scan(&t.ID, &t.BudgetUnits, &t.MaxConcurrent, &models, &t.PerMinute, &t.PerHour,
			&t.SpentUnits, &t.HeldUnits, &budget, &t.SpentMicros, &t.HeldMicros, &kind, &zone, &weekStarts); err != nil {
			rows.Close()
			return nil, fmt.Errorf("load tenants: %w", err)
		}
		t.BudgetMicros, t.HasMoneyBudget = price.Micros(budget.Int64), budget.Valid
		if t.Calendar, err = ledger.CalendarOf(kind, zone, weekStarts); err != nil {
			rows.Close()
			return nil, fmt.Errorf("load tenants: calendar of %s: %w", t.ID, err)
		}
		if t.AllowedModels, err = ledger.ParseAllowedModels(models); err != nil {
			rows.Close()
			return nil, fmt.Errorf("load tenants: allowed_models of %s: %w", t.ID, err)
		}
		out = append(out, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load tenants: %w", err)
	}
	keys, err := q.query(ctx, `SELECT tenant_id, key_hash FROM tenant_keys ORDER BY tenant_id, key_hash`)
	if err != nil {
		return nil, fmt.Errorf("load tenant keys: %w", err)
	}
	defer keys.Close()
	idx := map[string]int{}
	for i, t := range out {
		idx[t.ID] = i
	}
	for keys.Next() {
		var id, h string
		if err := keys.Scan(&id, &h); err != nil {
			return nil, fmt.Errorf("load tenant keys: %w", err)
		}
		if i, ok := idx[id]; ok {
			out[i].KeyHashes = append(out[i].KeyHashes, h)
		}
	}
	if err := keys.Err(); err != nil {
		return nil, fmt.Errorf("load tenant keys: %w", err)
	}
	return out, nil
}

// Tenants lists every tenant, with its key hashes, ordered by id.
func (s *Store) Tenants(ctx context.Context) ([]ledger.Tenant, error) {
	rows, err := loadTenants(ctx, s)
	if err != nil {
		return nil, err
	}
	out := make([]ledger.Tenant, len(rows))
	for i, r := range rows {
		out[i] = r.Tenant
	}
	return out, nil
}
