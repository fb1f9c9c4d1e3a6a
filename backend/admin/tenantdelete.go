package admin

import (
	"context"
	"net/http"

	"github.com/quotagate/quotagate/backend/ledger"
)

// TenantDeleter is the part of Tenants that removes a tenant
// (POST /admin/api/tenants/{id}/delete). A tenant with active or queued
// runs or held reservations is refused with ledger.CodeConflict, in words
// that say what to settle first; an unknown tenant is ledger.CodeInvalidRequest.
// A deleted tenant's keys stop working at once; its ledger history stays. A
// tenant of the config file is then an override (the file still has it)
// until written back or discarded.
type TenantDeleter interface {
	Delete(ctx context.Context, id string) error
}

func (h *Handler) tenantDelete(w http.ResponseWriter, r *http.Request) error {
	d, ok := h.o.Tenants.(TenantDeleter)
	if !ok {
		return ledger.Errorf(codeNotFound, "this build cannot delete tenants").Because(ledger.ReasonNotInBuild, nil)
	}
	if err := d.Delete(r.Context(), r.PathValue("id")); err != nil {
		return err
	}
	return h.tenantSettings(w, r)
}
