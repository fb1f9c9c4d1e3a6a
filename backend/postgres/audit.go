package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/quotagate/quotagate/backend/internal/auditsql"
	"github.com/quotagate/quotagate/backend/internal/ledgersql"
	"github.com/quotagate/quotagate/backend/ledger"
)

// insertAudit appends e in w, written by this instance, and notes it as one
// change for the commit hook. balance says the store took
// AvailableBefore/After from the tenant's balance row, holding its lock, in
// this same transaction, so Verify may replay the row.
func (s *Store) insertAudit(ctx context.Context, w *wtx, e ledger.AuditEntry, balance bool) error {
	if counted, err := countRefusal(ctx, w, e); counted || err != nil {
		return err
	}
	insertAuditIn(w, e, balance, s.opts.Instance)
	return nil
}

// insertRunAudit is insertAudit for a row about run, whose state after the
// change the commit hook is told.
func (s *Store) insertRunAudit(w *wtx, e ledger.AuditEntry, run ledger.Run) {
	c := insertAuditIn(w, e, true, s.opts.Instance)
	c.Status, c.Usage, c.Upstream, c.Model, c.Day = run.Status, run.Usage, run.Upstream, run.Model, run.QuotaDay
}

// insertAuditIn queues the row (its seq is drawn when the batch runs, still
// inside the transaction and so still under the tenant row's lock) and
// returns its change, whose Seq the batch fills in.
func insertAuditIn(w *wtx, e ledger.AuditEntry, balance bool, instance string) *ledger.Change {
	at := e.At
	if at.IsZero() {
		at = w.now
	}
	w.changes = append(w.changes, ledger.Change{Kind: e.Kind, Actor: e.Actor, TenantID: e.TenantID, RunID: e.RunID})
	i := len(w.changes) - 1
	w.queue(`INSERT INTO audit (at, kind, tenant_id, run_id, actor, reason, evidence, units,
		available_before, available_after, detail, balance, instance, count, last_at, micros, period, provider_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, 1, $1, $14, $15, $16) RETURNING seq`,
		nanos(at), string(e.Kind), e.TenantID, string(e.RunID), e.Actor.String(), e.Reason, e.Evidence, int64(e.Units),
		int64(e.AvailableBefore), int64(e.AvailableAfter), e.Detail, balance, instance, int64(e.Micros), e.Period, e.ProviderID).
		QueryRow(func(row pgx.Row) error { return row.Scan(&w.changes[i].Seq) })
	return &w.changes[i]
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
	err := s.write(ctx, func(w *wtx) error { return s.insertAudit(ctx, w, e, false) })
	if err != nil {
		return fmt.Errorf("append audit %s: %w", e.Kind, err)
	}
	return nil
}

// Audit returns rows matching f in sequence order (newest first when
// f.Newest); From is inclusive, To exclusive. Each filter has an index
// ending in seq (0007_audit_page.sql), so a page below a cursor reads about
// the rows it returns.
func (s *Store) Audit(ctx context.Context, f ledger.AuditFilter) ([]ledger.AuditEntry, error) {
	q, args := auditQuery(f)
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("read audit: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.AuditEntry, error) { return ledgersql.ScanAudit(r) })
	if err != nil {
		return nil, fmt.Errorf("read audit: %w", err)
	}
	return out, nil
}

// auditQuery is the SELECT for f and its arguments.
func auditQuery(f ledger.AuditFilter) (string, []any) {
	return auditsql.Query(f, ledgersql.AuditColumns, auditsql.Dialect{Bind: func(n int) string { return "$" + strconv.Itoa(n) }, Text: textSearch})
}

// auditText is a row's searched text, the expression audit_text indexes
// (0011_books.sql) with pg_trgm's trigrams: reason, evidence, detail, actor
// and run id joined by a unit separator.
const auditText = `(reason || chr(31) || evidence || chr(31) || detail || chr(31) || actor || chr(31) || run_id)`

// textSearch finds a text with ILIKE on auditText, which the trigram index
// serves when pg_trgm could be installed (the planner then reads the
// index for a rare text, and walks seq for a common one). ILIKE folds
// case as the database's locale does, which for text beyond ASCII may
// not be as Go does: such a text, and one holding a separator that could
// span two fields, is read row by row and matched by the reader.
func textSearch(text string) (from, seq, cond string, args []any, ok bool) {
	for _, r := range text {
		if r >= utf8.RuneSelf || r == 0 || r == 0x1f {
			return "", "", "", nil, false
		}
	}
	esc := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(text)
	return "audit", "seq", auditText + " ILIKE %s", []any{"%" + esc + "%"}, true
}

// countRefusal adds a reject entry to its tenant's and code's row of this
// interval, if there is one: one row counts the refusals, so that a flood of them cannot fill the disk;
// its available figures stay the first's. The count moves at once (it must
// know whether a row matched); a new row is queued like every other.
func countRefusal(ctx context.Context, w *wtx, e ledger.AuditEntry) (bool, error) {
	if e.Kind != ledger.AuditReject {
		return false, nil
	}
	at := e.At
	if at.IsZero() {
		at = w.now
	}
	var seq int64
	err := w.QueryRow(ctx, `UPDATE audit SET count = count + 1, last_at = GREATEST(last_at, $1) WHERE seq = (
		SELECT seq FROM audit WHERE kind = 'reject' AND tenant_id = $2 AND reason = $3 AND at >= $4
		ORDER BY seq DESC LIMIT 1) RETURNING seq`,
		nanos(at), e.TenantID, e.Reason, nanos(at.Truncate(ledger.RefusalInterval))).Scan(&seq)
	switch {
	case err == nil:
		w.changes = append(w.changes, ledger.Change{Seq: seq, Kind: e.Kind, Actor: e.Actor, TenantID: e.TenantID, RunID: e.RunID})
		return true, nil
	case errors.Is(err, pgx.ErrNoRows):
		return false, nil
	}
	return false, fmt.Errorf("count refusal: %w", err)
}
