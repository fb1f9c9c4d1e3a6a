package admin

import (
	"context"
	"net/http"

	"github.com/quotagate/quotagate/backend/ledger"
)

// WriteBack is what POST /admin/api/tenants/write-back did.
type WriteBack struct {
	File     string         `json:"file"`
	Notes    []string       `json:"notes"` // sentences for the operator (what became of a key)
	Settings TenantSettings `json:"settings"`
}

// TenantWriteBack is the part of Tenants that rewrites the config file with
// the overrides. Errors: CodeInvalidRequest when there is no file (the
// embedded default) or it cannot be rewritten; nothing is written then.
type TenantWriteBack interface {
	WriteBack(ctx context.Context) (WriteBack, error)
}

func (h *Handler) tenantWriteBack(w http.ResponseWriter, r *http.Request) error {
	wb, ok := h.o.Tenants.(TenantWriteBack)
	if !ok {
		return ledger.Errorf(codeNotFound, "this build cannot write back to the config file").Because(ledger.ReasonNotInBuild, nil)
	}
	res, err := wb.WriteBack(r.Context())
	if err != nil {
		return err
	}
	if res.Settings, err = h.o.Tenants.Settings(r.Context()); err != nil {
		return err
	}
	if res.Notes == nil {
		res.Notes = []string{}
	}
	if res.Settings.Tenants == nil {
		res.Settings.Tenants = []TenantPolicy{}
	}
	if res.Settings.Overrides == nil {
		res.Settings.Overrides = []Override{}
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}
