package sqlite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/quotagate/quotagate/backend/archive"
	"github.com/quotagate/quotagate/backend/ledger"
)

// CheckArchive re-reads the archive at path against the summaries the
// ledger keeps of its month (`quotagate verify --archive`): one line per
// difference, naming an altered row.
func (s *Store) CheckArchive(ctx context.Context, path string) ([]string, error) {
	r, err := archive.Open(path)
	if err != nil {
		return nil, err
	}
	month := r.Header.Month
	r.Close()
	want, err := s.ArchiveSummaries(ctx, month)
	if err != nil {
		return nil, err
	}
	if len(want) == 0 {
		return []string{fmt.Sprintf("month %s: the ledger keeps no summary of it: this file was never committed "+
			"(its runs are still in the ledger) or the month was restored already", month)}, nil
	}
	_, problems, err := archive.Check(path, want)
	return problems, err
}

// RestoreArchive puts the month archived at path back into the ledger
// exactly as it left (every run and audit row, with its seq), in one
// transaction of the writer that also drops the month's summaries, audits
// the restore per summary and drops the verify checkpoints. A file that
// fails CheckArchive is refused whole.
func (s *Store) RestoreArchive(ctx context.Context, path string, actor ledger.Actor) (ledger.ArchivedMonth, error) {
	problems, err := s.CheckArchive(ctx, path)
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
	defer r.Close()
	res := ledger.ArchivedMonth{Month: r.Header.Month, File: path}
	if res.Summaries, err = s.ArchiveSummaries(ctx, res.Month); err != nil {
		return res, err
	}
	err = s.write(ctx, func(w *wtx) error {
		if err := insertArchived(ctx, w, r, &res); err != nil {
			return err
		}
		return dropSummaries(ctx, w, res, actor)
	}, nil)
	if err != nil {
		return res, fmt.Errorf("restore %s: %w", path, err)
	}
	return res, nil
}

// insertArchived inserts every row of r as it was archived, by column name.
func insertArchived(ctx context.Context, w *wtx, r *archive.Reader, res *ledger.ArchivedMonth) error {
	columns := map[string]map[string]bool{}
	for _, t := range []string{archive.TableRuns, archive.TableAudit} {
		cols, err := tableColumns(ctx, w, t)
		if err != nil {
			return err
		}
		columns[t] = cols
	}
	for {
		rec, line, err := r.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		names := make([]string, 0, len(rec.Row))
		for c := range rec.Row {
			if !columns[rec.Table][c] {
				return fmt.Errorf("archive line %d: the ledger's %s table has no column %q", line, rec.Table, c)
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
			return fmt.Errorf("archive line %d: restore %s: %w", line, archive.Describe(rec.Table, rec.Row), err)
		}
		if rec.Table == archive.TableRuns {
			res.Runs++
		} else {
			res.Rows++
		}
	}
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

// dropSummaries deletes what the ledger kept of the restored month, with
// an audit row per summary, and the verify checkpoints.
func dropSummaries(ctx context.Context, w *wtx, res ledger.ArchivedMonth, actor ledger.Actor) error {
	for _, sum := range res.Summaries {
		if err := insertAudit(ctx, w, ledger.AuditEntry{Kind: ledger.AuditUnarchive, TenantID: sum.TenantID,
			Actor: actor, Evidence: res.File, Detail: sum.Digest(), Period: sum.Period}, false); err != nil {
			return err
		}
	}
	for _, q := range []string{`DELETE FROM archive_summaries WHERE month = ?`, `DELETE FROM archive_quota_days WHERE month = ?`} {
		if _, err := w.exec(ctx, q, res.Month); err != nil {
			return fmt.Errorf("drop the summaries of %s: %w", res.Month, err)
		}
	}
	_, err := w.exec(ctx, `DELETE FROM verify_checkpoints`)
	return err
}
