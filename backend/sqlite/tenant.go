package sqlite

import (
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/quotagate/quotagate/backend/ledger"
)

// balanceRow is a tenant's balance row as the writer reads it.
type balanceRow struct {
	budget, spent, held ledger.Units
	active, maxConc     int
}

func (b balanceRow) available() ledger.Units { return b.budget - b.spent - b.held }

// readBalance reads a tenant's balance row inside the writer's transaction;
// ok is false when the tenant does not exist.
func readBalance(ctx context.Context, w *wtx, tenantID string) (b balanceRow, ok bool, err error) {
	err = w.queryRow(ctx, `SELECT budget_units, spent_units, held_units, active, max_concurrent
		FROM tenants WHERE id = ?`, tenantID).Scan(&b.budget, &b.spent, &b.held, &b.active, &b.maxConc)
	if errors.Is(err, sql.ErrNoRows) {
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

// ApplyTenants upserts the configured tenants in one step. A tenant whose
// figures did not change gets no audit row, so applying the same config on
// every start leaves the audit log alone. Tenants absent from the list keep
// their row and history but lose their keys: removing a tenant from the
// config must stop it from calling.
func (s *Store) ApplyTenants(ctx context.Context, tenants []ledger.Tenant, actor ledger.Actor) error {
	if err := ledger.CheckActor(actor); err != nil {
		return fmt.Errorf("apply tenants: %w", err)
	}
	if err := validateTenants(tenants); err != nil {
		return err
	}
	err := s.write(ctx, func(w *wtx) error { return applyTenants(ctx, w, tenants, actor) }, nil)
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

func applyTenants(ctx context.Context, w *wtx, tenants []ledger.Tenant, actor ledger.Actor) error {
	existing, err := loadTenants(ctx, w)
	if err != nil {
		return err
	}
	byID := map[string]tenantRow{}
	for _, t := range existing {
		byID[t.ID] = t
	}
	wantKeys := map[string][]string{} // configured tenant → its key hashes
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
				if _, err := w.exec(ctx, `DELETE FROM tenant_keys WHERE key_hash = ?`, h); err != nil {
					return fmt.Errorf("revoke key of tenant %s: %w", old.ID, err)
				}
				revoked[old.ID]++
			}
		}
		if revoked[old.ID] > 0 && !configured {
			avail := old.BudgetUnits - old.spent - old.held
			if err := insertAudit(ctx, w, ledger.AuditEntry{Kind: ledger.AuditConfig, TenantID: old.ID, Actor: string(actor),
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
			if _, err := w.exec(ctx, `INSERT INTO tenants (id, budget_units, max_concurrent, allowed_models, per_minute,
				per_hour, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, t.ID, int64(t.BudgetUnits),
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
				if _, err := w.exec(ctx, `UPDATE tenants SET budget_units = ?, max_concurrent = ?, allowed_models = ?,
					per_minute = ?, per_hour = ?, updated_at = ? WHERE id = ?`, int64(t.BudgetUnits), t.MaxConcurrent,
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
			err := w.queryRow(ctx, `SELECT tenant_id FROM tenant_keys WHERE key_hash = ?`, h).Scan(&owner)
			if err == nil {
				return ledger.Errorf(ledger.CodeInvalidRequest, "tenant %s: an API key is already used by tenant %s", t.ID, owner)
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("tenant %s: look up key: %w", t.ID, err)
			}
			if _, err := w.exec(ctx, `INSERT INTO tenant_keys (key_hash, tenant_id) VALUES (?, ?)`, h, t.ID); err != nil {
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
		if err := insertAudit(ctx, w, ledger.AuditEntry{Kind: ledger.AuditConfig, TenantID: t.ID, Actor: string(actor),
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
	query(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func loadTenants(ctx context.Context, q querier) ([]tenantRow, error) {
	rows, err := q.query(ctx, `SELECT id, budget_units, max_concurrent, allowed_models, per_minute, per_hour,
		spent_units, held_units FROM tenants ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("load tenants: %w", err)
	}
	var out []tenantRow
	for rows.Next() {
		var t tenantRow
		var models string
		if err := rows.Scan(&t.ID, &t.BudgetUnits, &t.MaxConcurrent, &models, &t.PerMinute, &t.PerHour,
			&t.spent, &t.held); err != nil {
			rows.Close()
			return nil, fmt.Errorf("load tenants: %w", err)
		}
		if err := json.Unmarshal([]byte(models), &t.AllowedModels); err != nil {
			rows.Close()
			return nil, fmt.Errorf("load tenants: allowed_models of %s: %w", t.ID, err)
		}
		if len(t.AllowedModels) == 0 {
			t.AllowedModels = nil
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
