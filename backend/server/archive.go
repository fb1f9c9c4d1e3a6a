package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/quotagate/quotagate/backend/admin"
	"github.com/quotagate/quotagate/backend/config"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/postgres"
)

// archiver is a ledger whose closed months can be archived: SQLite's and
// PostgreSQL's.
type archiver interface {
	ledger.Store
	ArchivableMonths(ctx context.Context, before time.Time) ([]string, error)
	ArchiveMonth(ctx context.Context, month string, before time.Time, path string, actor ledger.Actor) (ledger.ArchivedMonth, error)
	CheckArchive(ctx context.Context, path string) ([]string, error)
	RestoreArchive(ctx context.Context, path string, actor ledger.Actor) (ledger.ArchivedMonth, error)
	FreeBytes(ctx context.Context) (int64, error)
}

// ArchiveReport is what `quotagate archive` did.
type ArchiveReport struct {
	Months    []ledger.ArchivedMonth
	FreeBytes int64 // free in the ledger file afterwards, for new rows
	Freed     int64 // of which archiving gave back
}

// ArchiveDir is where archive files go when --to is not given, in the
// data dir.
const ArchiveDir = "archive"

// ArchiveFileName is the file a month is archived to in a directory.
func ArchiveFileName(month string) string { return "quotagate-" + month + ".jsonl.gz" }

// closedBefore reads --before: the first day of a month (UTC) no later
// than the current month's (at now): only closed months are archived,
// and only whole.
func closedBefore(raw string, now time.Time) (time.Time, error) {
	before, err := time.Parse(time.DateOnly, raw)
	if err != nil {
		return before, fmt.Errorf("--before wants a date like 2026-01-01, not %q", raw)
	}
	if before.Day() != 1 {
		return before, fmt.Errorf("--before %s is not the first day of a month: an archive holds whole months (UTC)", raw)
	}
	current := time.Date(now.UTC().Year(), now.UTC().Month(), 1, 0, 0, 0, 0, time.UTC)
	if before.After(current) {
		return before, fmt.Errorf("--before %s is in the current month (%s) or later: only closed months are archived",
			raw, current.Format("2006-01"))
	}
	return before, nil
}

// archiveTarget reads --to: a directory (the default, <data>/archive) gets
// one file per month; a file name takes exactly one month. It is checked
// writable before anything is read.
func archiveTarget(to, dataDir string) (dir, file string, err error) {
	if to == "" {
		to = filepath.Join(dataDir, ArchiveDir) + string(filepath.Separator)
	}
	if fi, statErr := os.Stat(to); (statErr == nil && fi.IsDir()) || strings.HasSuffix(to, string(filepath.Separator)) {
		dir = to
	} else {
		dir, file = filepath.Dir(to), to
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", fmt.Errorf("--to %s is not writable: %w", to, err)
	}
	probe, err := os.CreateTemp(dir, ".quotagate-probe-*")
	if err != nil {
		return "", "", fmt.Errorf("--to %s is not writable: %w", to, err)
	}
	probe.Close()
	os.Remove(probe.Name())
	return dir, file, nil
}

// openArchiver opens the configured ledger for archiving.
func openArchiver(ctx context.Context, o Options) (archiver, error) {
	cfg := o.Config
	if cfg == nil {
		cfg = config.Default()
	}
	if cfg.Ledger.Driver == config.DriverPostgres {
		// As verify does: the command is no gateway, and takes no lease;
		// the ledger's archive lock keeps it from archiving alongside
		// another command or a gateway's dashboard action.
		st, err := postgres.Open(ctx, cfg.Ledger.DSN, postgres.Options{Instance: "archive", Now: o.Clock.Now})
		if err != nil {
			return nil, fmt.Errorf("open ledger: %w", err)
		}
		return st, nil
	}
	path := filepath.Join(o.DataDir, LedgerFile)
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("no ledger at %s: %w", path, err)
	}
	st, err := openLedgerAt(o.Clock.Now)(ctx, o.DataDir)
	if err != nil {
		return nil, fmt.Errorf("open ledger: %w", err)
	}
	a, ok := st.(archiver)
	if !ok {
		st.Close()
		return nil, errors.New("this ledger cannot be archived")
	}
	return a, nil
}

// Archive is `quotagate archive --before DATE [--to DIR|FILE]`: every
// closed month with runs that ended before DATE, one transaction each.
// Bad input is refused before anything changes.
func Archive(ctx context.Context, o Options, before, to string) (ArchiveReport, error) {
	var rep ArchiveReport
	cut, err := closedBefore(before, o.Clock.Now())
	if err != nil {
		return rep, err
	}
	dir, file, err := archiveTarget(to, o.DataDir)
	if err != nil {
		return rep, err
	}
	st, err := openArchiver(ctx, o)
	if err != nil {
		return rep, err
	}
	defer st.Close()
	return archiveMonths(ctx, st, cut, dir, file, ledger.Operator("cli"))
}

func archiveMonths(ctx context.Context, st archiver, cut time.Time, dir, file string, actor ledger.Actor) (ArchiveReport, error) {
	var rep ArchiveReport
	months, err := st.ArchivableMonths(ctx, cut)
	if err != nil {
		return rep, err
	}
	if file != "" && len(months) > 1 {
		return rep, fmt.Errorf("--to %s names one file, but %d months (%s … %s) have runs to archive: name a directory",
			file, len(months), months[0], months[len(months)-1])
	}
	free0, err := st.FreeBytes(ctx)
	if err != nil {
		return rep, err
	}
	for _, m := range months {
		path := file
		if path == "" {
			path = filepath.Join(dir, ArchiveFileName(m))
		}
		res, err := st.ArchiveMonth(ctx, m, cut, path, actor)
		if err != nil {
			return rep, err
		}
		rep.Months = append(rep.Months, res)
	}
	if rep.FreeBytes, err = st.FreeBytes(ctx); err != nil {
		return rep, err
	}
	rep.Freed = rep.FreeBytes - free0
	return rep, nil
}

// RestoreArchive is `quotagate archive restore FILE`.
func RestoreArchive(ctx context.Context, o Options, file string) (ledger.ArchivedMonth, error) {
	st, err := openArchiver(ctx, o)
	if err != nil {
		return ledger.ArchivedMonth{}, err
	}
	defer st.Close()
	return st.RestoreArchive(ctx, file, ledger.Operator("cli"))
}

// VerifyArchive is `quotagate verify --archive FILE`: the file against
// the summary the ledger keeps of its month.
func VerifyArchive(ctx context.Context, o Options, file string) ([]string, error) {
	st, err := openArchiver(ctx, o)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	return st.CheckArchive(ctx, file)
}

// archiveAction is the dashboard's Archive action on the gateway's own
// ledger: through its writer, one month's transaction at a time.
type archiveAction struct {
	s  *Server
	st archiver
}

// archiveActions is the Archive action when the ledger can be archived
// (nil: the admin API says it cannot).
func (s *Server) archiveActions() admin.Archiver {
	st, ok := s.store.(archiver)
	if !ok {
		return nil
	}
	return archiveAction{s, st}
}

func (a archiveAction) Archive(ctx context.Context, before string, actor ledger.Actor) (admin.ArchiveResult, error) {
	cut, err := closedBefore(before, a.s.opts.Clock.Now())
	if err != nil {
		return admin.ArchiveResult{}, ledger.Errorf(ledger.CodeInvalidRequest, "%v", err)
	}
	dir, _, err := archiveTarget("", a.s.opts.DataDir)
	if err != nil {
		return admin.ArchiveResult{}, err
	}
	rep, err := archiveMonths(ctx, a.st, cut, dir, "", actor)
	if err != nil {
		return admin.ArchiveResult{}, err
	}
	return admin.ArchiveResult{Months: rep.Months, Dir: dir, FreedBytes: rep.Freed}, nil
}
