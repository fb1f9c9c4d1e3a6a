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
// ledger keeps of its month (`quotagate verify --archive`): one line per
// difference, naming an altered row, and one for parts of the file that
// never left the ledger (archiving stopped part way).
func (s *Store) CheckArchive(ctx context.Context, path string) ([]string, error) {
	problems, pending, err := s.checkArchive(ctx, path)
	if err == nil && len(pending) > 0 {
		problems = append(problems, fmt.Sprintf("parts %s of %s are still in the ledger, not archived: archiving stopped part way; "+
			"run quotagate archive again to finish the month", partList(pending), path))
	}
	return problems, err
}

// checkArchive is CheckArchive's differences and, apart, the parts of the
// file the ledger keeps no summary of.
func (s *Store) checkArchive(ctx context.Context, path string) ([]string, []int64, error) {
	r, err := archive.Open(path)
	if err != nil {
		return nil, nil, err
	}
	month := r.Header.Month
	r.Close()
	want, err := s.ArchiveSummaries(ctx, month)
	if err != nil {
		return nil, nil, err
	}
	if len(want) == 0 {
		return []string{fmt.Sprintf("month %s: the ledger keeps no summary of it: this file was never committed "+
			"(its runs are still in the ledger) or the month was restored already", month)}, nil, nil
	}
	_, problems, pending, err := archive.Check(path, want)
	return problems, pending, err
}

// partList writes parts as "3, 4, 5" (at most ten, then "…").
func partList(parts []int64) string {
	var b strings.Builder
	for i, p := range parts {
		if i == 10 {
			b.WriteString(", …")
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprint(&b, p)
	}
	return b.String()
}

// RestoreArchive puts the month archived at path back into the ledger
// exactly as it left (every run and audit row, with its seq), one part per
// transaction of the writer, each dropping the part's summaries with an
// audit row per summary, and the verify checkpoints: a crash part way
// leaves each part either back in the ledger or still archived, and
// restoring again finishes. Parts that never left the ledger are skipped.
// A file that fails CheckArchive is refused whole.
func (s *Store) RestoreArchive(ctx context.Context, path string, actor ledger.Actor) (ledger.ArchivedMonth, error) {
	problems, _, err := s.checkArchive(ctx, path)
	if err != nil {
		return ledger.ArchivedMonth{}, fmt.Errorf("restore %s: %w", path, err)
	}
	if len(problems) > 0 {
		return ledger.ArchivedMonth{}, fmt.Errorf("restore %s: the file does not match the ledger's summary, nothing restored: %s",
			path, strings.Join(problems, "; "))
	}
	r, err := archive.Open(path)
	if err != nil {
		return ledger.ArchivedMonth{}, err
	}
	r.Close()
	res := ledger.ArchivedMonth{Month: r.Header.Month, File: path}
	done, _, err := s.archivedParts(ctx, res.Month)
	if err != nil {
		return res, err
	}
	_, err = archive.ReadParts(path, func(p archive.Part) error {
		if !done[p.Index] {
			return nil
		}
		if err := archiveStep(fmt.Sprintf("restore part %d", p.Index)); err != nil {
			return err
		}
		if err := s.write(ctx, func(w *wtx) error {
			if err := insertArchived(ctx, w, p.Records); err != nil {
				return err
			}
			return dropSummaries(ctx, w, res.Month, path, p, actor)
		}, nil); err != nil {
			return fmt.Errorf("part %d: %w", p.Index, err)
		}
		res.Runs, res.Rows = res.Runs+p.Runs, res.Rows+p.Rows
		res.Summaries = append(res.Summaries, p.Summaries...)
		return nil
	})
	if err != nil {
		return res, fmt.Errorf("restore %s: %w", path, err)
	}
	return res, nil
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
