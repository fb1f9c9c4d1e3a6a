package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/quotagate/quotagate/backend/archive"
	"github.com/quotagate/quotagate/backend/ledger"
)

// archivable selects the runs (as r) of one month that may leave the
// ledger: ended in [?1, ?2), none queued or active, none holding (a run
// whose usage is pending or unknown holds its reserve, and stays).
const archivable = `r.updated_at >= ?1 AND r.updated_at < ?2 AND r.status != 'queued' AND r.status != 'active'
	AND r.usage != 'pending' AND r.usage != 'unknown'`

// archiveStep is where a test makes archiving stop as a crash would (the
// step's name: "written" before the file is renamed into place, "renamed"
// before the ledger's transaction, "deleted" inside it before the
// summaries are written): nil carries on.
var archiveStep = func(string) error { return nil }

// ArchivableMonths lists the UTC months (2025-11) with runs that ended
// before before and may be archived, oldest first.
func (s *Store) ArchivableMonths(ctx context.Context, before time.Time) ([]string, error) {
	rows, err := s.query(ctx, `SELECT DISTINCT strftime('%Y-%m', r.updated_at / 1000000000, 'unixepoch') AS month
		FROM runs r WHERE `+archivable+` ORDER BY month`, int64(0), nanos(before))
	if err != nil {
		return nil, fmt.Errorf("archivable months: %w", err)
	}
	defer rows.Close()
	var months []string
	for rows.Next() {
		var m string
		if err := rows.Scan(&m); err != nil {
			return nil, fmt.Errorf("archivable months: %w", err)
		}
		months = append(months, m)
	}
	return months, rows.Err()
}

// monthBounds is month's first instant (UTC) and the earlier of its end
// and before.
func monthBounds(month string, before time.Time) (time.Time, time.Time, error) {
	start, err := time.Parse("2006-01", month)
	if err != nil {
		return start, start, fmt.Errorf("month %q: %w", month, err)
	}
	end := start.AddDate(0, 1, 0)
	if before.Before(end) {
		end = before
	}
	return start, end, nil
}

// ArchiveMonth moves month's archivable runs that ended before before,
// with their audit rows, into a new archive file at path, and leaves one
// summary per tenant and period in their place. The file is written whole
// and renamed into place first; then one transaction of the writer deletes
// the rows and writes the summaries (and their audit rows), so that a
// crash leaves the month either in the ledger (a file without a summary is
// stale: archiving again overwrites it) or in the file with its summaries.
// Admissions wait for that one commit, no longer.
func (s *Store) ArchiveMonth(ctx context.Context, month string, before time.Time, path string, actor ledger.Actor) (ledger.ArchivedMonth, error) {
	start, end, err := monthBounds(month, before)
	if err != nil {
		return ledger.ArchivedMonth{}, err
	}
	z, err := s.exportMonth(ctx, month, start, end, path)
	if err != nil {
		return ledger.ArchivedMonth{}, fmt.Errorf("archive %s: %w", month, err)
	}
	sums, quota := z.Summaries()
	res := ledger.ArchivedMonth{Month: month, File: path, Summaries: sums}
	for _, sum := range sums {
		res.Runs, res.Rows = res.Runs+sum.Runs, res.Rows+sum.Rows
	}
	if res.Runs == 0 {
		return res, nil
	}
	if err := archiveStep("renamed"); err != nil {
		return res, err
	}
	err = s.write(ctx, func(w *wtx) error {
		if err := deleteArchived(ctx, w, month, start, end, res); err != nil {
			return err
		}
		return insertSummaries(ctx, w, path, sums, quota, actor)
	}, nil)
	if err != nil {
		return res, fmt.Errorf("archive %s: %w", month, err)
	}
	return res, nil
}

// exportMonth writes the month's archivable runs (by id) and their audit
// rows (by seq) to a new file at path, in one read snapshot, and returns
// their summaries.
func (s *Store) exportMonth(ctx context.Context, month string, start, end time.Time, path string) (*archive.Summarizer, error) {
	tx, err := s.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	w, err := archive.Create(path, archive.Header{Month: month, Before: end, Created: s.opts.Now().UTC()})
	if err != nil {
		return nil, err
	}
	z := archive.NewSummarizer(month)
	for _, q := range []struct{ table, query string }{
		{archive.TableRuns, `SELECT r.* FROM runs r WHERE ` + archivable + ` ORDER BY r.id`},
		{archive.TableAudit, `SELECT a.* FROM audit a WHERE a.run_id IN (SELECT r.id FROM runs r WHERE ` + archivable + `) ORDER BY a.seq`},
	} {
		if err := exportRows(ctx, tx, q.query, start, end, func(row archive.Row) error {
			h, err := w.Write(q.table, row)
			if err != nil {
				return err
			}
			return z.Add(q.table, row, h)
		}); err != nil {
			w.Abort()
			return nil, err
		}
	}
	if err := archiveStep("written"); err != nil {
		return nil, err // as a crash would: the unfinished file stays behind
	}
	return z, w.Commit()
}

// exportRows runs query over [start, end) and calls fn with each row by
// column name.
func exportRows(ctx context.Context, tx *sql.Tx, query string, start, end time.Time, fn func(archive.Row) error) error {
	rows, err := tx.QueryContext(ctx, query, nanos(start), nanos(end))
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		row := make(archive.Row, len(cols))
		for i, c := range cols {
			row[c] = vals[i]
		}
		if err := fn(row); err != nil {
			return err
		}
	}
	return rows.Err()
}

// deleteArchived deletes the month's archivable runs and their audit rows
// (the audit log lets only this transaction delete, through
// archive_unlock), and fails unless they are exactly what the file holds.
func deleteArchived(ctx context.Context, w *wtx, month string, start, end time.Time, res ledger.ArchivedMonth) error {
	if _, err := w.exec(ctx, `INSERT INTO archive_unlock (month) VALUES (?)`, month); err != nil {
		return err
	}
	ids := `SELECT r.id FROM runs r WHERE ` + archivable
	audit, err := w.exec(ctx, `DELETE FROM audit WHERE run_id IN (`+ids+`)`, nanos(start), nanos(end))
	if err != nil {
		return fmt.Errorf("delete archived audit rows: %w", err)
	}
	runs, err := w.exec(ctx, `DELETE FROM runs WHERE id IN (`+ids+`)`, nanos(start), nanos(end))
	if err != nil {
		return fmt.Errorf("delete archived runs: %w", err)
	}
	if _, err := w.exec(ctx, `DELETE FROM archive_unlock`); err != nil {
		return err
	}
	nAudit, _ := audit.RowsAffected()
	nRuns, _ := runs.RowsAffected()
	if nAudit != res.Rows || nRuns != res.Runs {
		return fmt.Errorf("the ledger changed under the archive: %d runs and %d audit rows to delete, the file holds %d and %d",
			nRuns, nAudit, res.Runs, res.Rows)
	}
	return archiveStep("deleted")
}

// insertSummaries writes each summary with an audit row recording it, and
// what each guarded model's day lost, and drops the verify checkpoints:
// the chains they hold no longer match the rows that remain.
func insertSummaries(ctx context.Context, w *wtx, path string, sums []ledger.ArchiveSummary, quota []ledger.ArchivedQuota, actor ledger.Actor) error {
	for _, sum := range sums {
		c, err := insertAuditChange(ctx, w, ledger.AuditEntry{Kind: ledger.AuditArchive, TenantID: sum.TenantID,
			Actor: actor, Evidence: path, Detail: sum.Digest(), Period: sum.Period}, false)
		if err != nil {
			return err
		}
		if _, err := w.exec(ctx, `INSERT INTO archive_summaries (month, tenant_id, period, runs, rows, spent_units,
			spent_micros, net_units, settled_units, first_seq, last_seq, hash, file, audit_seq)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, sum.Month, sum.TenantID, sum.Period, sum.Runs, sum.Rows,
			int64(sum.SpentUnits), int64(sum.SpentMicros), int64(sum.Net), int64(sum.Settled), sum.FirstSeq, sum.LastSeq,
			sum.Hash, path, c.Seq); err != nil {
			return fmt.Errorf("write archive summary: %w", err)
		}
	}
	for _, q := range quota {
		if _, err := w.exec(ctx, `INSERT INTO archive_quota_days (month, upstream, model, day, usage_units) VALUES (?, ?, ?, ?, ?)`,
			q.Month, q.Upstream, q.Model, q.Day, int64(q.Usage)); err != nil {
			return fmt.Errorf("write archived quota day: %w", err)
		}
	}
	_, err := w.exec(ctx, `DELETE FROM verify_checkpoints`)
	return err
}

// ArchiveSummaries are the summaries the ledger keeps of month (none: it
// was never archived, or was restored).
func (s *Store) ArchiveSummaries(ctx context.Context, month string) ([]ledger.ArchiveSummary, error) {
	rows, err := s.query(ctx, `SELECT month, tenant_id, period, runs, rows, spent_units, spent_micros, net_units,
		settled_units, first_seq, last_seq, hash FROM archive_summaries WHERE month = ? ORDER BY tenant_id, period`, month)
	if err != nil {
		return nil, fmt.Errorf("read archive summaries: %w", err)
	}
	defer rows.Close()
	var out []ledger.ArchiveSummary
	for rows.Next() {
		var sum ledger.ArchiveSummary
		if err := rows.Scan(&sum.Month, &sum.TenantID, &sum.Period, &sum.Runs, &sum.Rows, &sum.SpentUnits, &sum.SpentMicros,
			&sum.Net, &sum.Settled, &sum.FirstSeq, &sum.LastSeq, &sum.Hash); err != nil {
			return nil, fmt.Errorf("read archive summaries: %w", err)
		}
		out = append(out, sum)
	}
	return out, rows.Err()
}

// ArchivedMonths are the months whose runs live in an archive file, not in
// the ledger, oldest first.
func (s *Store) ArchivedMonths(ctx context.Context) ([]string, error) {
	rows, err := s.query(ctx, `SELECT DISTINCT month FROM archive_summaries ORDER BY month`)
	if err != nil {
		return nil, fmt.Errorf("read archived months: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var m string
		if err := rows.Scan(&m); err != nil {
			return nil, fmt.Errorf("read archived months: %w", err)
		}
		out = append(out, m)
	}
	return out, rows.Err()
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
