package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/quotagate/quotagate/backend/internal/ledgersql"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/period"
)

// readBalance reads a tenant's balance row inside w (locking it when lock);
// ok is false when the tenant does not exist.
func readBalance(ctx context.Context, w *wtx, tenantID string, lock bool) (b ledger.Position, ok bool, err error) {
	q := `SELECT ` + positionColumns + ` FROM tenants WHERE id = $1`
	if lock {
		q += ` FOR UPDATE`
	}
	b, err = scanPosition(w.QueryRow(ctx, q, tenantID))
	if errors.Is(err, pgx.ErrNoRows) {
		return b, false, nil
	}
	if err != nil {
		return b, false, fmt.Errorf("read balance of tenant %s: %w", tenantID, err)
	}
	return b, true, nil
}

// How a tenant's row reads, as backend/sqlite reads it too (ledgersql),
// under the names this package's statements use.
const positionColumns = ledgersql.PositionColumns

var (
	scanPosition = ledgersql.ScanPosition
	moneyFrom    = ledgersql.MoneyFrom
)

// moneyBudget is t's money budget as the tenants table keeps it: NULL for
// none; moneyFrom reads it back.
func moneyBudget(t ledger.Tenant) *int64 {
	if !t.HasMoneyBudget {
		return nil
	}
	m := int64(t.BudgetMicros)
	return &m
}

// configLock serialises ApplyTenants of gateways starting at once.
const configLock = 0x636f6e666967 // "config"

// ApplyTenants upserts the configured tenants in one transaction, with the
// semantics of backend/sqlite: unchanged tenants get no audit row, tenants
// absent from the list keep their row and history but lose their keys.
func (s *Store) ApplyTenants(ctx context.Context, tenants []ledger.Tenant, actor ledger.Actor) error {
	if err := ledger.CheckActor(actor); err != nil {
		return fmt.Errorf("apply tenants: %w", err)
	}
	if err := ledger.ValidateTenants(tenants); err != nil {
		return err
	}
	err := s.write(ctx, func(w *wtx) error {
		if _, err := w.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(configLock)); err != nil {
			return fmt.Errorf("lock config: %w", err)
		}
		if err := s.checkClaimIn(ctx, w); err != nil {
			return err
		}
		return s.applyTenants(ctx, w, tenants, actor)
	})
	if err != nil {
		return fmt.Errorf("apply tenants: %w", err)
	}
	return nil
}

func (s *Store) applyTenants(ctx context.Context, w *wtx, tenants []ledger.Tenant, actor ledger.Actor) error {
	// Lock every tenant row in id order before reading: a tenant row is
	// the first lock an admission takes, and the second of a transition.
	stored, err := ledgersql.LoadTenants(ctx, reader{w}, ` FOR UPDATE`)
	if err != nil {
		return err
	}
	for i, t := range stored {
		if per := t.Calendar.At(w.now); per.Bounded() {
			if stored[i].Current, err = readPeriod(ctx, w, t.ID, per); err != nil {
				return err
			}
		}
	}
	p, err := ledger.PlanTenants(stored, tenants, actor)
	if err != nil {
		return err
	}
	for _, h := range p.RevokeKeys {
		if _, err := w.Exec(ctx, `DELETE FROM tenant_keys WHERE key_hash = $1`, h); err != nil {
			return fmt.Errorf("revoke key: %w", err)
		}
	}
	for _, t := range p.Create {
		if _, err := w.Exec(ctx, `INSERT INTO tenants (id, budget_units, max_concurrent, allowed_models, per_minute,
			per_hour, created_at, updated_at, budget_micros, budget_period, timezone, week_starts)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`, t.ID, int64(t.BudgetUnits),
			t.MaxConcurrent, ledger.AllowedModelsJSON(t.AllowedModels), t.PerMinute, t.PerHour,
			nanos(w.now), nanos(w.now), moneyBudget(t), ledger.CalendarKind(t.Calendar), ledger.CalendarZone(t.Calendar),
			int(t.Calendar.WeekStarts)); err != nil {
			return fmt.Errorf("create tenant %s: %w", t.ID, err)
		}
	}
	for _, t := range p.Update {
		if _, err := w.Exec(ctx, `UPDATE tenants SET budget_units = $1, max_concurrent = $2, allowed_models = $3,
			per_minute = $4, per_hour = $5, updated_at = $6, budget_micros = $8, budget_period = $9, timezone = $10,
			week_starts = $11 WHERE id = $7`, int64(t.BudgetUnits), t.MaxConcurrent,
			ledger.AllowedModelsJSON(t.AllowedModels), t.PerMinute, t.PerHour, nanos(w.now), t.ID, moneyBudget(t),
			ledger.CalendarKind(t.Calendar), ledger.CalendarZone(t.Calendar), int(t.Calendar.WeekStarts)); err != nil {
			return fmt.Errorf("update tenant %s: %w", t.ID, err)
		}
	}
	for _, k := range p.AddKeys {
		if _, err := w.Exec(ctx, `INSERT INTO tenant_keys (key_hash, tenant_id) VALUES ($1, $2)`, k.Hash, k.TenantID); err != nil {
			return fmt.Errorf("tenant %s: add key: %w", k.TenantID, err)
		}
	}
	for _, e := range p.Audit {
		if err := s.insertAudit(ctx, w, e, true); err != nil {
			return err
		}
	}
	return nil
}

// balances reads the tenants query selects and, for those whose budget
// renews, their current period's books, in one REPEATABLE READ snapshot.
func (s *Store) balances(ctx context.Context, query string, args ...any) ([]ledger.Balance, error) {
	var out []ledger.Balance
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly},
		func(tx pgx.Tx) error {
			rows, err := tx.Query(ctx, ledgersql.Dollar(query), args...)
			if err != nil {
				return err
			}
			var cals []period.Calendar
			out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.Balance, error) {
				b, cal, err := ledgersql.ScanBalance(r)
				cals = append(cals, cal)
				return b, err
			})
			if err != nil {
				return err
			}
			now := s.opts.Now()
			for i, b := range out {
				per := cals[i].At(now)
				if !per.Bounded() {
					continue
				}
				books, err := readPeriod(ctx, tx, b.TenantID, per)
				if err != nil {
					return err
				}
				out[i] = b.WithPeriod(per, books)
			}
			return nil
		})
	return out, err
}
