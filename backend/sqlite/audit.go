package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/quotagate/quotagate/backend/internal/auditsql"
	"github.com/quotagate/quotagate/backend/internal/ledgersql"
	"github.com/quotagate/quotagate/backend/ledger"
)

// auditQuery is the SELECT for f and its arguments.
func auditQuery(f ledger.AuditFilter) (string, []any) {
	return auditsql.Query(f, ledgersql.AuditColumns, auditsql.Dialect{Bind: func(int) string { return "?" },
		Text: textSearch, Lagging: textSearchLag})
}

// textSearch finds a text through audit_text (0017_audit_text.sql), the
// trigram index of each row's text: the rows holding some of the text's
// trigrams (trigramQuery), newest first along the index's rowids (seq).
// The index holds the rows up to its mark (audit_text.go); textSearchLag
// finds the others.
// Those are candidates (the index keeps no positions, and not every
// trigram is asked for); SQLite keeps those whose text holds the text
// before they are read out, lower() folding ASCII as Go does. It serves a text of at least
// three characters that are ASCII or have no case (a letter beyond ASCII
// may fold otherwise in Go, SQLite and FTS5; in a row's text, only the
// Kelvin sign and the dotted capital I fold to ASCII in Go and not in
// SQLite) and that holds no separator that could span two fields. Any
// other text is read row by row and matched by the reader.
func textSearch(text string) (from, seq, cond string, args []any, ok bool) {
	runes := []rune(text)
	if len(runes) < 3 {
		return "", "", "", nil, false
	}
	for _, r := range runes {
		if r == 0 || r == 0x1f || r >= utf8.RuneSelf && (unicode.ToLower(r) != r || unicode.ToUpper(r) != r) {
			return "", "", "", nil, false
		}
	}
	return "audit_text CROSS JOIN audit ON audit.seq = audit_text.rowid", "audit_text.rowid",
		"audit_text MATCH %s AND " + textHolds, []any{trigramQuery(runes), strings.ToLower(text)}, true
}

// textHolds is the condition of a row whose text holds the text bound to
// its "%s", in lower case.
const textHolds = "instr(lower(" + auditText + "), %s) > 0"

// auditText is a row's searched text, as audit_text_rows gives it to the
// index.
const auditText = `reason || char(31) || evidence || char(31) || detail || char(31) || actor || char(31) || run_id`

// trigramQuery is the FTS5 query for rows holding some of text's
// trigrams, each quoted (a quote inside doubled): enough to find few rows,
// since the query keeps only those that hold the text. A trigram whose
// doclist is long costs the search more than it narrows: those of a run
// id's prefix ("run", "un_") or its zero padding ("000") are in nearly
// every row. So it takes at most maxTrigrams distinct ones, the last in the
// text first (an id varies at its end), passing over those with a repeated
// character while others remain.
func trigramQuery(text []rune) string {
	var picked, plain []string
	seen := map[string]bool{}
	for i := len(text) - 3; i >= 0; i-- {
		g := strings.ToLower(string(text[i : i+3]))
		r := []rune(g)
		if seen[g] {
			continue
		}
		seen[g] = true
		if len(plain) < maxTrigrams && r[0] != r[1] && r[1] != r[2] && r[0] != r[2] {
			plain = append(plain, g)
		}
		if len(picked) < maxTrigrams {
			picked = append(picked, g)
		}
	}
	if len(plain) > 0 {
		picked = plain
	}
	terms := make([]string, len(picked))
	for i, g := range picked {
		terms[i] = `"` + strings.ReplaceAll(g, `"`, `""`) + `"`
	}
	return strings.Join(terms, " AND ")
}

// maxTrigrams is the most trigrams a text search asks audit_text for.
const maxTrigrams = 6

// insertAudit appends e in the writer's transaction and notes it as one
// change for the commit hook. balance says the store took
// AvailableBefore/After from the tenant's balance row in this same
// transaction, so Verify may replay the row.
func insertAudit(ctx context.Context, w *wtx, e ledger.AuditEntry, balance bool) error {
	_, err := insertAuditChange(ctx, w, e, balance)
	return err
}

// insertRunAudit is insertAudit for a row about run, whose state after the
// change the commit hook is told.
func insertRunAudit(ctx context.Context, w *wtx, e ledger.AuditEntry, run ledger.Run) error {
	c, err := insertAuditChange(ctx, w, e, true)
	if err != nil {
		return err
	}
	c.Status, c.Usage, c.Upstream, c.Model, c.Day = run.Status, run.Usage, run.Upstream, run.Model, run.QuotaDay
	return nil
}

func insertAuditChange(ctx context.Context, w *wtx, e ledger.AuditEntry, balance bool) (*ledger.Change, error) {
	at := e.At
	if at.IsZero() {
		at = w.now
	}
	e.At = at
	if e.Kind == ledger.AuditReject {
		// A refusal moves no money: within one interval, one row per tenant
		// and code counts them (its available figures stay the first's, so
		// Verify's chain still holds), so that a flood of refusals cannot fill the disk. The rows this batch
		// appended are written first, so that the query sees them.
		if err := w.flushAudit(ctx); err != nil {
			return nil, err
		}
		var seq int64
		err := w.queryRow(ctx, refusalCountQuery, nanos(at), e.TenantID, e.Reason, nanos(at.Truncate(ledger.RefusalInterval))).Scan(&seq)
		switch {
		case err == nil:
			w.changes = append(w.changes, ledger.Change{Seq: seq, Kind: e.Kind, Actor: e.Actor,
				TenantID: e.TenantID, RunID: e.RunID})
			return &w.changes[len(w.changes)-1], nil
		case !errors.Is(err, sql.ErrNoRows):
			return nil, fmt.Errorf("count refusal: %w", err)
		}
	}
	seq, err := w.nextSeq(ctx)
	if err != nil {
		return nil, err
	}
	e.Seq = seq
	w.books.audit = append(w.books.audit, auditRow{entry: e, balance: balance})
	w.changes = append(w.changes, ledger.Change{Seq: seq, Kind: e.Kind, Actor: e.Actor,
		TenantID: e.TenantID, RunID: e.RunID})
	return &w.changes[len(w.changes)-1], nil
}

// refusalCountQuery counts one more refusal on the tenant's latest reject
// row with the same code within the interval, through audit_refusal.
const refusalCountQuery = `UPDATE audit SET count = count + 1, last_at = max(last_at, ?1) WHERE seq = (
	SELECT seq FROM audit WHERE kind = 'reject' AND tenant_id = ?2 AND reason = ?3 AND at >= ?4
	ORDER BY seq DESC LIMIT 1) RETURNING seq`

// auditRow is an audit row appended in this batch, written by flushAudit.
type auditRow struct {
	entry   ledger.AuditEntry // with its Seq and At
	balance bool
}

// nextSeq draws the next audit seq. The writer is the only writer, so the
// last seq read once stays the last one (AUTOINCREMENT: never reused).
func (w *wtx) nextSeq(ctx context.Context) (int64, error) {
	if w.books.seq == 0 {
		var seq int64
		if err := w.queryRow(ctx, `SELECT max(coalesce((SELECT max(seq) FROM audit), 0),
			coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'audit'), 0))`).Scan(&seq); err != nil {
			return 0, fmt.Errorf("last audit seq: %w", err)
		}
		w.books.seq = seq
	}
	w.books.seq++
	return w.books.seq, nil
}

// auditInsertMax is the most rows one INSERT of flushAudit writes; it
// writes in chunks of powers of two, so that a handful of statements,
// each prepared once, serve any batch.
const auditInsertMax = 32

// bulkAuditInsertMax is auditInsertMax for Bulk, whose op appends tens of
// thousands of rows: each INSERT is a statement savepoint, at which the
// audit_text index writes what it holds as a new segment, so fewer and
// larger statements cost a quarter less CPU a run (1,024 rows bind 17,408
// parameters, within SQLite's 32,766).
const bulkAuditInsertMax = 1024

const auditInsertRow = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?)`

// flushAudit writes the audit rows appended since the last flush, several
// to a statement. A row's last_at is 0 until a second refusal is counted
// into it (ledgersql.ScanAudit reads 0 as at): a 0 costs SQLite no bytes,
// at 8 on every row.
func (w *wtx) flushAudit(ctx context.Context) error {
	rows := w.books.audit
	for len(rows) > 0 {
		n := auditInsertMax
		if w.bulk {
			n = bulkAuditInsertMax
		}
		for n > len(rows) {
			n /= 2
		}
		q := `INSERT INTO audit (seq, at, kind, tenant_id, run_id, actor, reason, evidence, units,
		available_before, available_after, detail, balance, count, last_at, micros, period, provider_id) VALUES ` + auditInsertRow +
			strings.Repeat(", "+auditInsertRow, n-1)
		args := make([]any, 0, 17*n)
		for _, r := range rows[:n] {
			e := r.entry
			b := 0
			if r.balance {
				b = 1
			}
			args = append(args, e.Seq, nanos(e.At), string(e.Kind), e.TenantID, string(e.RunID), e.Actor.String(), e.Reason,
				e.Evidence, int64(e.Units), int64(e.AvailableBefore), int64(e.AvailableAfter), e.Detail, b, 0,
				int64(e.Micros), e.Period, e.ProviderID)
		}
		if _, err := w.exec(ctx, q, args...); err != nil {
			return fmt.Errorf("append audit: %w", err)
		}
		rows = rows[n:]
	}
	w.books.audit = w.books.audit[:0]
	return nil
}

// AppendAudit records an event that changes no balance. Its available
// figures are the caller's and are not replayed by Verify.
func (s *Store) AppendAudit(ctx context.Context, e ledger.AuditEntry) error {
	if strings.TrimSpace(string(e.Kind)) == "" {
		return ledger.Errorf(ledger.CodeInvalidRequest, "an audit entry needs a kind")
	}
	if err := ledger.CheckActor(e.Actor); err != nil {
		return fmt.Errorf("append audit %s: %w", e.Kind, err)
	}
	err := s.writeAside(ctx, func(w *wtx) error { return insertAudit(ctx, w, e, false) })
	if err != nil {
		return fmt.Errorf("append audit %s: %w", e.Kind, err)
	}
	return nil
}

// Audit returns rows matching f in sequence order (newest first when
// f.Newest); From is inclusive, To exclusive. Each filter has an index
// (0010_audit_page.sql), and SQLite reads an index's entries in rowid (seq)
// order within equal keys, so a page below a cursor reads about the rows it
// returns.
func (s *Store) Audit(ctx context.Context, f ledger.AuditFilter) ([]ledger.AuditEntry, error) {
	q, args := auditQuery(f)
	return ledgersql.List(ctx, s.Q, ledgersql.ScanAudit, "read audit", q, args...)
}
