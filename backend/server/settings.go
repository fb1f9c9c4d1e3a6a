package server

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/quotagate/quotagate/backend/admin"
	"github.com/quotagate/quotagate/backend/config"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/live"
	"github.com/quotagate/quotagate/backend/quota"
)

// fileState is the tenant policy as the config file (or the embedded
// default) gave it, with the generated keys of its keyless tenants: what
// the Settings panel's overrides are measured against and Discard restores.
type fileState struct {
	tenants []config.Tenant
	keys    map[string]string // tenant → generated key, as at start
}

// rememberFile records the applied tenants as the file's; called once the
// configured tenants and their generated keys are known.
func (s *Server) rememberFile() {
	s.file = fileState{tenants: cloneTenants(s.tenants), keys: maps.Clone(s.keys)}
}

func cloneTenants(ts []config.Tenant) []config.Tenant {
	out := make([]config.Tenant, len(ts))
	for i, t := range ts {
		t.KeyHashes = slices.Clone(t.KeyHashes)
		t.AllowedModels = slices.Clone(t.AllowedModels)
		out[i] = t
	}
	return out
}

// applyLocked applies next to the ledger as actor and then to the gateway
// at once: its tenant cache (a revoked key stops working now, a lowered
// max_concurrent refuses the next call) and the rate limits. s.mu is held.
func (s *Server) applyLocked(ctx context.Context, next []config.Tenant, actor ledger.Actor) error {
	if err := s.store.ApplyTenants(ctx, tenantsForLedger(next), actor); err != nil {
		return fmt.Errorf("apply tenants: %w", err)
	}
	s.assembly.gateway.InvalidateTenants()
	s.assembly.limiter.Replace(rateLimits(next))
	s.tenants = next
	s.hub.Publish(live.Change{Kind: live.KindConfig})
	return nil
}

// editable reports whether the Settings panel may show and change tenant id
// (the quota top-up's own tenant is quotagate's, not the operator's).
func editable(id string) bool { return id != quota.DefaultTopUpTenant }

// Settings is GET /admin/api/settings.
func (s *Server) Settings(context.Context) (admin.SettingsState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.settingsLocked(), nil
}

func (s *Server) settingsLocked() admin.SettingsState {
	st := admin.SettingsState{ConfigFile: s.opts.ConfigPath, Tenants: []admin.SettingsTenant{},
		Overrides: []admin.Override{}, Models: []string{}}
	for _, u := range s.cfg.Upstreams {
		st.Models = append(st.Models, u.Models...)
	}
	for _, t := range s.tenants {
		if editable(t.ID) {
			st.Tenants = append(st.Tenants, settingsTenant(t))
		}
	}
	st.Overrides = overrides(s.file.tenants, s.tenants)
	return st
}

func settingsTenant(t config.Tenant) admin.SettingsTenant {
	return admin.SettingsTenant{ID: t.ID, BudgetUnits: t.BudgetUnits, MaxConcurrent: t.MaxConcurrent,
		PerMinute: t.RateLimits.PerMinute, PerHour: t.RateLimits.PerHour,
		AllowedModels: append([]string{}, t.AllowedModels...)}
}

// overrides lists every value of now that differs from file.
func overrides(file, now []config.Tenant) []admin.Override {
	out := []admin.Override{}
	for _, t := range now {
		if !editable(t.ID) {
			continue
		}
		i := slices.IndexFunc(file, func(f config.Tenant) bool { return f.ID == t.ID })
		if i < 0 {
			out = append(out, admin.Override{Tenant: t.ID, Field: "tenant", Now: settingsTenant(t)})
			continue
		}
		f := file[i]
		add := func(field string, was, is any, same bool) {
			if !same {
				out = append(out, admin.Override{Tenant: t.ID, Field: field, File: was, Now: is})
			}
		}
		add("budget_units", f.BudgetUnits, t.BudgetUnits, f.BudgetUnits == t.BudgetUnits)
		add("max_concurrent", f.MaxConcurrent, t.MaxConcurrent, f.MaxConcurrent == t.MaxConcurrent)
		add("per_minute", f.RateLimits.PerMinute, t.RateLimits.PerMinute, f.RateLimits.PerMinute == t.RateLimits.PerMinute)
		add("per_hour", f.RateLimits.PerHour, t.RateLimits.PerHour, f.RateLimits.PerHour == t.RateLimits.PerHour)
		add("allowed_models", append([]string{}, f.AllowedModels...), append([]string{}, t.AllowedModels...),
			slices.Equal(f.AllowedModels, t.AllowedModels))
		add("key", nil, nil, slices.Equal(f.KeyHashes, t.KeyHashes)) // never the key, never its hash
	}
	return out
}

// CreateTenant adds a tenant with a fresh key, answered once.
func (s *Server) CreateTenant(ctx context.Context, p admin.TenantPolicy, actor ledger.Actor) (admin.NewKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if slices.ContainsFunc(s.tenants, func(t config.Tenant) bool { return t.ID == p.ID }) {
		return admin.NewKey{}, ledger.Errorf(ledger.CodeConflict, "tenant %s exists already; edit it instead", p.ID)
	}
	if p.BudgetUnits == nil {
		return admin.NewKey{}, ledger.Errorf(ledger.CodeInvalidRequest, "budget_units is required for a new tenant")
	}
	t := config.Tenant{ID: p.ID, MaxConcurrent: 1}
	applyPolicy(&t, p)
	key := tenantKey(p.ID)()
	t.KeyHashes = []string{ledger.HashKey(key)}
	next := append(cloneTenants(s.tenants), t)
	if err := s.checkTenants(next); err != nil {
		return admin.NewKey{}, err
	}
	if err := s.applyLocked(ctx, next, actor); err != nil {
		return admin.NewKey{}, fmt.Errorf("create tenant %s: %w", p.ID, err)
	}
	return admin.NewKey{Tenant: p.ID, Key: key}, nil
}

// UpdateTenant changes the fields p gives of an existing tenant.
func (s *Server) UpdateTenant(ctx context.Context, p admin.TenantPolicy, actor ledger.Actor) (admin.SettingsTenant, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := cloneTenants(s.tenants)
	i, err := s.findLocked(p.ID)
	if err != nil {
		return admin.SettingsTenant{}, err
	}
	applyPolicy(&next[i], p)
	if err := s.checkTenants(next); err != nil {
		return admin.SettingsTenant{}, err
	}
	if err := s.applyLocked(ctx, next, actor); err != nil {
		return admin.SettingsTenant{}, fmt.Errorf("edit tenant %s: %w", p.ID, err)
	}
	return settingsTenant(next[i]), nil
}

// RotateKey replaces every key of a tenant with one fresh key, answered
// once and kept only as its hash: the old keys stop working at once.
func (s *Server) RotateKey(ctx context.Context, id string, actor ledger.Actor) (admin.NewKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i, err := s.findLocked(id)
	if err != nil {
		return admin.NewKey{}, err
	}
	next := cloneTenants(s.tenants)
	key := tenantKey(id)()
	next[i].KeyHashes = []string{ledger.HashKey(key)}
	if err := s.applyLocked(ctx, next, actor); err != nil {
		return admin.NewKey{}, fmt.Errorf("rotate the key of tenant %s: %w", id, err)
	}
	delete(s.keys, id) // the generated key is no longer valid; the Connect panel stops showing it
	return admin.NewKey{Tenant: id, Key: key}, nil
}

// Discard re-applies the file's tenants: every override is undone, the
// tenants created here lose their keys (their history stays), rotated keys
// are back to the file's.
func (s *Server) Discard(ctx context.Context, actor ledger.Actor) (admin.SettingsState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := cloneTenants(s.file.tenants)
	for _, t := range s.tenants { // quotagate's own tenants are not the file's to discard
		if !editable(t.ID) && !slices.ContainsFunc(next, func(f config.Tenant) bool { return f.ID == t.ID }) {
			next = append(next, t)
		}
	}
	if err := s.applyLocked(ctx, next, actor); err != nil {
		return admin.SettingsState{}, fmt.Errorf("discard the overrides: %w", err)
	}
	s.keys = maps.Clone(s.file.keys)
	return s.settingsLocked(), nil
}

func (s *Server) findLocked(id string) (int, error) {
	i := slices.IndexFunc(s.tenants, func(t config.Tenant) bool { return t.ID == id })
	if i < 0 || !editable(id) {
		return 0, ledger.Errorf(admin.CodeNotFound, "no tenant %q", id)
	}
	return i, nil
}

func applyPolicy(t *config.Tenant, p admin.TenantPolicy) {
	if p.BudgetUnits != nil {
		t.BudgetUnits = *p.BudgetUnits
	}
	if p.MaxConcurrent != nil {
		t.MaxConcurrent = *p.MaxConcurrent
	}
	if p.PerMinute != nil {
		t.RateLimits.PerMinute = *p.PerMinute
	}
	if p.PerHour != nil {
		t.RateLimits.PerHour = *p.PerHour
	}
	if p.AllowedModels != nil {
		t.AllowedModels = slices.Clone(*p.AllowedModels)
		if len(t.AllowedModels) == 0 {
			t.AllowedModels = nil
		}
	}
}

// checkTenants validates next with the config file's own rules, so a value
// the panel accepts is one the file would accept, plus that every allowed
// model is served. A refusal is invalid_request and changes nothing.
func (s *Server) checkTenants(next []config.Tenant) error {
	c := *s.cfg
	c.Tenants = nil
	for _, t := range next {
		if editable(t.ID) {
			c.Tenants = append(c.Tenants, t)
		}
	}
	if err := c.Validate(); err != nil {
		return ledger.Errorf(ledger.CodeInvalidRequest, "%s", err.Error())
	}
	served := map[string]bool{}
	for _, u := range s.cfg.Upstreams {
		for _, m := range u.Models {
			served[m] = true
		}
	}
	for _, t := range next {
		for _, m := range t.AllowedModels {
			if !served[m] {
				return ledger.Errorf(ledger.CodeInvalidRequest, "tenant %s: model %q is not served by any upstream", t.ID, m)
			}
		}
		if n := len(t.AllowedModels); n != len(slices.Compact(slices.Sorted(slices.Values(t.AllowedModels)))) {
			return ledger.Errorf(ledger.CodeInvalidRequest, "tenant %s: allowed_models lists a model twice", t.ID)
		}
	}
	return nil
}
