package admin

import (
	"context"
	"fmt"
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
	rows, more, err := auditPage(r.Context(), h.o.Store, q, before, limit)
	if err != nil {
		return err
	}
	page := AuditPage{Rows: make([]AuditRow, 0, len(rows)), More: more}
	for _, e := range rows {
		row := AuditRow{AuditEntry: e}
		if audit.IsBalance(e) {
			b := e.Units
			row.Balance, row.Units = &b, 0
		}
		page.Rows = append(page.Rows, row)
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, page)
	return nil
}

// auditPage reads the limit newest rows selected by q with seq < before (0:
// the newest), and whether older ones match. The store serves every filter
// through an index, newest first, so a page is one read of limit+1 rows;
// but the rows a store returns for a text or an actor may be more than
// those (a text no index serves is read row by row), so the handler keeps
// reading on from the cursor, each chunk twice the last up to
// auditTextChunk, until the page is full or the trail ends.
func auditPage(ctx context.Context, src audit.Source, q audit.Query, before int64, limit int) ([]ledger.AuditEntry, bool, error) {
	f := q.AuditFilter
	f.Newest, f.BeforeSeq, f.Limit = true, before, limit+1
	out := make([]ledger.AuditEntry, 0, limit+1)
	for {
		rows, err := src.Audit(ctx, f)
		if err != nil {
			return nil, false, fmt.Errorf("read audit page before seq %d: %w", f.BeforeSeq, err)
		}
		for _, e := range rows {
			if !q.Matches(e) {
				continue
			}
			if len(out) == limit {
				return out, true, nil
			}
			out = append(out, e)
		}
		if len(rows) < f.Limit {
			return out, false, nil
		}
		f.BeforeSeq, f.Limit = rows[len(rows)-1].Seq, max(f.Limit, min(2*f.Limit, auditTextChunk))
	}
}

// auditTextChunk is the most rows one read of a page takes after its first.
const auditTextChunk = 1000
