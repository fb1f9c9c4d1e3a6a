package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/quotagate/quotagate/backend/archive"
	"github.com/quotagate/quotagate/backend/internal/ledgersql"
	"github.com/quotagate/quotagate/backend/ledger"
)

// archivable selects the runs (as r) of one month that may leave the
// ledger: ended in [?1, ?2), none queued or active, none holding (a run
// whose usage is pending or unknown holds its reserve, and stays).
const archivable = `r.updated_at >= ?1 AND r.updated_at < ?2 AND r.status != 'queued' AND r.status != 'active'
	AND r.usage != 'pending' AND r.usage != 'unknown'`

// archivePartRuns is how many runs one transaction of the writer moves
// out of the ledger (with their audit rows) unless Options say otherwise:
// small enough that the admissions queued behind it wait for one short
// commit, not a month.
var archivePartRuns = 2000

// archiveStep is where a test makes archiving stop as a crash would: the
// steps of archive.Step, and "deleted" inside each part's transaction
// before its summaries are written. nil carries on.
var archiveStep = func(string) error { return nil }

// ArchivableMonths lists the UTC months (2025-11) with runs that ended
// before before and may be archived, oldest first.
func (s *Store) ArchivableMonths(ctx context.Context, before time.Time) ([]string, error) {
	return ledgersql.List(ctx, s.Q, ledgersql.ScanString, "archivable months", `SELECT DISTINCT strftime('%Y-%m', r.updated_at / 1000000000, 'unixepoch') AS month
		FROM runs r WHERE `+archivable+` ORDER BY month`, int64(0), nanos(before))
}

// ArchiveMonth moves month's archivable runs that ended before before,
// with their audit rows, into a new archive file at path, one part per
// transaction of the writer (see archive.Move), and leaves summaries per
// tenant, period and part in their place.
func (s *Store) ArchiveMonth(ctx context.Context, month string, before time.Time, path string, actor ledger.Actor) (ledger.ArchivedMonth, error) {
	return archive.Move(ctx, archiveLedger{s}, month, before, path, actor, archiveStep)
}

// archiveLedger is the store as archive.Move, Restore and CheckLedger see
// it; the summaries and parts already archived are the store's own reads
// (ledgersql.Reads).
type archiveLedger struct{ *Store }

func (l archiveLedger) Left(ctx context.Context, start, end time.Time) (int64, error) {
	var left int64
	err := l.queryRow(ctx, `SELECT count(*) FROM runs r WHERE `+archivable, nanos(start), nanos(end)).Scan(&left)
	return left, err
}

func (l archiveLedger) MovePart(ctx context.Context, month string, start, end time.Time, path string, p archive.Part, actor ledger.Actor) error {
	return l.write(ctx, func(w *wtx) error {
		if err := deleteArchived(ctx, w, month, start, end, p); err != nil {
			return err
		}
		return insertSummaries(ctx, w, path, p.Summaries, p.Quota, actor)
	}, nil)
}

func (l archiveLedger) PartRuns() int  { return l.opts.ArchivePartRuns }
func (l archiveLedger) Now() time.Time { return l.opts.Now() }

// Snapshot reads the month's archivable runs in one read transaction, by
// rowid (the order they were admitted).
func (l archiveLedger) Snapshot(ctx context.Context, start, end time.Time) (archive.Source, error) {
	tx, err := l.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	return monthRows{ctx, tx, nanos(start), nanos(end)}, nil
}

// monthRows is a read snapshot of a month's archivable runs.
type monthRows struct {
	ctx        context.Context
	tx         *sql.Tx
	start, end int64
}

// cursor names the rowid a part's runs are read by; it is not kept.
const cursor = "quotagate cursor"

func (m monthRows) Runs(after int64, n int, fn func(int64, archive.Row) error) error {
	return exportRows(m.ctx, m.tx, `SELECT r.rowid AS "`+cursor+`", r.* FROM runs r WHERE `+archivable+
		` AND r.rowid > ?3 ORDER BY r.rowid LIMIT ?4`, []any{m.start, m.end, after, n}, func(row archive.Row) error {
		c := row[cursor].(int64)
		delete(row, cursor)
		return fn(c, row)
	})
}

func (m monthRows) Audit(after, last int64, fn func(archive.Row) error) error {
	return exportRows(m.ctx, m.tx, `SELECT a.* FROM audit a WHERE a.run_id IN (SELECT r.id FROM runs r WHERE `+archivable+
		` AND r.rowid > ?3 AND r.rowid <= ?4) ORDER BY a.seq`, []any{m.start, m.end, after, last}, fn)
}

func (m monthRows) Close() { m.tx.Rollback() }

// exportRows runs query with args and calls fn with each row by column
// name.
func exportRows(ctx context.Context, tx *sql.Tx, query string, args []any, fn func(archive.Row) error) error {
	return eachRow(ctx, tx, query, args, func(cols []string, vals []any) error {
		row := make(archive.Row, len(cols))
		for i, c := range cols {
			row[c] = vals[i]
		}
		return fn(row)
	})
}

// deleteArchived deletes part p's runs (each still archivable) and their
// audit rows (the audit log lets only this
// transaction delete, through archive_unlock), and fails unless they are
// exactly what the file holds of the part.
func deleteArchived(ctx context.Context, w *wtx, month string, start, end time.Time, p archive.Part) error {
	if _, err := w.exec(ctx, `INSERT INTO archive_unlock (month) VALUES (?)`, month); err != nil {
		return err
	}
	list, err := json.Marshal(p.RunIDs)
	if err != nil {
		return err
	}
	ids := `SELECT r.id FROM runs r WHERE ` + archivable + ` AND r.id IN (SELECT value FROM json_each(?3))`
	args := []any{nanos(start), nanos(end), string(list)}
	audit, err := w.exec(ctx, `DELETE FROM audit WHERE run_id IN (`+ids+`)`, args...)
	if err != nil {
		return fmt.Errorf("delete archived audit rows: %w", err)
	}
	runs, err := w.exec(ctx, `DELETE FROM runs WHERE id IN (`+ids+`)`, args...)
	if err != nil {
		return fmt.Errorf("delete archived runs: %w", err)
	}
	if _, err := w.exec(ctx, `DELETE FROM archive_unlock`); err != nil {
		return err
	}
	nAudit, _ := audit.RowsAffected()
	nRuns, _ := runs.RowsAffected()
	if nAudit != p.Rows || nRuns != p.Runs {
		return fmt.Errorf("the ledger changed under the archive: %d runs and %d audit rows to delete, the file holds %d and %d",
			nRuns, nAudit, p.Runs, p.Rows)
	}
	return archiveStep("deleted")
}

// insertSummaries writes each summary of a part with an audit row
// recording it, adds what each guarded model's day lost, and drops the
// verify checkpoints: the chains they hold no longer match the rows that
// remain.
func insertSummaries(ctx context.Context, w *wtx, path string, sums []ledger.ArchiveSummary, quota []ledger.ArchivedQuota, actor ledger.Actor) error {
	for _, sum := range sums {
		c, err := insertAuditChange(ctx, w, ledger.AuditEntry{Kind: ledger.AuditArchive, TenantID: sum.TenantID,
			Actor: actor, Evidence: path, Detail: sum.Digest(), Period: sum.Period}, false)
		if err != nil {
			return err
		}
		if _, err := w.exec(ctx, `INSERT INTO archive_summaries (month, part, tenant_id, period, runs, rows, spent_units,
			spent_micros, net_units, settled_units, first_seq, last_seq, hash, file, audit_seq)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, sum.Month, sum.Part, sum.TenantID, sum.Period, sum.Runs, sum.Rows,
			int64(sum.SpentUnits), int64(sum.SpentMicros), int64(sum.Net), int64(sum.Settled), sum.FirstSeq, sum.LastSeq,
			sum.Hash, path, c.Seq); err != nil {
			return fmt.Errorf("write archive summary: %w", err)
		}
	}
	for _, q := range quota {
		if _, err := w.exec(ctx, `INSERT INTO archive_quota_days (month, upstream, model, day, usage_units) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (month, upstream, model, day) DO UPDATE SET usage_units = usage_units + excluded.usage_units`,
			q.Month, q.Upstream, q.Model, q.Day, int64(q.Usage)); err != nil {
			return fmt.Errorf("write archived quota day: %w", err)
		}
	}
	_, err := w.exec(ctx, `DELETE FROM verify_checkpoints`)
	return err
}

// FreeBytes is how much of the file SQLite keeps free for new rows (what
// deleting rows gave back; VACUUM returns it to the disk).
func (s *Store) FreeBytes(ctx context.Context) (int64, error) {
	var pages, size int64
	if err := s.queryRow(ctx, `SELECT (SELECT freelist_count FROM pragma_freelist_count), (SELECT page_size FROM pragma_page_size)`).
		Scan(&pages, &size); err != nil {
		return 0, fmt.Errorf("free pages: %w", err)
	}
	return pages * size, nil
}
