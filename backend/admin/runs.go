package admin

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/quotagate/quotagate/backend/ledger"
)

// RunsPage is GET /admin/api/runs's and GET /admin/api/holds's answer:
// runs newest first.
type RunsPage struct {
	Runs []ledger.Run `json:"runs"`
	More bool         `json:"more"` // older runs match after the last one
}

// Bounds of one runs page.
const (
	DefaultRunsPage = 50
	MaxRunsPage     = 500
)

// runsList serves GET /admin/api/runs?tenant&before&limit: `limit` runs
// newest first, after the run `before` ("": from the newest), through the
// store's index, so that a page costs what it returns.
func (h *Handler) runsList(w http.ResponseWriter, r *http.Request) error {
	return h.runsPage(w, r, false)
}

// holdsList serves GET /admin/api/holds?tenant&before&limit: runs whose
// usage is pending or unknown, paged as runsList pages.
func (h *Handler) holdsList(w http.ResponseWriter, r *http.Request) error {
	return h.runsPage(w, r, true)
}

func (h *Handler) runsPage(w http.ResponseWriter, r *http.Request, holding bool) error {
	v := r.URL.Query()
	f := ledger.RunFilter{TenantID: strings.TrimSpace(v.Get("tenant")), HoldingOnly: holding,
		Before: ledger.RunID(strings.TrimSpace(v.Get("before"))), Limit: DefaultRunsPage}
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxRunsPage {
			return ledger.Errorf(ledger.CodeInvalidRequest, "limit must be 1 … %d", MaxRunsPage).
				Because(ledger.ReasonAuditLimit, map[string]any{"max": MaxRunsPage})
		}
		f.Limit = n
	}
	limit := f.Limit
	f.Limit++
	runs, err := h.o.Store.Runs(r.Context(), f)
	if err != nil {
		return err
	}
	page := RunsPage{Runs: runs, More: len(runs) > limit}
	if page.More {
		page.Runs = runs[:limit]
	}
	if page.Runs == nil {
		page.Runs = []ledger.Run{}
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, page)
	return nil
}
