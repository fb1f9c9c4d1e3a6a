package admin

import (
	"net/http"
	"strconv"

	"github.com/quotagate/quotagate/backend/audit"
	"github.com/quotagate/quotagate/backend/ledger"
)

// AuditRow is one audit row for the dashboard's audit view; Balance is set
// (and Units left 0) for a balance reading, as in the CSV's columns.
type AuditRow struct {
	ledger.AuditEntry
	Balance *ledger.Units `json:"balance,omitempty"`
}

// AuditPage is GET /admin/api/audit's answer: newest first.
type AuditPage struct {
	Rows []AuditRow `json:"rows"`
	More bool       `json:"more"` // older rows match before the last one
}

// Bounds of one audit page.
const (
	DefaultAuditPage = 50
	MaxAuditPage     = 500
)

// auditList serves GET /admin/api/audit?tenant&kind&run&text&from&to&before&limit:
// the rows the CSV export would write for the same filter, newest first,
// `limit` of them with seq < before (0: the newest).
func (h *Handler) auditList(w http.ResponseWriter, r *http.Request) error {
	v := r.URL.Query()
	q, err := audit.ParseQuery(v, nil)
	if err != nil {
		return err
	}
	limit, before := DefaultAuditPage, int64(0)
	if s := v.Get("limit"); s != "" {
		if limit, err = strconv.Atoi(s); err != nil || limit < 1 || limit > MaxAuditPage {
			return ledger.Errorf(ledger.CodeInvalidRequest, "limit must be 1 … %d", MaxAuditPage).
				Because(ledger.ReasonAuditLimit, map[string]any{"max": MaxAuditPage})
		}
	}
	if s := v.Get("before"); s != "" {
		if before, err = strconv.ParseInt(s, 10, 64); err != nil || before < 0 {
			return ledger.Errorf(ledger.CodeInvalidRequest, "before must be a sequence number").Because(ledger.ReasonAuditBefore, nil)
		}
	}
	// The store pages oldest first; keep the last limit+1 matches below before.
	ring := make([]ledger.AuditEntry, 0, limit+1)
	err = audit.Each(r.Context(), h.o.Store, q, func(e ledger.AuditEntry) error {
		if before > 0 && e.Seq >= before {
			return nil
		}
		if len(ring) == limit+1 {
			copy(ring, ring[1:])
			ring = ring[:limit]
		}
		ring = append(ring, e)
		return nil
	})
	if err != nil {
		return err
	}
	page := AuditPage{Rows: []AuditRow{}, More: len(ring) > limit}
	if page.More {
		ring = ring[1:]
	}
	for i := len(ring) - 1; i >= 0; i-- {
		row := AuditRow{AuditEntry: ring[i]}
		if audit.IsBalance(ring[i]) {
			b := ring[i].Units
			row.Balance, row.Units = &b, 0
		}
		page.Rows = append(page.Rows, row)
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, page)
	return nil
}
