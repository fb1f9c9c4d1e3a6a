// Package audit exports the ledger's audit trail as CSV for spreadsheets and
// accountants, and lists it for the dashboard's audit view, both through one
// Query so that "Export CSV" writes exactly the rows the view shows.
//
// The CSV is RFC 4180 (CRLF between records, every cell's text verbatim
// inside quotes when it needs them, so a lone "\r" inside evidence survives),
// starts with a UTF-8 byte order mark (Excel on a Chinese Windows reads it as
// UTF-8 only then), gives times in ISO 8601 local time with the offset, keeps
// a balance reading in its own `balance` column, and is safe against formula
// injection (OWASP ASVS 5.0 V1.2.10): a cell whose first visible character is
// = + - @ gets a leading apostrophe, which Unneutralise removes again.
package audit

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/quotagate/quotagate/backend/ledger"
)

// Source is the slice of ledger.Store the export reads.
type Source interface {
	Audit(ctx context.Context, f ledger.AuditFilter) ([]ledger.AuditEntry, error)
}

// BOM is the UTF-8 byte order mark the CSV starts with.
const BOM = "\uFEFF"

// Header is the first CSV row; the column order is part of the export's contract.
var Header = []string{
	"seq", "at", "kind", "tenant", "run", "actor", "reason",
	"units", "balance", "available_before", "available_after", "evidence", "detail",
	"count", "last_at", // a reject row counts the refusals of its interval
	"cost", "currency", // the money the row moved, as units does units; empty when none
	"period",      // the budget period the row counts in; empty for a tenant whose budget never renews
	"provider_id", // the provider's id of the row's run, once its answer named it
}

// TimeLayout is ISO 8601 with the local offset (never "Z"), to the microsecond.
const TimeLayout = "2006-01-02T15:04:05.000000-07:00"

// pageSize bounds memory per page while streaming a large trail.
const pageSize = 1000

// Query selects audit rows: the ledger's filter (From inclusive, To
// exclusive, tenant, kind, run, actor, text) with the zone its days are
// read in and the currency its money is written in.
type Query struct {
	ledger.AuditFilter
	Loc *time.Location
	// Currency is the gateway's, written beside every row that moved
	// money (the ledger keeps micros, not the currency they are in).
	Currency string
}

// Matches reports whether e is selected by q.
func (q Query) Matches(e ledger.AuditEntry) bool { return ledger.AuditMatches(q.AuditFilter, e) }

func (q Query) loc() *time.Location {
	if q.Loc != nil {
		return q.Loc
	}
	return time.Local
}

// IsBalance reports whether e's units are a balance reading: a balance
// sync (kind sync with no tenant; the nightly top-up's sync rows name a
// tenant and carry planned units).
func IsBalance(e ledger.AuditEntry) bool {
	return e.Kind == ledger.AuditSync && e.TenantID == ""
}

// Each calls fn with every row selected by q, oldest first, page by page.
func Each(ctx context.Context, src Source, q Query, fn func(ledger.AuditEntry) error) error {
	page := q.AuditFilter
	page.Limit = pageSize
	for {
		rows, err := src.Audit(ctx, page)
		if err != nil {
			return fmt.Errorf("read audit after seq %d: %w", page.AfterSeq, err)
		}
		for _, e := range rows {
			if q.Matches(e) {
				if err := fn(e); err != nil {
					return err
				}
			}
		}
		if len(rows) < pageSize {
			return nil
		}
		page.AfterSeq = rows[len(rows)-1].Seq
	}
}

// WriteCSV streams the audit rows selected by q to w, oldest first.
func WriteCSV(ctx context.Context, w io.Writer, src Source, q Query) error {
	bw := bufio.NewWriterSize(w, 32<<10)
	if _, err := bw.WriteString(BOM); err != nil {
		return fmt.Errorf("write audit csv: %w", err)
	}
	if err := writeRecord(bw, Header); err != nil {
		return fmt.Errorf("write audit csv header: %w", err)
	}
	n := 0
	err := Each(ctx, src, q, func(e ledger.AuditEntry) error {
		if err := writeRecord(bw, Record(e, q.loc(), q.Currency)); err != nil {
			return fmt.Errorf("write audit row %d: %w", e.Seq, err)
		}
		if n++; n%pageSize == 0 {
			if err := bw.Flush(); err != nil {
				return fmt.Errorf("write audit csv: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write audit csv: %w", err)
	}
	return nil
}

// Record is e's CSV row (before quoting), times in loc; a row that moved
// money says how much (an exact decimal string) in currency.
func Record(e ledger.AuditEntry, loc *time.Location, currency string) []string {
	units, balance := strconv.FormatInt(int64(e.Units), 10), ""
	if IsBalance(e) {
		units, balance = "", strconv.FormatInt(int64(e.Units), 10)
	}
	cost := ""
	if e.Micros != 0 {
		cost = e.Micros.String()
	} else {
		currency = ""
	}
	return []string{
		strconv.FormatInt(e.Seq, 10),
		e.At.In(loc).Format(TimeLayout),
		Field(string(e.Kind)),
		Field(e.TenantID),
		Field(string(e.RunID)),
		Field(e.Actor.String()),
		Field(e.Reason),
		units,
		balance,
		strconv.FormatInt(int64(e.AvailableBefore), 10),
		strconv.FormatInt(int64(e.AvailableAfter), 10),
		Field(e.Evidence),
		Field(e.Detail),
		strconv.FormatInt(max(e.Count, 1), 10),
		lastAt(e, loc),
		cost,
		Field(currency),
		Field(e.Period),
		Field(e.ProviderID),
	}
}

// lastAt is the time of the last refusal a reject row counts; empty for a
// row that stands for one event.
func lastAt(e ledger.AuditEntry, loc *time.Location) string {
	if e.Count <= 1 || e.LastAt.IsZero() {
		return ""
	}
	return e.LastAt.In(loc).Format(TimeLayout)
}

// writeRecord writes one RFC 4180 record ending in CRLF. A cell is quoted
// when it holds a comma, a quote, CR, LF or leading/trailing space, and its
// text is written verbatim (quotes doubled): unlike encoding/csv with
// UseCRLF, a lone "\r" or "\n" inside a cell is kept as it is.
func writeRecord(w *bufio.Writer, cells []string) error {
	for i, c := range cells {
		if i > 0 {
			w.WriteByte(',')
		}
		if needsQuotes(c) {
			w.WriteByte('"')
			w.WriteString(strings.ReplaceAll(c, `"`, `""`))
			w.WriteByte('"')
		} else {
			w.WriteString(c)
		}
	}
	_, err := w.WriteString("\r\n")
	return err
}

func needsQuotes(c string) bool {
	if c == "" {
		return false
	}
	if strings.ContainsAny(c, ",\"\r\n") {
		return true
	}
	return c[0] == ' ' || c[0] == '\t' || c[len(c)-1] == ' ' || c[len(c)-1] == '\t'
}

// invisible reports runes a spreadsheet skips before deciding a cell is a
// formula: spaces, zero-width characters, direction marks and the BOM.
func invisible(r rune) bool {
	switch r {
	case ' ', '\t', '\r', '\n', '\u00A0', '\u200B', '\u200C', '\u200D', '\u2060', '\uFEFF',
		'\u200E', '\u200F', '\u061C', '\u202A', '\u202B', '\u202C', '\u202D', '\u202E',
		'\u2066', '\u2067', '\u2068', '\u2069', '\u3000':
		return true
	}
	return false
}

// dangerous reports whether a spreadsheet could evaluate s: after any
// leading apostrophes, it starts with TAB, CR or NUL, or its first visible
// character is = + - @. Leading apostrophes are skipped so that
// dangerous("'"+s) == dangerous(s), which makes Field reversible.
func dangerous(s string) bool {
	s = strings.TrimLeft(s, "'")
	if s == "" {
		return false
	}
	switch s[0] {
	case '\t', '\r', 0:
		return true
	}
	for _, r := range s {
		if invisible(r) || r == '\'' {
			continue
		}
		return r == '=' || r == '+' || r == '-' || r == '@' || r == '＝' || r == '＋' || r == '－' || r == '＠'
	}
	return false
}

// Field makes a free-text cell safe for spreadsheets: a value a spreadsheet
// could evaluate gets a leading apostrophe, so it is shown as text. Numbers
// are written by strconv and need no escaping.
func Field(s string) string {
	if dangerous(s) {
		return "'" + s
	}
	return s
}

// Unneutralise is Field's inverse: Unneutralise(Field(s)) == s for every s.
func Unneutralise(c string) string {
	if strings.HasPrefix(c, "'") && dangerous(c[1:]) {
		return c[1:]
	}
	return c
}

// ParseCSV reads an export back (the BOM, RFC 4180 records, CRLF or LF
// between records) with every cell's text exactly as written, so a test (or
// an accountant's script) can check the round trip; free-text cells still
// carry Field's apostrophe (see Unneutralise).
func ParseCSV(data string) ([][]string, error) {
	data = strings.TrimPrefix(data, BOM)
	var rows [][]string
	var row []string
	var cell strings.Builder
	line := 1
	for i := 0; i < len(data); {
		// one cell
		cell.Reset()
		if data[i] == '"' {
			i++
			for {
				if i >= len(data) {
					return nil, fmt.Errorf("line %d: quoted cell not closed", line)
				}
				if data[i] == '"' {
					if i+1 < len(data) && data[i+1] == '"' {
						cell.WriteByte('"')
						i += 2
						continue
					}
					i++
					break
				}
				if data[i] == '\n' {
					line++
				}
				cell.WriteByte(data[i])
				i++
			}
			if i < len(data) && data[i] != ',' && data[i] != '\r' && data[i] != '\n' {
				return nil, fmt.Errorf("line %d: text after a closing quote", line)
			}
		} else {
			for i < len(data) && data[i] != ',' && data[i] != '\r' && data[i] != '\n' {
				if data[i] == '"' {
					return nil, fmt.Errorf("line %d: quote inside an unquoted cell", line)
				}
				cell.WriteByte(data[i])
				i++
			}
		}
		row = append(row, cell.String())
		switch {
		case i >= len(data):
			rows = append(rows, row)
			row = nil
		case data[i] == ',':
			i++
			if i == len(data) {
				rows = append(rows, append(row, ""))
				row = nil
			}
		case data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n':
			i += 2
			rows, row, line = append(rows, row), nil, line+1
		case data[i] == '\n':
			i++
			rows, row, line = append(rows, row), nil, line+1
		default:
			return nil, fmt.Errorf("line %d: a bare CR outside quotes", line)
		}
	}
	return rows, nil
}

// FileName is the export's file name, the same from the browser
// (Content-Disposition) and the window (save dialog): the filter's tenant
// and local days, with only file-safe characters.
func FileName(q Query) string {
	parts := []string{"quotagate-audit"}
	if q.TenantID != "" {
		parts = append(parts, q.TenantID)
	}
	if q.Kind != "" {
		parts = append(parts, string(q.Kind))
	}
	if !q.From.IsZero() {
		parts = append(parts, q.From.In(q.loc()).Format("20060102-1504"))
	}
	if !q.To.IsZero() {
		parts = append(parts, q.To.In(q.loc()).Format("20060102-1504"))
	}
	name := strings.Join(parts, "_")
	name = strings.Map(func(r rune) rune {
		if r < utf8.RuneSelf && (r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return r
		}
		return '-'
	}, name)
	return name + ".csv"
}

// ParseQuery reads the export's and the list's query parameters: from and
// to are RFC 3339 times or YYYY-MM-DD local days in loc (a day `to`
// includes that whole day); tenant, kind, run, actor (tenant:<id>,
// operator:<how> or system:<part>) and text filter further.
// Empty values mean no bound; nil loc is time.Local.
func ParseQuery(v url.Values, loc *time.Location) (Query, error) {
	if loc == nil {
		loc = time.Local
	}
	q := Query{Loc: loc}
	q.Text = strings.TrimSpace(v.Get("text"))
	if s := strings.TrimSpace(v.Get("actor")); s != "" {
		a, err := ledger.ParseActor(s)
		if err != nil {
			return q, fmt.Errorf("actor: %w", err)
		}
		q.Actor = a
	}
	q.TenantID = strings.TrimSpace(v.Get("tenant"))
	q.Kind = ledger.AuditKind(strings.TrimSpace(v.Get("kind")))
	q.RunID = ledger.RunID(strings.TrimSpace(v.Get("run")))
	from, to := v.Get("from"), v.Get("to")
	var err error
	if q.From, err = parseBound(from, false, loc); err != nil {
		return q, ledger.Errorf(ledger.CodeInvalidRequest, "from: %v", err)
	}
	if q.To, err = parseBound(to, true, loc); err != nil {
		return q, ledger.Errorf(ledger.CodeInvalidRequest, "to: %v", err)
	}
	if !q.From.IsZero() && !q.To.IsZero() && !q.From.Before(q.To) {
		return q, ledger.Errorf(ledger.CodeInvalidRequest, "from (%s) must be before to (%s)", from, to)
	}
	if q.Kind != "" && !knownKind(string(q.Kind)) {
		return q, ledger.Errorf(ledger.CodeInvalidRequest, "kind %q is not an audit kind", q.Kind)
	}
	return q, nil
}

// ParseFilter is ParseQuery for the three original parameters, in local days.
func ParseFilter(from, to, tenant string) (ledger.AuditFilter, error) {
	q, err := ParseQuery(url.Values{"from": {from}, "to": {to}, "tenant": {tenant}}, nil)
	return q.AuditFilter, err
}

func knownKind(k string) bool { return slices.Contains(ledger.AuditKinds, ledger.AuditKind(k)) }

func parseBound(s string, end bool, loc *time.Location) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	d, err := time.ParseInLocation(time.DateOnly, s, loc)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is neither a date (2026-11-29) nor an RFC 3339 time", s)
	}
	if end {
		d = d.AddDate(0, 0, 1) // local midnight of the next day, DST-safe
	}
	return d.UTC(), nil
}
