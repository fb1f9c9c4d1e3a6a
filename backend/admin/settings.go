package admin

import (
	"context"
	"net/http"

	"github.com/quotagate/quotagate/backend/ledger"
)

// TenantPolicy is a tenant's editable policy as the Settings panel shows and
// sends it. On an edit (POST /admin/api/tenants/{id}) every field is optional:
// a missing one keeps its value.
type TenantPolicy struct {
	ID            string        `json:"id"`
	BudgetUnits   *ledger.Units `json:"budget_units,omitempty"`
	MaxConcurrent *int          `json:"max_concurrent,omitempty"`
	PerMinute     *int          `json:"per_minute,omitempty"` // 0: no per-minute limit
	PerHour       *int          `json:"per_hour,omitempty"`   // 0: no per-hour limit
	AllowedModels *[]string     `json:"allowed_models,omitempty"`
}

// SettingsTenant is one tenant's policy in GET /admin/api/settings.
type SettingsTenant struct {
	ID            string       `json:"id"`
	BudgetUnits   ledger.Units `json:"budget_units"`
	MaxConcurrent int          `json:"max_concurrent"`
	PerMinute     int          `json:"per_minute"`
	PerHour       int          `json:"per_hour"`
	AllowedModels []string     `json:"allowed_models"` // empty: every model
}

// Override is one value that differs from the config file: Field is a
// policy field's JSON name, "key" (rotated here) or "tenant" (created here,
// not in the file). File and Now are the two values (nil where none).
type Override struct {
	Tenant string `json:"tenant"`
	Field  string `json:"field"`
	File   any    `json:"file"`
	Now    any    `json:"now"`
}

// SettingsState is GET /admin/api/settings.
type SettingsState struct {
	// ConfigFile is the YAML file the server was started with; "" when it
	// runs on the embedded default (then there is no file to write back to).
	ConfigFile string           `json:"config_file"`
	Tenants    []SettingsTenant `json:"tenants"`
	Overrides  []Override       `json:"overrides"`
	Models     []string         `json:"models"` // every model a tenant may be allowed
}

// NewKey is a freshly made API key, answered once; only its hash is kept.
type NewKey struct {
	Tenant string `json:"tenant"`
	Key    string `json:"key"`
}

// WriteBack is what POST /admin/api/settings/write-back did.
type WriteBack struct {
	File  string   `json:"file"`
	Notes []string `json:"notes"` // sentences for the operator (a rotated key's fate)
}

// Settings edits tenants at run time. Every change is applied through the
// ledger with the admin actor and takes effect for the next call. Errors:
// ledger.CodeInvalidRequest (bad input, nothing changed), codeNotFound (no
// such tenant), ledger.CodeConflict (the tenant exists already).
type Settings interface {
	Settings(ctx context.Context) (SettingsState, error)
	CreateTenant(ctx context.Context, p TenantPolicy, actor ledger.Actor) (NewKey, error)
	UpdateTenant(ctx context.Context, p TenantPolicy, actor ledger.Actor) (SettingsTenant, error)
	RotateKey(ctx context.Context, id string, actor ledger.Actor) (NewKey, error)
	// WriteBack rewrites the config file with the overrides; Discard
	// re-applies the file's values.
	WriteBack(ctx context.Context) (WriteBack, error)
	Discard(ctx context.Context, actor ledger.Actor) (SettingsState, error)
}

// CodeNotFound is the admin API's code for a missing object (404).
const CodeNotFound = codeNotFound

func (h *Handler) settingsRoutes() {
	h.route("GET /admin/api/settings", h.settingsGet)
	h.route("POST /admin/api/tenants", h.tenantCreate)
	h.route("POST /admin/api/tenants/{id}", h.tenantUpdate)
	h.route("POST /admin/api/tenants/{id}/rotate", h.tenantRotate)
	h.route("POST /admin/api/settings/write-back", h.settingsWriteBack)
	h.route("POST /admin/api/settings/discard", h.settingsDiscard)
}

func (h *Handler) settings() (Settings, error) {
	if h.o.Settings == nil {
		return nil, notWired("settings")
	}
	return h.o.Settings, nil
}

func (h *Handler) settingsGet(w http.ResponseWriter, r *http.Request) error {
	s, err := h.settings()
	if err != nil {
		return err
	}
	st, err := s.Settings(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}

func (h *Handler) tenantCreate(w http.ResponseWriter, r *http.Request) error {
	s, err := h.settings()
	if err != nil {
		return err
	}
	var p TenantPolicy
	if err := decodeJSON(w, r, &p); err != nil {
		return err
	}
	k, err := s.CreateTenant(r.Context(), p, Actor)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, k)
	return nil
}

func (h *Handler) tenantUpdate(w http.ResponseWriter, r *http.Request) error {
	s, err := h.settings()
	if err != nil {
		return err
	}
	var p TenantPolicy
	if err := decodeJSON(w, r, &p); err != nil {
		return err
	}
	id := r.PathValue("id")
	if p.ID != "" && p.ID != id {
		return ledger.Errorf(ledger.CodeInvalidRequest, "a tenant's id cannot be changed (the body says %q, the URL %q)", p.ID, id)
	}
	p.ID = id
	t, err := s.UpdateTenant(r.Context(), p, Actor)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, t)
	return nil
}

func (h *Handler) tenantRotate(w http.ResponseWriter, r *http.Request) error {
	s, err := h.settings()
	if err != nil {
		return err
	}
	k, err := s.RotateKey(r.Context(), r.PathValue("id"), Actor)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, k)
	return nil
}

func (h *Handler) settingsWriteBack(w http.ResponseWriter, r *http.Request) error {
	s, err := h.settings()
	if err != nil {
		return err
	}
	res, err := s.WriteBack(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

func (h *Handler) settingsDiscard(w http.ResponseWriter, r *http.Request) error {
	s, err := h.settings()
	if err != nil {
		return err
	}
	st, err := s.Discard(r.Context(), Actor)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}
