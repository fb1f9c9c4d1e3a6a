package ledger

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/quotagate/quotagate/backend/price"
)

// StoredTenant is a tenant as a store holds it: its configuration, its key
// hashes, and what it has spent and holds.
type StoredTenant struct {
	Tenant
	SpentUnits, HeldUnits   Units
	SpentMicros, HeldMicros price.Micros
	// Current is the books of the tenant's current period, for a tenant
	// whose stored calendar renews (the zero PeriodBooks otherwise).
	Current PeriodBooks
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
		if err := CheckMicros("the money budget of tenant "+t.ID, t.BudgetMicros); err != nil {
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
	pl := tenantPlanner{actor: actor, byID: map[string]StoredTenant{}, owner: map[string]string{}, revoked: map[string]int{}}
	for _, t := range stored {
		pl.byID[t.ID] = t
		for _, h := range t.KeyHashes {
			pl.owner[h] = t.ID
		}
	}
	pl.revoke(stored, tenants)
	for _, t := range tenants {
		if err := pl.tenant(t); err != nil {
			return TenantPlan{}, err
		}
	}
	return pl.p, nil
}

// tenantPlanner builds a TenantPlan from the stored tenants.
type tenantPlanner struct {
	p       TenantPlan
	actor   Actor
	byID    map[string]StoredTenant
	owner   map[string]string // key hash → tenant, as stored, then as planned
	revoked map[string]int    // tenant → keys revoked
}

// revoke plans the revocation of every stored key its tenant is no longer
// configured with, and audits a tenant left out of the list.
func (pl *tenantPlanner) revoke(stored []StoredTenant, tenants []Tenant) {
	wantKeys := map[string][]string{} // configured tenant → its key hashes
	for _, t := range tenants {
		wantKeys[t.ID] = t.KeyHashes
	}
	for _, old := range stored {
		want, configured := wantKeys[old.ID]
		for _, h := range old.KeyHashes {
			if !slices.Contains(want, h) {
				pl.p.RevokeKeys = append(pl.p.RevokeKeys, h)
				delete(pl.owner, h)
				pl.revoked[old.ID]++
			}
		}
		if pl.revoked[old.ID] > 0 && !configured {
			avail := old.available()
			pl.p.Audit = append(pl.p.Audit, AuditEntry{Kind: AuditConfig, TenantID: old.ID, Actor: pl.actor,
				Reason: "tenant no longer configured", AvailableBefore: avail, AvailableAfter: avail,
				Detail: fmt.Sprintf("keys -%d", pl.revoked[old.ID])})
		}
	}
}

// tenant plans configured tenant t: its creation or update, its new keys
// and its audit row, when anything changed.
func (pl *tenantPlanner) tenant(t Tenant) error {
	old, exists := pl.byID[t.ID]
	var diff []string
	var before Units
	if !exists {
		pl.p.Create = append(pl.p.Create, t)
		diff = append(diff, fmt.Sprintf("created: budget_units=%d max_concurrent=%d per_minute=%d per_hour=%d allowed_models=%s",
			t.BudgetUnits, t.MaxConcurrent, t.PerMinute, t.PerHour, AllowedModelsJSON(t.AllowedModels))+moneyBudgetText(t)+calendarText(t.Calendar))
	} else {
		before = old.available()
		if t.BudgetUnits < old.SpentUnits+old.HeldUnits {
			return Errorf(CodeInvalidRequest,
				"tenant %s: budget_units %d is below what is already spent (%d) and held (%d); raise it or reconcile holds first",
				t.ID, t.BudgetUnits, old.SpentUnits, old.HeldUnits)
		}
		if t.HasMoneyBudget && t.BudgetMicros < old.SpentMicros+old.HeldMicros {
			return Errorf(CodeInvalidRequest,
				"tenant %s: budget %s is below what is already spent (%s) and held (%s); raise it or reconcile holds first",
				t.ID, t.BudgetMicros, old.SpentMicros, old.HeldMicros)
		}
		if err := budgetBelowPeriod(old, t); err != nil {
			return err
		}
		diff = tenantDiff(old.Tenant, t)
		if len(diff) > 0 {
			pl.p.Update = append(pl.p.Update, t)
		}
	}
	added, err := pl.addKeys(t, old.KeyHashes)
	if err != nil {
		return err
	}
	if removed := pl.revoked[t.ID]; added > 0 || removed > 0 {
		diff = append(diff, fmt.Sprintf("keys +%d -%d", added, removed))
	}
	if len(diff) == 0 {
		return nil
	}
	pl.p.Audit = append(pl.p.Audit, AuditEntry{Kind: AuditConfig, TenantID: t.ID, Actor: pl.actor,
		Units: t.BudgetUnits - old.BudgetUnits, AvailableBefore: before,
		AvailableAfter: t.BudgetUnits - old.SpentUnits - old.HeldUnits, Detail: strings.Join(diff, "; ")})
	return nil
}

// addKeys plans t's keys that it does not hold yet (held: its stored
// keys); a key another tenant keeps is CodeInvalidRequest.
func (pl *tenantPlanner) addKeys(t Tenant, held []string) (int, error) {
	added := 0
	for _, h := range t.KeyHashes {
		if slices.Contains(held, h) {
			continue
		}
		if o, taken := pl.owner[h]; taken && o != t.ID {
			return 0, Errorf(CodeInvalidRequest, "tenant %s: an API key is already used by tenant %s", t.ID, o)
		}
		pl.owner[h] = t.ID
		pl.p.AddKeys = append(pl.p.AddKeys, TenantKey{Hash: h, TenantID: t.ID})
		added++
	}
	return added, nil
}

func tenantDiff(old, t Tenant) []string {
	var d []string
	if old.BudgetUnits != t.BudgetUnits {
		d = append(d, fmt.Sprintf("budget_units %d→%d", old.BudgetUnits, t.BudgetUnits))
	}
	if old.HasMoneyBudget != t.HasMoneyBudget || old.BudgetMicros != t.BudgetMicros {
		d = append(d, "budget "+moneyBudgetWord(old)+"→"+moneyBudgetWord(t))
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
	return append(d, calendarDiff(old.Calendar, t.Calendar)...)
}

// moneyBudgetText is a created tenant's money budget for its audit row's
// detail, "" without one (so units-only tenants read as before).
func moneyBudgetText(t Tenant) string {
	if !t.HasMoneyBudget {
		return ""
	}
	return " budget=" + t.BudgetMicros.String()
}

func moneyBudgetWord(t Tenant) string {
	if !t.HasMoneyBudget {
		return "none"
	}
	return t.BudgetMicros.String()
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
