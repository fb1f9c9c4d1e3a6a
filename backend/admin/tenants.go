package admin

import (
	"context"
	"net/http"

	"github.com/quotagate/quotagate/backend/ledger"
)

// TenantPolicy is a tenant's editable policy on the dashboard's Settings tab.
type TenantPolicy struct {
	ID          string       `json:"id"`
	BudgetUnits ledger.Units `json:"budget_units"`
	// Budget is a money budget in the gateway's currency, a decimal string
	// ("50.00"); empty: none.
	Budget        string   `json:"budget,omitempty"`
	MaxConcurrent int      `json:"max_concurrent"`
	PerMinute     int      `json:"per_minute"`
	PerHour       int      `json:"per_hour"`
	AllowedModels []string `json:"allowed_models"`
	KeyGenerated  bool     `json:"key_generated"` // the key is quotagate's (shown on Connect), not the config file's
}

// Override is one value that differs from the config file: changed on the
// dashboard, kept until discarded (the file is never rewritten behind the
// operator's back).
type Override struct {
	Tenant string `json:"tenant"`
	Field  string `json:"field"` // budget_units, budget, max_concurrent, per_minute, per_hour, allowed_models, key, tenant
	File   string `json:"file"`  // the file's value ("" for a tenant the file does not have)
	Now    string `json:"now"`
}

// TenantSettings is GET /admin/api/tenants's answer.
type TenantSettings struct {
	Tenants   []TenantPolicy `json:"tenants"`
	Overrides []Override     `json:"overrides"`
}

// Tenants edits tenants on the operator's behalf; every change is applied
// to the ledger (audited with the operator as actor) and live at once.
type Tenants interface {
	Settings(ctx context.Context) (TenantSettings, error)
	// Save creates the tenant or replaces its policy. Errors: CodeInvalidRequest.
	Save(ctx context.Context, p TenantPolicy) error
	// Rotate gives the tenant a new key, returned once; the old key stops working.
	Rotate(ctx context.Context, id string) (string, error)
	// Discard puts every tenant back as the config file says.
	Discard(ctx context.Context) error
}

func (h *Handler) tenantSettings(w http.ResponseWriter, r *http.Request) error {
	s, err := h.o.Tenants.Settings(r.Context())
	if err != nil {
		return err
	}
	if s.Tenants == nil {
		s.Tenants = []TenantPolicy{}
	}
	if s.Overrides == nil {
		s.Overrides = []Override{}
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, s)
	return nil
}

func (h *Handler) tenantSave(w http.ResponseWriter, r *http.Request) error {
	var p TenantPolicy
	if err := decodeJSON(w, r, &p); err != nil {
		return err
	}
	if err := h.o.Tenants.Save(r.Context(), p); err != nil {
		return err
	}
	return h.tenantSettings(w, r)
}

func (h *Handler) tenantRotate(w http.ResponseWriter, r *http.Request) error {
	key, err := h.o.Tenants.Rotate(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, map[string]string{"tenant": r.PathValue("id"), "key": key})
	return nil
}

func (h *Handler) tenantDiscard(w http.ResponseWriter, r *http.Request) error {
	if err := h.o.Tenants.Discard(r.Context()); err != nil {
		return err
	}
	return h.tenantSettings(w, r)
}
