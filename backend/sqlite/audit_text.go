package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// The text index (audit_text, 0017_audit_text.sql) is written after
// commit: the writer's transactions append audit rows, and the writer
// indexes the rows above audit_text_mark (0018_audit_text_lag.sql) in
// transactions of their own, AuditTextBatch rows at most, each moving the
// mark with the rows it indexes. FTS5 writes a segment of its index at
// every statement (and savepoint) that added to it, and merges segments as
// they pile up: one segment for thousands of rows costs each row far less
// than one for the few rows of a call, and less the bigger the index.

const (
	// DefaultAuditTextBatch is Options.AuditTextBatch's default.
	DefaultAuditTextBatch = 4096
	// auditTextIdle is how long the writer waits without a write before it
	// indexes the rows a quiet spell left below a batch.
	auditTextIdle = 20 * time.Millisecond
)

// indexAuditText indexes up to n rows above the mark in tx, moving the
// mark past them (n <= 0: every row). It returns how many rows it indexed
// and about how many are left above the mark.
func indexAuditText(ctx context.Context, tx *sql.Tx, n int) (indexed, left int64, err error) {
	var mark, newest int64
	if err := tx.QueryRowContext(ctx, `SELECT seq, coalesce((SELECT max(seq) FROM audit), 0) FROM audit_text_mark`).
		Scan(&mark, &newest); err != nil {
		return 0, 0, fmt.Errorf("read the text index's mark: %w", err)
	}
	if newest <= mark {
		return 0, 0, nil
	}
	to := newest
	if n > 0 && int64(n) < newest-mark {
		// The seq of the nth row above the mark: seqs have gaps where
		// rows were archived.
		if err := tx.QueryRowContext(ctx, `SELECT seq FROM audit WHERE seq > ? ORDER BY seq LIMIT 1 OFFSET ?`, mark, n-1).
			Scan(&to); err != nil {
			return 0, 0, fmt.Errorf("find the text index's next mark: %w", err)
		}
	}
	// The mark moves first: audit_text_rows are the rows at or below it.
	if _, err := tx.ExecContext(ctx, `UPDATE audit_text_mark SET seq = ?`, to); err != nil {
		return 0, 0, fmt.Errorf("move the text index's mark: %w", err)
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO audit_text (rowid, body) SELECT seq, body FROM audit_text_rows WHERE seq > ?`, mark)
	if err != nil {
		return 0, 0, fmt.Errorf("index audit text: %w", err)
	}
	indexed, err = res.RowsAffected()
	if err != nil {
		return 0, 0, fmt.Errorf("index audit text: %w", err)
	}
	return indexed, newest - to, nil
}

// indexAuditTextBatch is the writer's batch of the text index, n rows at
// most, in a transaction of its own. A failure leaves the mark where it was, and the
// rows above it are searched one by one until a later batch indexes them.
func (s *Store) indexAuditTextBatch(n int) {
	s.textLag.Store(s.indexAuditTextOnce(n))
}

// indexAuditTextOnce returns how many rows are left above the mark; 0 on a
// failure, tried again once a batch's rows wait. The lag changes only after
// the commit, so that a reader of AuditTextLag who sees 0 sees a writer at rest.
func (s *Store) indexAuditTextOnce(n int) int64 {
	ctx := context.Background()
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return 0
	}
	defer tx.Rollback()
	if _, left, err := indexAuditText(ctx, tx, n); err == nil && tx.Commit() == nil {
		return left
	}
	return 0
}

// textSearchLag is the condition of rows the text index does not hold yet
// that hold text, for auditsql's Lagging: the rows above the mark, few
// when the writer keeps up, read one by one.
func textSearchLag(text string) (cond string, args []any) {
	return "seq > (SELECT seq FROM audit_text_mark) AND " + textHolds, []any{strings.ToLower(text)}
}
