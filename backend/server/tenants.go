package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/quotagate/quotagate/backend/admin"
	"github.com/quotagate/quotagate/backend/config"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/quota"
)

// tenantAdmin is the Settings tab's tenant editing (admin.Tenants): changes
// apply at once, audited as the operator, and show as overrides of the
// config file until discarded.
type tenantAdmin struct{ s *Server }

func (a tenantAdmin) Settings(context.Context) (admin.TenantSettings, error) {
	s := a.s
	s.mu.Lock()
	defer s.mu.Unlock()
	var out admin.TenantSettings
	for _, t := range s.tenants {
		if t.ID == quota.DefaultTopUpTenant { // quotagate's own: not the operator's to edit
			continue
		}
		out.Tenants = append(out.Tenants, admin.TenantPolicy{ID: t.ID, BudgetUnits: t.BudgetUnits, Budget: t.Budget, MaxConcurrent: t.MaxConcurrent,
			PerMinute: t.RateLimits.PerMinute, PerHour: t.RateLimits.PerHour, AllowedModels: append([]string{}, t.AllowedModels...),
			KeyGenerated: s.keys[t.ID] != ""})
	}
	out.Overrides = overrides(s.cfg.Tenants, s.tenants)
	return out, nil
}

// overrides lists where now differs from the file.
func overrides(file, now []config.Tenant) []admin.Override {
	var out []admin.Override
	byID := map[string]config.Tenant{}
	for _, t := range file {
		byID[t.ID] = t
	}
	for _, f := range file {
		if !slices.ContainsFunc(now, func(t config.Tenant) bool { return t.ID == f.ID }) {
			out = append(out, admin.Override{Tenant: f.ID, Field: "tenant", File: "in the file", Now: "deleted on the dashboard"})
		}
	}
	for _, t := range now {
		f, inFile := byID[t.ID]
		if !inFile && t.ID == quota.DefaultTopUpTenant {
			continue
		}
		if !inFile {
			out = append(out, admin.Override{Tenant: t.ID, Field: "tenant", Now: "added on the dashboard"})
			continue
		}
		add := func(field, file, now string) {
			if file != now {
				out = append(out, admin.Override{Tenant: t.ID, Field: field, File: file, Now: now})
			}
		}
		add("budget_units", strconv.FormatInt(int64(f.BudgetUnits), 10), strconv.FormatInt(int64(t.BudgetUnits), 10))
		add("budget", f.Budget, t.Budget)
		add("max_concurrent", strconv.Itoa(f.MaxConcurrent), strconv.Itoa(t.MaxConcurrent))
		add("per_minute", strconv.Itoa(f.RateLimits.PerMinute), strconv.Itoa(t.RateLimits.PerMinute))
		add("per_hour", strconv.Itoa(f.RateLimits.PerHour), strconv.Itoa(t.RateLimits.PerHour))
		add("allowed_models", strings.Join(f.AllowedModels, ","), strings.Join(t.AllowedModels, ","))
		if len(f.KeyHashes) > 0 && !slices.Equal(f.KeyHashes, t.KeyHashes) {
			add("key", "the file's key", "rotated on the dashboard")
		}
	}
	return out
}

func (a tenantAdmin) Save(ctx context.Context, p admin.TenantPolicy) error {
	s := a.s
	s.mu.Lock()
	defer s.mu.Unlock()
	next := append([]config.Tenant(nil), s.tenants...)
	if p.ID == quota.DefaultTopUpTenant {
		return ledger.Errorf(ledger.CodeInvalidRequest, "tenant id %q is reserved for the quota top-up job", p.ID).
			Because(ledger.ReasonTenantReserved, map[string]any{"tenant": p.ID})
	}
	i := slices.IndexFunc(next, func(t config.Tenant) bool { return t.ID == p.ID })
	if i < 0 {
		next = append(next, config.Tenant{ID: p.ID})
		i = len(next) - 1
	}
	t := &next[i]
	t.BudgetUnits, t.Budget, t.MaxConcurrent = p.BudgetUnits, strings.TrimSpace(p.Budget), p.MaxConcurrent
	t.RateLimits = config.RateLimits{PerMinute: p.PerMinute, PerHour: p.PerHour}
	t.AllowedModels = slices.DeleteFunc(append([]string(nil), p.AllowedModels...), func(m string) bool { return strings.TrimSpace(m) == "" })
	check := *s.cfg
	check.Tenants = next
	if err := check.Validate(); err != nil {
		refusal := ledger.Errorf(ledger.CodeInvalidRequest, "%v", err)
		if r, ok := errors.AsType[*config.Refusal](err); ok {
			refusal = refusal.Because(r.Reason, r.Params)
		}
		return refusal
	}
	if len(t.KeyHashes) == 0 && s.keys[t.ID] == "" { // a new tenant gets a generated key, as keyless config tenants do
		key, err := loadOrCreateSecret(filepath.Join(s.opts.DataDir, keysDir, t.ID+".key"), tenantKey(t.ID))
		if err != nil {
			return fmt.Errorf("key for tenant %s: %w", t.ID, err)
		}
		t.KeyHashes = []string{ledger.HashKey(key)}
		s.keys[t.ID] = key
	}
	return s.applyTenantsLocked(ctx, next, ledger.ActorAdmin)
}

func (a tenantAdmin) Rotate(ctx context.Context, id string) (string, error) {
	s := a.s
	s.mu.Lock()
	defer s.mu.Unlock()
	next := append([]config.Tenant(nil), s.tenants...)
	i := slices.IndexFunc(next, func(t config.Tenant) bool { return t.ID == id })
	if i < 0 || id == quota.DefaultTopUpTenant {
		return "", errNoTenant(id)
	}
	key := tenantKey(id)()
	if s.keys[id] != "" { // a generated key lives in the data dir
		path := filepath.Join(s.opts.DataDir, keysDir, id+".key")
		if err := os.WriteFile(path, []byte(key+"\n"), 0o600); err != nil {
			return "", fmt.Errorf("rotate key of tenant %s: %w", id, err)
		}
	}
	next[i].KeyHashes = []string{ledger.HashKey(key)}
	if err := s.applyTenantsLocked(ctx, next, ledger.ActorAdmin); err != nil {
		return "", err
	}
	if s.keys[id] != "" {
		s.keys[id] = key
	}
	return key, nil
}

func (a tenantAdmin) Discard(ctx context.Context) error {
	s := a.s
	s.mu.Lock()
	defer s.mu.Unlock()
	file := append([]config.Tenant(nil), s.cfg.Tenants...)
	for i := range file {
		if len(file[i].KeyHashes) == 0 { // keyless in the file: keep its generated key
			for _, t := range s.tenants {
				if t.ID == file[i].ID {
					file[i].KeyHashes = t.KeyHashes
				}
			}
			if k := s.keys[file[i].ID]; len(file[i].KeyHashes) == 0 && k != "" { // deleted on the dashboard: back with its key
				file[i].KeyHashes = []string{ledger.HashKey(k)}
			}
		}
	}
	for _, t := range s.tenants { // the top-up's own tenant is not the file's to discard
		if t.ID == quota.DefaultTopUpTenant {
			file = append(file, t)
		}
	}
	return s.applyTenantsLocked(ctx, file, ledger.ActorAdmin)
}
