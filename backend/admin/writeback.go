package admin

import (
	"context"
	"net/http"

	"github.com/quotagate/quotagate/backend/ledger"
)

// WriteBack is what POST /admin/api/tenants/write-back did.
type WriteBack struct {
	File     string          `json:"file"`
	Notes    []WriteBackNote `json:"notes"` // what became of a tenant or its key in the file
	Settings TenantSettings  `json:"settings"`
}

// WriteBackNote tells the operator what became of one tenant in the file:
// Kind picks the dashboard's sentence in the operator's language, Text is
// the server's own (English).
type WriteBackNote struct {
	Kind   string `json:"kind"`
	Tenant string `json:"tenant"`
	Text   string `json:"text"`
}

// The kinds of WriteBackNote.
const (
	NoteKeyInDataDir  = "key_in_data_dir" // written without a key; its generated key stays in keys/<id>.key
	NoteRemoved       = "removed"         // deleted on the dashboard: out of the file
	NoteKeyHashOnly   = "key_hash_only"   // a new tenant's key is in the file as its SHA-256 only
	NoteKeyReplaced   = "key_replaced"    // the file's key gave way to the rotated key's SHA-256
	NoteRotatedHash   = "rotated_hash"    // the rotated key's SHA-256 in the file; the generated key no longer applies
	NoteKeyNotRemoved = "key_not_removed" // a tenant gone from the file: its generated key file could not be removed
)

// NoteKinds is every kind above (the dashboard's catalogue test reads the list).
var NoteKinds = []string{NoteKeyInDataDir, NoteRemoved, NoteKeyHashOnly, NoteKeyReplaced, NoteRotatedHash, NoteKeyNotRemoved}

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
		res.Notes = []WriteBackNote{}
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
