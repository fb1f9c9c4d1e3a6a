package sqlite

import (
	"context"
	"fmt"
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

// insertArchived inserts every record as it was archived, by column name.
func insertArchived(ctx context.Context, w *wtx, records []archive.Record) error {
	columns := map[string]map[string]bool{}
	for _, t := range []string{archive.TableRuns, archive.TableAudit} {
		cols, err := tableColumns(ctx, w, t)
		if err != nil {
			return err
		}
		columns[t] = cols
	}
	for _, rec := range records {
		names := make([]string, 0, len(rec.Row))
		for c := range rec.Row {
			if !columns[rec.Table][c] {
				return fmt.Errorf("the ledger's %s table has no column %q (%s)", rec.Table, c, archive.Describe(rec.Table, rec.Row))
			}
			names = append(names, c)
		}
		sort.Strings(names)
		args := make([]any, len(names))
		for i, c := range names {
			args[i] = rec.Row[c]
		}
		q := fmt.Sprintf(`INSERT INTO %s ("%s") VALUES (%s)`, rec.Table, strings.Join(names, `", "`),
			strings.TrimSuffix(strings.Repeat("?, ", len(names)), ", "))
		if _, err := w.exec(ctx, q, args...); err != nil {
			return fmt.Errorf("restore %s: %w", archive.Describe(rec.Table, rec.Row), err)
		}
	}
	return nil
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
