package admin

import (
	"context"
	"net/http"

	"github.com/quotagate/quotagate/backend/ledger"
)

// Archiver moves the ledger's closed months into archive files
// (POST /admin/api/archive with {"before": "2026-01-01"}): the dashboard's
// Archive action, through the gateway's own ledger writer, so that
// admissions wait for one month's commit at most. A date that is not the
// first of a closed month is ledger.CodeInvalidRequest.
type Archiver interface {
	Archive(ctx context.Context, before string, actor ledger.Actor) (ArchiveResult, error)
}

// ArchiveResult is what the action archived, and where.
type ArchiveResult struct {
	Months     []ledger.ArchivedMonth `json:"months"`
	Dir        string                 `json:"dir"`
	FreedBytes int64                  `json:"freed_bytes"`
}

type archiveBody struct {
	Before string `json:"before"`
}

func (h *Handler) archive(w http.ResponseWriter, r *http.Request) error {
	if h.o.Archiver == nil {
		return ledger.Errorf(codeNotFound, "this ledger cannot be archived")
	}
	var b archiveBody
	if err := decodeJSON(w, r, &b); err != nil {
		return err
	}
	res, err := h.o.Archiver.Archive(r.Context(), b.Before, Actor)
	if err != nil {
		return err
	}
	if res.Months == nil {
		res.Months = []ledger.ArchivedMonth{}
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}
