package sqlite

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/quotagate/quotagate/backend/archive"
	"github.com/quotagate/quotagate/backend/ledger"
)

// CheckArchive re-reads the archive at path against the summaries the
// ledger keeps of its month (`quotagate verify --archive`; see
// archive.CheckLedger).
func (s *Store) CheckArchive(ctx context.Context, path string) ([]string, error) {
	return archive.CheckLedger(ctx, archiveLedger{s}, path)
}

// RestoreArchive puts the month archived at path back into the ledger
// exactly as it left, one part per transaction of the writer (see
// archive.Restore), dropping the verify checkpoints.
func (s *Store) RestoreArchive(ctx context.Context, path string, actor ledger.Actor) (ledger.ArchivedMonth, error) {
	return archive.Restore(ctx, archiveLedger{s}, path, actor, archiveStep)
}

func (l archiveLedger) RestorePart(ctx context.Context, month, path string, p archive.Part, actor ledger.Actor) error {
	return l.write(ctx, func(w *wtx) error {
		if err := insertArchived(ctx, w, p.Records); err != nil {
			return err
		}
		return dropSummaries(ctx, w, month, path, p, actor)
	}, nil)
}

// insertArchived inserts every record as it was archived, by column name:
// a run a statement, the audit rows many to a statement. A restored audit
// row is indexed for text by a trigger in its statement, and FTS5 writes a
// segment of its index at the end of every statement that added to it: an
// audit row a statement made a segment a row, whose merges made restoring a
// month of a 20 M-run ledger crawl.
func insertArchived(ctx context.Context, w *wtx, records []archive.Record) error {
	columns := map[string]map[string]bool{}
	for _, t := range []string{archive.TableRuns, archive.TableAudit} {
		cols, err := tableColumns(ctx, w, t)
		if err != nil {
			return err
		}
		columns[t] = cols
	}
	var group []archive.Record
	var groupNames []string
	for _, rec := range records {
		names := make([]string, 0, len(rec.Row))
		for c := range rec.Row {
			if !columns[rec.Table][c] {
				return fmt.Errorf("the ledger's %s table has no column %q (%s)", rec.Table, c, archive.Describe(rec.Table, rec.Row))
			}
			names = append(names, c)
		}
		sort.Strings(names)
		if len(group) > 0 && (rec.Table != group[0].Table || rec.Table != archive.TableAudit ||
			!slices.Equal(names, groupNames) || len(group) == restoreRowsAStatement) {
			if err := insertRecords(ctx, w, groupNames, group); err != nil {
				return err
			}
			group = group[:0]
		}
		group, groupNames = append(group, rec), names
	}
	if len(group) == 0 {
		return nil
	}
	return insertRecords(ctx, w, groupNames, group)
}

// restoreRowsAStatement is how many audit rows one INSERT restores: ~20
// columns a row keeps it well within SQLite's 32,766 parameters.
const restoreRowsAStatement = 500

// insertRecords inserts recs, rows of one table with the columns names, in
// one statement. When it fails, they are inserted one by one, so that the
// error names the row (the failed statement changed nothing).
func insertRecords(ctx context.Context, w *wtx, names []string, recs []archive.Record) error {
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(names)), ", ") + ")"
	q := fmt.Sprintf(`INSERT INTO %s ("%s") VALUES %s`, recs[0].Table, strings.Join(names, `", "`),
		strings.TrimSuffix(strings.Repeat(row+", ", len(recs)), ", "))
	args := make([]any, 0, len(names)*len(recs))
	for _, rec := range recs {
		for _, c := range names {
			args = append(args, rec.Row[c])
		}
	}
	_, err := w.exec(ctx, q, args...)
	if err == nil {
		return nil
	}
	if len(recs) == 1 {
		return fmt.Errorf("restore %s: %w", archive.Describe(recs[0].Table, recs[0].Row), err)
	}
	for i := range recs {
		if err := insertRecords(ctx, w, names, recs[i:i+1]); err != nil {
			return err
		}
	}
	return err
}

// tableColumns is the set of table's column names.
func tableColumns(ctx context.Context, w *wtx, table string) (map[string]bool, error) {
	rows, err := w.query(ctx, `SELECT name FROM pragma_table_info(?)`, table)
	if err != nil {
		return nil, fmt.Errorf("columns of %s: %w", table, err)
	}
	defer rows.Close()
	cols := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		cols[name] = true
	}
	return cols, rows.Err()
}

// dropSummaries deletes what the ledger kept of part p of the restored
// month, with an audit row per summary, takes what its runs used back out
// of the archived quota days, and drops the verify checkpoints.
func dropSummaries(ctx context.Context, w *wtx, month, path string, p archive.Part, actor ledger.Actor) error {
	for _, sum := range p.Summaries {
		if err := insertAudit(ctx, w, ledger.AuditEntry{Kind: ledger.AuditUnarchive, TenantID: sum.TenantID,
			Actor: actor, Evidence: path, Detail: sum.Digest(), Period: sum.Period}, false); err != nil {
			return err
		}
	}
	if _, err := w.exec(ctx, `DELETE FROM archive_summaries WHERE month = ? AND part = ?`, month, p.Index); err != nil {
		return fmt.Errorf("drop the summaries of %s part %d: %w", month, p.Index, err)
	}
	for _, q := range p.Quota {
		if _, err := w.exec(ctx, `UPDATE archive_quota_days SET usage_units = usage_units - ?
			WHERE month = ? AND upstream = ? AND model = ? AND day = ?`, int64(q.Usage), month, q.Upstream, q.Model, q.Day); err != nil {
			return fmt.Errorf("restore archived quota day: %w", err)
		}
	}
	if _, err := w.exec(ctx, `DELETE FROM archive_quota_days WHERE month = ? AND (usage_units = 0 OR
		NOT EXISTS (SELECT 1 FROM archive_summaries WHERE month = ?))`, month, month); err != nil {
		return fmt.Errorf("restore archived quota days: %w", err)
	}
	_, err := w.exec(ctx, `DELETE FROM verify_checkpoints`)
	return err
}
