package postgres

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/quotagate/quotagate/backend/ledger"
)

// balanceRow is a tenant's balance row as a transaction reads it.
type balanceRow struct {
	budget, spent, held ledger.Units
	active, maxConc     int
}

func (b balanceRow) available() ledger.Units { return b.budget - b.spent - b.held }

// readBalance reads a tenant's balance row inside w (locking it when lock);
// ok is false when the tenant does not exist.
func readBalance(ctx context.Context, w *wtx, tenantID string, lock bool) (b balanceRow, ok bool, err error) {
	q := `SELECT budget_units, spent_units, held_units, active, max_concurrent FROM tenants WHERE id = $1`
	if lock {
		q += ` FOR UPDATE`
	}
	err = w.QueryRow(ctx, q, tenantID).Scan(&b.budget, &b.spent, &b.held, &b.active, &b.maxConc)
	if errors.Is(err, pgx.ErrNoRows) {
		return b, false, nil
	}
	if err != nil {
		return b, false, fmt.Errorf("read balance of tenant %s: %w", tenantID, err)
	}
	return b, true, nil
}

type tenantRow struct {
	ledger.Tenant
	spent, held ledger.Units
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
	if err := validateTenants(tenants); err != nil {
		return err
	}
	err := s.write(ctx, func(w *wtx) error {
		if _, err := w.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(configLock)); err != nil {
			return fmt.Errorf("lock config: %w", err)
		}
		if err := s.checkClaimIn(ctx, w); err != nil {
			return err
		}
		return s.applyTenants(ctx, w, tenants, string(actor))
	})
	if err != nil {
		return fmt.Errorf("apply tenants: %w", err)
	}
	return nil
}

func validateTenants(tenants []ledger.Tenant) error {
	ids := map[string]bool{}
	hashes := map[string]string{}
	for _, t := range tenants {
		if strings.TrimSpace(t.ID) == "" || t.ID != strings.TrimSpace(t.ID) {
			return ledger.Errorf(ledger.CodeInvalidRequest, "tenant id %q must be non-empty without surrounding spaces", t.ID)
		}
		if ids[t.ID] {
			return ledger.Errorf(ledger.CodeInvalidRequest, "tenant %s is configured twice", t.ID)
		}
		ids[t.ID] = true
		if err := ledger.CheckUnits("budget_units of tenant "+t.ID, t.BudgetUnits); err != nil {
			return err
		}
		if t.MaxConcurrent < 0 || t.PerMinute < 0 || t.PerHour < 0 {
			return ledger.Errorf(ledger.CodeInvalidRequest, "tenant %s: max_concurrent and rate limits must not be negative", t.ID)
		}
		for _, h := range t.KeyHashes {
			if b, err := hex.DecodeString(h); err != nil || len(b) != 32 || h != strings.ToLower(h) {
				return ledger.Errorf(ledger.CodeInvalidRequest, "tenant %s: a key hash must be 64 lowercase hex digits (SHA-256)", t.ID)
			}
			if other, dup := hashes[h]; dup && other != t.ID {
				return ledger.Errorf(ledger.CodeInvalidRequest, "tenants %s and %s share an API key", other, t.ID)
			}
			hashes[h] = t.ID
		}
	}
	return nil
}

func (s *Store) applyTenants(ctx context.Context, w *wtx, tenants []ledger.Tenant, actor string) error {
	// Lock every tenant row in id order before reading: a tenant row is
	// the first lock an admission takes, and the second of a transition.
	existing, err := loadTenants(ctx, w, true)
	if err != nil {
		return err
	}
	byID := map[string]tenantRow{}
	for _, t := range existing {
		byID[t.ID] = t
	}
	wantKeys := map[string][]string{}
	for _, t := range tenants {
		wantKeys[t.ID] = t.KeyHashes
	}
	// Revoke first, add after: a key may move from one tenant to another in
	// the same config change.
	revoked := map[string]int{}
	for _, old := range existing {
		want, configured := wantKeys[old.ID]
		for _, h := range old.KeyHashes {
			if !slices.Contains(want, h) {
				if _, err := w.Exec(ctx, `DELETE FROM tenant_keys WHERE key_hash = $1`, h); err != nil {
					return fmt.Errorf("revoke key of tenant %s: %w", old.ID, err)
				}
				revoked[old.ID]++
			}
		}
		if revoked[old.ID] > 0 && !configured {
			avail := old.BudgetUnits - old.spent - old.held
			if err := s.insertAudit(ctx, w, ledger.AuditEntry{Kind: ledger.AuditConfig, TenantID: old.ID, Actor: actor,
				Reason: "tenant no longer configured", AvailableBefore: avail, AvailableAfter: avail,
				Detail: fmt.Sprintf("keys -%d", revoked[old.ID])}, true); err != nil {
				return err
			}
		}
	}
	for _, t := range tenants {
		models, err := json.Marshal(nonNil(t.AllowedModels))
		if err != nil {
			return fmt.Errorf("tenant %s: %w", t.ID, err)
		}
		old, exists := byID[t.ID]
		var diff []string
		var before ledger.Units
		if !exists {
			if _, err := w.Exec(ctx, `INSERT INTO tenants (id, budget_units, max_concurrent, allowed_models, per_minute,
				per_hour, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, t.ID, int64(t.BudgetUnits),
				t.MaxConcurrent, string(models), t.PerMinute, t.PerHour, nanos(w.now), nanos(w.now)); err != nil {
				return fmt.Errorf("create tenant %s: %w", t.ID, err)
			}
			diff = append(diff, fmt.Sprintf("created: budget_units=%d max_concurrent=%d per_minute=%d per_hour=%d allowed_models=%s",
				t.BudgetUnits, t.MaxConcurrent, t.PerMinute, t.PerHour, models))
		} else {
			before = old.BudgetUnits - old.spent - old.held
			if t.BudgetUnits < old.spent+old.held {
				return ledger.Errorf(ledger.CodeInvalidRequest,
					"tenant %s: budget_units %d is below what is already spent (%d) and held (%d); raise it or reconcile holds first",
					t.ID, t.BudgetUnits, old.spent, old.held)
			}
			diff = tenantDiff(old.Tenant, t)
			if len(diff) > 0 {
				if _, err := w.Exec(ctx, `UPDATE tenants SET budget_units = $1, max_concurrent = $2, allowed_models = $3,
					per_minute = $4, per_hour = $5, updated_at = $6 WHERE id = $7`, int64(t.BudgetUnits), t.MaxConcurrent,
					string(models), t.PerMinute, t.PerHour, nanos(w.now), t.ID); err != nil {
					return fmt.Errorf("update tenant %s: %w", t.ID, err)
				}
			}
		}
		var added int
		for _, h := range t.KeyHashes {
			if exists && slices.Contains(old.KeyHashes, h) {
				continue
			}
			var owner string
			err := w.QueryRow(ctx, `SELECT tenant_id FROM tenant_keys WHERE key_hash = $1`, h).Scan(&owner)
			if err == nil {
				return ledger.Errorf(ledger.CodeInvalidRequest, "tenant %s: an API key is already used by tenant %s", t.ID, owner)
			}
			if !errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("tenant %s: look up key: %w", t.ID, err)
			}
			if _, err := w.Exec(ctx, `INSERT INTO tenant_keys (key_hash, tenant_id) VALUES ($1, $2)`, h, t.ID); err != nil {
				return fmt.Errorf("tenant %s: add key: %w", t.ID, err)
			}
			added++
		}
		removed := revoked[t.ID]
		if added > 0 || removed > 0 {
			diff = append(diff, fmt.Sprintf("keys +%d -%d", added, removed))
		}
		if len(diff) == 0 {
			continue
		}
		after := t.BudgetUnits - old.spent - old.held
		if err := s.insertAudit(ctx, w, ledger.AuditEntry{Kind: ledger.AuditConfig, TenantID: t.ID, Actor: actor,
			Units: t.BudgetUnits - old.BudgetUnits, AvailableBefore: before, AvailableAfter: after,
			Detail: strings.Join(diff, "; ")}, true); err != nil {
			return err
		}
	}
	return nil
}

func tenantDiff(old, t ledger.Tenant) []string {
	var d []string
	if old.BudgetUnits != t.BudgetUnits {
		d = append(d, fmt.Sprintf("budget_units %d→%d", old.BudgetUnits, t.BudgetUnits))
	}
	if old.MaxConcurrent != t.MaxConcurrent {
		d = append(d, fmt.Sprintf("max_concurrent %d→%d", old.MaxConcurrent, t.MaxConcurrent))
	}
	if old.PerMinute != t.PerMinute {
		d = append(d, fmt.Sprintf("per_minute %d→%d", old.PerMinute, t.PerMinute))
	}
	if old.PerHour != t.PerHour {
		d = append(d, fmt.Sprintf("per_hour %d→%d", old.PerHour, t.PerHour))
	}
	if !slices.Equal(nonNil(old.AllowedModels), nonNil(t.AllowedModels)) {
		d = append(d, fmt.Sprintf("allowed_models %q→%q", old.AllowedModels, t.AllowedModels))
	}
	return d
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

func loadTenants(ctx context.Context, q querier, lock bool) ([]tenantRow, error) {
	sql := `SELECT id, budget_units, max_concurrent, allowed_models, per_minute, per_hour,
		spent_units, held_units FROM tenants ORDER BY id`
	if lock {
		sql += ` FOR UPDATE`
	}
	rows, err := q.Query(ctx, sql)
	if err != nil {
		return nil, fmt.Errorf("load tenants: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (tenantRow, error) {
		var t tenantRow
		var models string
		if err := r.Scan(&t.ID, &t.BudgetUnits, &t.MaxConcurrent, &models, &t.PerMinute, &t.PerHour,
			&t.spent, &t.held); err != nil {
			return t, err
		}
		if err := json.Unmarshal([]byte(models), &t.AllowedModels); err != nil {
			return t, fmt.Errorf("allowed_models of %s: %w", t.ID, err)
		}
		if len(t.AllowedModels) == 0 {
			t.AllowedModels = nil
		}
		return t, nil
	})
	if err != nil {
		return nil, fmt.Errorf("load tenants: %w", err)
	}
	keys, err := q.Query(ctx, `SELECT tenant_id, key_hash FROM tenant_keys ORDER BY tenant_id, key_hash`)
	if err != nil {
		return nil, fmt.Errorf("load tenant keys: %w", err)
	}
	idx := map[string]int{}
	for i, t := range out {
		idx[t.ID] = i
	}
	var id, h string
	_, err = pgx.ForEachRow(keys, []any{&id, &h}, func() error {
		if i, ok := idx[id]; ok {
			out[i].KeyHashes = append(out[i].KeyHashes, h)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load tenant keys: %w", err)
	}
	return out, nil
}

// Tenants lists every tenant, with its key hashes, ordered by id.
func (s *Store) Tenants(ctx context.Context) ([]ledger.Tenant, error) {
	rows, err := loadTenants(ctx, s.pool, false)
	if err != nil {
		return nil, err
	}
	out := make([]ledger.Tenant, len(rows))
	for i, r := range rows {
		out[i] = r.Tenant
	}
	return out, nil
}

const balanceQuery = `SELECT id, budget_units, spent_units, held_units, active FROM tenants`

func scanBalance(r pgx.Row) (ledger.Balance, error) {
	var b ledger.Balance
	if err := r.Scan(&b.TenantID, &b.BudgetUnits, &b.SpentUnits, &b.HeldUnits, &b.Active); err != nil {
		return b, err
	}
	b.AvailableUnits = b.Available()
	return b, nil
}

// Balance returns one tenant's position (CodeInvalidAPIKey for an unknown tenant).
func (s *Store) Balance(ctx context.Context, tenantID string) (ledger.Balance, error) {
	b, err := scanBalance(s.pool.QueryRow(ctx, balanceQuery+` WHERE id = $1`, tenantID))
	if errors.Is(err, pgx.ErrNoRows) {
		return b, ledger.Errorf(ledger.CodeInvalidAPIKey, "unknown tenant %q", tenantID)
	}
	if err != nil {
		return b, fmt.Errorf("balance of tenant %s: %w", tenantID, err)
	}
	return b, nil
}

// Balances returns every tenant's position, ordered by tenant id, from one
// statement (one snapshot).
func (s *Store) Balances(ctx context.Context) ([]ledger.Balance, error) {
	rows, err := s.pool.Query(ctx, balanceQuery+` ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("balances: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.Balance, error) { return scanBalance(r) })
	if err != nil {
		return nil, fmt.Errorf("balances: %w", err)
	}
	return out, nil
}
