package archive

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
)

// Ledger is what a store does, in its own SQL, for Move, Restore and
// CheckLedger: this package holds the order of the steps (and so the crash
// rule), the stores their statements.
type Ledger interface {
	// ArchivedParts are the parts of month the ledger keeps summaries of,
	// and the file they went to.
	ArchivedParts(ctx context.Context, month string) (map[int64]bool, string, error)
	// ArchiveSummaries are the summaries the ledger keeps of month.
	ArchiveSummaries(ctx context.Context, month string) ([]ledger.ArchiveSummary, error)
	// Snapshot opens one read snapshot of the runs of [start, end) that
	// may be archived, for the file.
	Snapshot(ctx context.Context, start, end time.Time) (Source, error)
	// PartRuns is how many runs a part holds.
	PartRuns() int
	// Now is the ledger's clock.
	Now() time.Time
	// MovePart deletes p's runs (p.RunIDs, each still one of [start, end)
	// that may be archived) and their audit rows, and writes p's
	// summaries, with an audit row each, in one transaction; it fails
	// unless what it deleted is exactly what p holds.
	MovePart(ctx context.Context, month string, start, end time.Time, path string, p Part, actor ledger.Actor) error
	// Left counts the runs of [start, end) that may be archived and are
	// still in the ledger.
	Left(ctx context.Context, start, end time.Time) (int64, error)
	// RestorePart inserts p's rows as they were archived and drops p's
	// summaries, with an audit row each, in one transaction.
	RestorePart(ctx context.Context, month, path string, p Part, actor ledger.Actor) error
}

// Source is a read snapshot of the runs of a month that may be archived.
type Source interface {
	// Runs calls fn with the next n runs after the cursor after, in the
	// order they were admitted (so that a part's audit rows lie together
	// in the ledger and its transaction rewrites few pages), each with
	// its cursor.
	Runs(after int64, n int, fn func(cursor int64, row Row) error) error
	// Audit calls fn with the audit rows (by seq) of the runs whose
	// cursors are in (after, last].
	Audit(after, last int64, fn func(Row) error) error
	Close()
}

// Step is where a test makes archiving stop as a crash would (the step's
// name: "written" before the file is renamed into place, "renamed" before
// the first part's transaction, "part N" before part N's (N ≥ 1), "restore
// part N" before restoring part N; a store adds its own inside a part's
// transaction): nil carries on.
type Step func(string) error

// Bounds is month's first instant (UTC) and the earlier of its end and
// before.
func Bounds(month string, before time.Time) (time.Time, time.Time, error) {
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

// Move moves month's runs that may be archived and ended before before,
// with their audit rows, into a new archive file at path, and leaves
// summaries per tenant, period and part in their place.
//
// The file is written whole, in parts, synced and renamed into place
// first; then each part leaves the ledger in its own transaction, which
// deletes the part's rows and writes its summaries. Admissions wait for
// one part's commit, no longer. At every point each run is either in the
// ledger or in the file with a summary covering its part, never both or
// neither: a file with no summary is stale (archiving again overwrites
// it), and a month with some parts summarized is resumed from its file by
// the next call, whatever path it is given.
func Move(ctx context.Context, l Ledger, month string, before time.Time, path string, actor ledger.Actor, step Step) (ledger.ArchivedMonth, error) {
	start, end, err := Bounds(month, before)
	if err != nil {
		return ledger.ArchivedMonth{}, err
	}
	done, file, err := l.ArchivedParts(ctx, month)
	if err != nil {
		return ledger.ArchivedMonth{}, fmt.Errorf("archive %s: %w", month, err)
	}
	if len(done) > 0 {
		path = file
	} else if runs, err := export(ctx, l, month, start, end, path, step); err != nil || runs == 0 {
		if err != nil {
			err = fmt.Errorf("archive %s: %w", month, err)
		}
		return ledger.ArchivedMonth{Month: month, File: path}, err
	}
	if err := step("renamed"); err != nil {
		return ledger.ArchivedMonth{}, err
	}
	res, err := moveParts(ctx, l, month, start, end, path, done, actor, step)
	if err != nil {
		return res, fmt.Errorf("archive %s: %w", month, err)
	}
	left, err := l.Left(ctx, start, end)
	if err != nil {
		return res, fmt.Errorf("archive %s: %w", month, err)
	}
	if left > 0 {
		return res, fmt.Errorf("archive %s: %d runs that ended in it are still in the ledger and in no part of %s "+
			"(they ended after the file was written): restore the file (quotagate archive restore) and archive the month again",
			month, left, path)
	}
	return res, nil
}

// export writes the runs of [start, end) that may be archived, and their
// audit rows, to a new file at path, in one read snapshot, in parts, and
// returns how many runs it holds (none: no file).
func export(ctx context.Context, l Ledger, month string, start, end time.Time, path string, step Step) (int64, error) {
	src, err := l.Snapshot(ctx, start, end)
	if err != nil {
		return 0, err
	}
	defer src.Close()
	w, err := Create(path, Header{Month: month, Before: end, Created: l.Now().UTC()})
	if err != nil {
		return 0, err
	}
	var total, after int64
	for part := int64(0); ; part++ {
		n, last, err := w.writePart(src, part, after, l.PartRuns())
		if err != nil {
			w.Abort()
			return 0, err
		}
		if n == 0 {
			break
		}
		total, after = total+n, last
	}
	if err := step("written"); err != nil {
		return 0, err // as a crash would: the unfinished file stays behind
	}
	if total == 0 {
		w.Abort()
		return 0, nil
	}
	return total, w.Commit()
}

// writePart writes part: the next size runs of src after the cursor
// after, then their audit rows; it returns how many runs and the last
// one's cursor.
func (w *Writer) writePart(src Source, part, after int64, size int) (int64, int64, error) {
	var n int64
	last := after
	err := src.Runs(after, size, func(cursor int64, row Row) error {
		n, last = n+1, cursor
		_, err := w.Write(part, TableRuns, row)
		return err
	})
	if err != nil || n == 0 {
		return 0, after, err
	}
	err = src.Audit(after, last, func(row Row) error {
		_, err := w.Write(part, TableAudit, row)
		return err
	})
	return n, last, err
}

// moveParts moves each part of the file at path that done does not hold
// out of the ledger, one transaction each, in file order.
func moveParts(ctx context.Context, l Ledger, month string, start, end time.Time, path string, done map[int64]bool,
	actor ledger.Actor, step Step) (ledger.ArchivedMonth, error) {
	res := ledger.ArchivedMonth{Month: month, File: path}
	_, err := ReadParts(path, func(p Part) error {
		if done[p.Index] {
			return nil
		}
		if len(p.Altered) > 0 {
			return fmt.Errorf("%s changed since it was written: %s", path, p.Altered[0])
		}
		if p.Index > 0 {
			if err := step(fmt.Sprintf("part %d", p.Index)); err != nil {
				return err
			}
		}
		p.Records = nil // a part's rows are deleted by their runs' ids
		if err := l.MovePart(ctx, month, start, end, path, p, actor); err != nil {
			return fmt.Errorf("part %d: %w", p.Index, err)
		}
		res.Runs, res.Rows = res.Runs+p.Runs, res.Rows+p.Rows
		res.Summaries = append(res.Summaries, p.Summaries...)
		return nil
	})
	return res, err
}

// CheckLedger re-reads the archive at path against the summaries the
// ledger keeps of its month (`quotagate verify --archive`): one line per
// difference, naming an altered row, and one for parts of the file that
// never left the ledger (archiving stopped part way).
func CheckLedger(ctx context.Context, l Ledger, path string) ([]string, error) {
	problems, pending, err := checkLedger(ctx, l, path)
	if err == nil && len(pending) > 0 {
		problems = append(problems, fmt.Sprintf("parts %s of %s are still in the ledger, not archived: archiving stopped part way; "+
			"run quotagate archive again to finish the month", partList(pending), path))
	}
	return problems, err
}

// checkLedger is CheckLedger's differences and, apart, the parts of the
// file the ledger keeps no summary of.
func checkLedger(ctx context.Context, l Ledger, path string) ([]string, []int64, error) {
	r, err := Open(path)
	if err != nil {
		return nil, nil, err
	}
	month := r.Header.Month
	r.Close()
	want, err := l.ArchiveSummaries(ctx, month)
	if err != nil {
		return nil, nil, err
	}
	if len(want) == 0 {
		return []string{fmt.Sprintf("month %s: the ledger keeps no summary of it: this file was never committed "+
			"(its runs are still in the ledger) or the month was restored already", month)}, nil, nil
	}
	_, problems, pending, err := Check(path, want)
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

// Restore puts the month archived at path back into the ledger exactly as
// it left (every run and audit row, with its seq), one part per
// transaction, each dropping the part's summaries: a crash part way leaves
// each part either back in the ledger or still archived, and restoring
// again finishes. Parts that never left the ledger are skipped. A file
// that fails CheckLedger is refused whole.
func Restore(ctx context.Context, l Ledger, path string, actor ledger.Actor, step Step) (ledger.ArchivedMonth, error) {
	problems, _, err := checkLedger(ctx, l, path)
	if err != nil {
		return ledger.ArchivedMonth{}, fmt.Errorf("restore %s: %w", path, err)
	}
	if len(problems) > 0 {
		return ledger.ArchivedMonth{}, fmt.Errorf("restore %s: the file does not match the ledger's summary, nothing restored: %s",
			path, strings.Join(problems, "; "))
	}
	h, err := Open(path)
	if err != nil {
		return ledger.ArchivedMonth{}, err
	}
	h.Close()
	res := ledger.ArchivedMonth{Month: h.Header.Month, File: path}
	done, _, err := l.ArchivedParts(ctx, res.Month)
	if err != nil {
		return res, err
	}
	_, err = ReadParts(path, func(p Part) error {
		if !done[p.Index] {
			return nil
		}
		if err := step(fmt.Sprintf("restore part %d", p.Index)); err != nil {
			return err
		}
		if err := l.RestorePart(ctx, res.Month, path, p, actor); err != nil {
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
