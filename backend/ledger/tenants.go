package ledger

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// StoredTenant is a tenant as a store holds it: its configuration, its key
// hashes, and what it has spent and holds.
type StoredTenant struct {
	Tenant
	SpentUnits, HeldUnits Units
}

func (t StoredTenant) available() Units { return t.BudgetUnits - t.SpentUnits - t.HeldUnits }

// ValidateTenants refuses a configured tenant list that no store should
// apply: an empty or padded id, an id twice, a budget out of range, negative
// limits, a key hash that is not lowercase hex SHA-256, a key shared by two
// tenants.
func ValidateTenants(tenants []Tenant) error {
	ids := map[string]bool{}
	hashes := map[string]string{}
	for _, t := range tenants {
		if strings.TrimSpace(t.ID) == "" || t.ID != strings.TrimSpace(t.ID) {
			return Errorf(CodeInvalidRequest, "tenant id %q must be non-empty without surrounding spaces", t.ID)
		}
		if ids[t.ID] {
			return Errorf(CodeInvalidRequest, "tenant %s is configured twice", t.ID)
		}
		ids[t.ID] = true
		if err := CheckUnits("budget_units of tenant "+t.ID, t.BudgetUnits); err != nil {
			return err
		}
		if t.MaxConcurrent < 0 || t.PerMinute < 0 || t.PerHour < 0 {
			return Errorf(CodeInvalidRequest, "tenant %s: max_concurrent and rate limits must not be negative", t.ID)
		}
		for _, h := range t.KeyHashes {
			if b, err := hex.DecodeString(h); err != nil || len(b) != 32 || h != strings.ToLower(h) {
				return Errorf(CodeInvalidRequest, "tenant %s: a key hash must be 64 lowercase hex digits (SHA-256)", t.ID)
			}
			if other, dup := hashes[h]; dup && other != t.ID {
				return Errorf(CodeInvalidRequest, "tenants %s and %s share an API key", other, t.ID)
			}
			hashes[h] = t.ID
		}
	}
	return nil
}

// TenantKey is one API key hash and the tenant it belongs to.
type TenantKey struct{ Hash, TenantID string }

// TenantPlan is what applying a configured tenant list to the stored
// tenants changes, in the order a store writes it: revocations first (a key
// may move from one tenant to another in one config change), then new and
// changed tenants, new keys, and the AuditConfig rows — one per tenant that
// really changed, each with the tenant's available figures (so they move a
// balance in Verify's chain).
type TenantPlan struct {
	RevokeKeys []string
	Create     []Tenant
	Update     []Tenant
	AddKeys    []TenantKey
	Audit      []AuditEntry
}

// PlanTenants decides what ApplyTenants changes, as actor. Tenants absent
// from the list keep their row and history but lose their keys: removing a
// tenant from the config must stop it from calling. A tenant whose figures
// did not change gets no audit row, so applying the same config on every
// start leaves the audit log alone. Errors: CodeInvalidRequest for a budget
// below what a tenant has spent and holds, or a key another tenant keeps.
func PlanTenants(stored []StoredTenant, tenants []Tenant, actor Actor) (TenantPlan, error) {
	var p TenantPlan
	byID := map[string]StoredTenant{}
	owner := map[string]string{} // key hash → tenant, as stored
	for _, t := range stored {
		byID[t.ID] = t
		for _, h := range t.KeyHashes {
			owner[h] = t.ID
		}
	}
	wantKeys := map[string][]string{} // configured tenant → its key hashes
	for _, t := range tenants {
		wantKeys[t.ID] = t.KeyHashes
	}
	revoked := map[string]int{}
	for _, old := range stored {
		want, configured := wantKeys[old.ID]
		for _, h := range old.KeyHashes {
			if !slices.Contains(want, h) {
				p.RevokeKeys = append(p.RevokeKeys, h)
				delete(owner, h)
				revoked[old.ID]++
			}
		}
		if revoked[old.ID] > 0 && !configured {
			avail := old.available()
			p.Audit = append(p.Audit, AuditEntry{Kind: AuditConfig, TenantID: old.ID, Actor: actor,
				Reason: "tenant no longer configured", AvailableBefore: avail, AvailableAfter: avail,
				Detail: fmt.Sprintf("keys -%d", revoked[old.ID])})
		}
	}
	for _, t := range tenants {
		old, exists := byID[t.ID]
		var diff []string
		var before Units
		if !exists {
			p.Create = append(p.Create, t)
			diff = append(diff, fmt.Sprintf("created: budget_units=%d max_concurrent=%d per_minute=%d per_hour=%d allowed_models=%s",
				t.BudgetUnits, t.MaxConcurrent, t.PerMinute, t.PerHour, AllowedModelsJSON(t.AllowedModels)))
		} else {
			before = old.available()
			if t.BudgetUnits < old.SpentUnits+old.HeldUnits {
				return TenantPlan{}, Errorf(CodeInvalidRequest,
					"tenant %s: budget_units %d is below what is already spent (%d) and held (%d); raise it or reconcile holds first",
					t.ID, t.BudgetUnits, old.SpentUnits, old.HeldUnits)
			}
			diff = tenantDiff(old.Tenant, t)
			if len(diff) > 0 {
				p.Update = append(p.Update, t)
			}
		}
		added := 0
		for _, h := range t.KeyHashes {
			if exists && slices.Contains(old.KeyHashes, h) {
				continue
			}
			if o, taken := owner[h]; taken && o != t.ID {
				return TenantPlan{}, Errorf(CodeInvalidRequest, "tenant %s: an API key is already used by tenant %s", t.ID, o)
			}
			owner[h] = t.ID
			p.AddKeys = append(p.AddKeys, TenantKey{Hash: h, TenantID: t.ID})
			added++
		}
		if removed := revoked[t.ID]; added > 0 || removed > 0 {
			diff = append(diff, fmt.Sprintf("keys +%d -%d", added, removed))
		}
		if len(diff) == 0 {
			continue
		}
		p.Audit = append(p.Audit, AuditEntry{Kind: AuditConfig, TenantID: t.ID, Actor: actor,
			Units: t.BudgetUnits - old.BudgetUnits, AvailableBefore: before,
			AvailableAfter: t.BudgetUnits - old.SpentUnits - old.HeldUnits, Detail: strings.Join(diff, "; ")})
	}
	return p, nil
}

func tenantDiff(old, t Tenant) []string {
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

// AllowedModelsJSON is the stored form of a tenant's allowed models: a JSON
// array, [] for every model.
func AllowedModelsJSON(models []string) string {
	b, _ := json.Marshal(nonNil(models)) // a []string always marshals
	return string(b)
}

// ParseAllowedModels reads AllowedModelsJSON's form back; [] is nil.
func ParseAllowedModels(s string) ([]string, error) {
	var models []string
	if err := json.Unmarshal([]byte(s), &models); err != nil {
		return nil, err
	}
	if len(models) == 0 {
		return nil, nil
	}
	return models, nil
}
