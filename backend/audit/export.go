// Package audit exports the ledger's audit trail as CSV for spreadsheets and
// accountants: RFC 4180 via encoding/csv, and safe against formula injection
// (OWASP ASVS 5.0 V1.2.10), since RFC 4180 quoting alone does not stop a
// spreadsheet from evaluating "=HYPERLINK(…)" typed into an evidence field.
package audit

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
)

// Source is the slice of ledger.Store the export reads.
type Source interface {
	Audit(ctx context.Context, f ledger.AuditFilter) ([]ledger.AuditEntry, error)
}

// Header is the first CSV row; the column order is part of the export's contract.
var Header = []string{
	"seq", "at", "kind", "tenant", "run", "actor", "reason",
	"units", "available_before", "available_after", "evidence", "detail",
}

// pageSize bounds memory per page while streaming a large trail.
const pageSize = 1000

// WriteCSV streams the audit rows matching f to w, page by page, oldest first.
// From is inclusive and To exclusive, whatever the Source does with them.
func WriteCSV(ctx context.Context, w io.Writer, src Source, f ledger.AuditFilter) error {
	cw := csv.NewWriter(w)
	cw.UseCRLF = true // RFC 4180 §2.1 line breaks
	if err := cw.Write(Header); err != nil {
		return fmt.Errorf("write audit csv header: %w", err)
	}
	page := f
	page.Limit = pageSize
	for {
		rows, err := src.Audit(ctx, page)
		if err != nil {
			return fmt.Errorf("read audit after seq %d: %w", page.AfterSeq, err)
		}
		for _, e := range rows {
			if !inRange(e, f) {
				continue
			}
			if err := cw.Write(record(e)); err != nil {
				return fmt.Errorf("write audit row %d: %w", e.Seq, err)
			}
		}
		cw.Flush()
		if err := cw.Error(); err != nil {
			return fmt.Errorf("write audit csv: %w", err)
		}
		if len(rows) < pageSize {
			return nil
		}
		page.AfterSeq = rows[len(rows)-1].Seq
	}
}

func inRange(e ledger.AuditEntry, f ledger.AuditFilter) bool {
	if !f.From.IsZero() && e.At.Before(f.From) {
		return false
	}
	if !f.To.IsZero() && !e.At.Before(f.To) {
		return false
	}
	return f.TenantID == "" || e.TenantID == f.TenantID
}

func record(e ledger.AuditEntry) []string {
	return []string{
		strconv.FormatInt(e.Seq, 10),
		e.At.UTC().Format(time.RFC3339Nano),
		Field(string(e.Kind)),
		Field(e.TenantID),
		Field(string(e.RunID)),
		Field(e.Actor),
		Field(e.Reason),
		strconv.FormatInt(int64(e.Units), 10),
		strconv.FormatInt(int64(e.AvailableBefore), 10),
		strconv.FormatInt(int64(e.AvailableAfter), 10),
		Field(e.Evidence),
		Field(e.Detail),
	}
}

// Field makes a free-text cell safe for spreadsheets: a value starting with
// = + - @ TAB CR or NUL gets a leading apostrophe, so it is shown as text and
// never evaluated. Numbers are written by strconv and need no escaping.
func Field(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r', 0:
		return "'" + s
	}
	return s
}

// ParseFilter reads the export's query parameters. from and to are RFC 3339
// times or YYYY-MM-DD dates (UTC); a date `to` includes that whole day.
// Empty values mean no bound.
func ParseFilter(from, to, tenant string) (ledger.AuditFilter, error) {
	f := ledger.AuditFilter{TenantID: strings.TrimSpace(tenant)}
	var err error
	if f.From, err = parseBound(from, false); err != nil {
		return f, ledger.Errorf(ledger.CodeInvalidRequest, "from: %v", err)
	}
	if f.To, err = parseBound(to, true); err != nil {
		return f, ledger.Errorf(ledger.CodeInvalidRequest, "to: %v", err)
	}
	if !f.From.IsZero() && !f.To.IsZero() && !f.From.Before(f.To) {
		return f, ledger.Errorf(ledger.CodeInvalidRequest, "from (%s) must be before to (%s)", from, to)
	}
	return f, nil
}

func parseBound(s string, end bool) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is neither a date (2026-11-29) nor an RFC 3339 time", s)
	}
	if end {
		d = d.AddDate(0, 0, 1)
	}
	return d, nil
}
