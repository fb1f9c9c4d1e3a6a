package postgres

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quotagate/quotagate/backend/archive"
	"github.com/quotagate/quotagate/backend/ledger"
)

// archivable selects the runs (as r) of one month that may leave the
// ledger: ended in [$1, $2), none queued or active, none holding (a run
// whose usage is pending or unknown holds its reserve, and stays).
const archivable = `r.updated_at >= $1 AND r.updated_at < $2 AND r.status NOT IN ('queued', 'active')
	AND r.usage NOT IN ('pending', 'unknown')`

// archivePartRuns is how many runs one transaction moves out of the
// ledger (with their audit rows): other gateways' admissions of the same
// tenants never wait on it, and a restart resumes where it stopped.
var archivePartRuns = 2000

// archiveStep is where a test makes archiving stop as a crash would: the
// steps of archive.Step, and "deleted" inside each part's transaction
// before its summaries are written. nil carries on.
var archiveStep = func(string) error { return nil }

// ArchivableMonths lists the UTC months (2025-11) with runs that ended
// before before and may be archived, oldest first.
func (s *Store) ArchivableMonths(ctx context.Context, before time.Time) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT DISTINCT to_char(to_timestamp(r.updated_at / 1000000000) AT TIME ZONE 'UTC', 'YYYY-MM') AS month
		FROM runs r WHERE `+archivable+` ORDER BY month`, int64(0), nanos(before))
	if err != nil {
		return nil, fmt.Errorf("archivable months: %w", err)
	}
	months, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("archivable months: %w", err)
	}
	return months, nil
}

// ArchiveMonth moves month's archivable runs that ended before before,
// with their audit rows, into a new archive file at path, one part per
// transaction (see archive.Move), and leaves summaries per tenant, period
// and part in their place. One archive or restore at a time per ledger:
// a second, from this gateway or another sharing the ledger, is refused
// while the first holds the ledger's archive lock.
func (s *Store) ArchiveMonth(ctx context.Context, month string, before time.Time, path string, actor ledger.Actor) (ledger.ArchivedMonth, error) {
	var res ledger.ArchivedMonth
	err := s.archiving(ctx, func() (err error) {
		res, err = archive.Move(ctx, archiveLedger{s}, month, before, path, actor, archiveStep)
		return err
	})
	return res, err
}

// CheckArchive re-reads the archive at path against the summaries the
// ledger keeps of its month (`quotagate verify --archive`; see
// archive.CheckLedger).
func (s *Store) CheckArchive(ctx context.Context, path string) ([]string, error) {
	return archive.CheckLedger(ctx, archiveLedger{s}, path)
}

// RestoreArchive puts the month archived at path back into the ledger
// exactly as it left, one part per transaction (see archive.Restore),
// under the ledger's archive lock.
func (s *Store) RestoreArchive(ctx context.Context, path string, actor ledger.Actor) (ledger.ArchivedMonth, error) {
	var res ledger.ArchivedMonth
	err := s.archiving(ctx, func() (err error) {
		res, err = archive.Restore(ctx, archiveLedger{s}, path, actor, archiveStep)
		return err
	})
	return res, err
}

// archiving runs fn holding the ledger's archive lock: a session advisory
// lock named after the ledger's schema, which PostgreSQL lets go when the
// session ends, so that a gateway killed mid-archive leaves no lock behind.
func (s *Store) archiving(ctx context.Context, fn func() error) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("archive lock: %w", err)
	}
	defer conn.Release()
	const key = `hashtext('quotagate archive ' || current_schema())`
	var ok bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock(`+key+`)`).Scan(&ok); err != nil {
		return fmt.Errorf("archive lock: %w", err)
	}
	if !ok {
		return ledger.Errorf(ledger.CodeConflict, "another gateway or quotagate archive is archiving or restoring this ledger; try again once it is done")
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(`+key+`)`)
	return fn()
}

// FreeBytes is 0: PostgreSQL reuses the space of deleted rows once
// autovacuum has passed, and the ledger's database is not this process's
// file to measure.
func (s *Store) FreeBytes(context.Context) (int64, error) { return 0, nil }

// archiveLedger is the store as archive.Move, Restore and CheckLedger see
// it; the summaries and parts already archived are the store's own reads
// (ledgersql.Reads).
type archiveLedger struct{ *Store }

func (l archiveLedger) Left(ctx context.Context, start, end time.Time) (int64, error) {
	var left int64
	err := l.pool.QueryRow(ctx, `SELECT count(*) FROM runs r WHERE `+archivable, nanos(start), nanos(end)).Scan(&left)
	return left, err
}

func (l archiveLedger) PartRuns() int  { return archivePartRuns }
func (l archiveLedger) Now() time.Time { return l.opts.Now() }

// Snapshot reads the month's archivable runs in one REPEATABLE READ
// transaction, by seq (the order they were admitted).
func (l archiveLedger) Snapshot(ctx context.Context, start, end time.Time) (archive.Source, error) {
	tx, err := l.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, err
	}
	return monthRows{ctx, tx, nanos(start), nanos(end)}, nil
}

// monthRows is a read snapshot of a month's archivable runs.
type monthRows struct {
	ctx        context.Context
	tx         pgx.Tx
	start, end int64
}

func (m monthRows) Runs(after int64, n int, fn func(int64, archive.Row) error) error {
	return exportRows(m.ctx, m.tx, `SELECT r.* FROM runs r WHERE `+archivable+` AND r.seq > $3 ORDER BY r.seq LIMIT $4`,
		[]any{m.start, m.end, after, n}, func(row archive.Row) error { return fn(row["seq"].(int64), row) })
}

func (m monthRows) Audit(after, last int64, fn func(archive.Row) error) error {
	return exportRows(m.ctx, m.tx, `SELECT a.* FROM audit a WHERE a.run_id IN (SELECT r.id FROM runs r WHERE `+archivable+
		` AND r.seq > $3 AND r.seq <= $4) ORDER BY a.seq`, []any{m.start, m.end, after, last}, fn)
}

func (m monthRows) Close() { m.tx.Rollback(context.WithoutCancel(m.ctx)) }

// exportRows runs query with args and calls fn with each row by column
// name, its values as an archive holds them: integers as int64 (a boolean
// as 1 or 0, as SQLite keeps it), text as string.
func exportRows(ctx context.Context, tx pgx.Tx, query string, args []any, fn func(archive.Row) error) error {
	rows, err := tx.Query(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	fields := rows.FieldDescriptions()
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return err
		}
		row := make(archive.Row, len(fields))
		for i, f := range fields {
			switch v := vals[i].(type) {
			case int32:
				row[f.Name] = int64(v)
			case bool:
				row[f.Name] = map[bool]int64{false: 0, true: 1}[v]
			case int64, string, nil:
				row[f.Name] = v
			default:
				return fmt.Errorf("column %s holds a %T, which an archive does not keep", f.Name, v)
			}
		}
		if err := fn(row); err != nil {
			return err
		}
	}
	return rows.Err()
}

// MovePart deletes part p's runs (each still archivable) and their audit
// rows (the audit log lets only a
// transaction that sets quotagate.archive delete), writes its summaries
// with an audit row each and what each guarded model's day lost, in one
// transaction, and fails unless it deleted exactly what the file holds.
func (l archiveLedger) MovePart(ctx context.Context, month string, start, end time.Time, path string, p archive.Part, actor ledger.Actor) error {
	return l.write(ctx, func(w *wtx) error {
		ids := `SELECT r.id FROM runs r WHERE ` + archivable + ` AND r.id = ANY($3)`
		args := []any{nanos(start), nanos(end), p.RunIDs}
		if _, err := w.Exec(ctx, `SET LOCAL quotagate.archive = 'on'`); err != nil {
			return err
		}
		audit, err := w.Exec(ctx, `DELETE FROM audit WHERE run_id IN (`+ids+`)`, args...)
		if err != nil {
			return fmt.Errorf("delete archived audit rows: %w", err)
		}
		runs, err := w.Exec(ctx, `DELETE FROM runs WHERE id IN (`+ids+`)`, args...)
		if err != nil {
			return fmt.Errorf("delete archived runs: %w", err)
		}
		if _, err := w.Exec(ctx, `SET LOCAL quotagate.archive = 'off'`); err != nil {
			return err
		}
		if audit.RowsAffected() != p.Rows || runs.RowsAffected() != p.Runs {
			return fmt.Errorf("the ledger changed under the archive: %d runs and %d audit rows to delete, the file holds %d and %d",
				runs.RowsAffected(), audit.RowsAffected(), p.Runs, p.Rows)
		}
		if err := archiveStep("deleted"); err != nil {
			return err
		}
		l.insertSummaries(w, path, p, actor)
		return nil
	})
}

// insertSummaries queues each summary of p after the audit row recording
// it (whose seq it keeps), and adds what each guarded model's day lost.
func (l archiveLedger) insertSummaries(w *wtx, path string, p archive.Part, actor ledger.Actor) {
	for _, sum := range p.Summaries {
		insertAuditIn(w, ledger.AuditEntry{Kind: ledger.AuditArchive, TenantID: sum.TenantID, Actor: actor, Evidence: path,
			Detail: sum.Digest(), Period: sum.Period}, false, l.opts.Instance)
		w.queue(`INSERT INTO archive_summaries (month, part, tenant_id, period, runs, rows, spent_units, spent_micros,
			net_units, settled_units, first_seq, last_seq, hash, file, audit_seq)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, currval(pg_get_serial_sequence('audit', 'seq')))`,
			sum.Month, sum.Part, sum.TenantID, sum.Period, sum.Runs, sum.Rows, int64(sum.SpentUnits), int64(sum.SpentMicros),
			int64(sum.Net), int64(sum.Settled), sum.FirstSeq, sum.LastSeq, sum.Hash, path)
	}
	for _, q := range p.Quota {
		w.queue(`INSERT INTO archive_quota_days (month, upstream, model, day, usage_units) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (month, upstream, model, day) DO UPDATE SET usage_units = archive_quota_days.usage_units + excluded.usage_units`,
			q.Month, q.Upstream, q.Model, q.Day, int64(q.Usage))
	}
}

// RestorePart inserts p's rows as they were archived (their seqs too), and
// drops p's summaries with an audit row each, taking what its runs used
// back out of the archived quota days, in one transaction.
func (l archiveLedger) RestorePart(ctx context.Context, month, path string, p archive.Part, actor ledger.Actor) error {
	return l.write(ctx, func(w *wtx) error {
		for _, rec := range p.Records {
			if err := insertArchived(ctx, w, rec); err != nil {
				return err
			}
		}
		for _, sum := range p.Summaries {
			insertAuditIn(w, ledger.AuditEntry{Kind: ledger.AuditUnarchive, TenantID: sum.TenantID, Actor: actor,
				Evidence: path, Detail: sum.Digest(), Period: sum.Period}, false, l.opts.Instance)
		}
		w.queue(`DELETE FROM archive_summaries WHERE month = $1 AND part = $2`, month, p.Index)
		for _, q := range p.Quota {
			w.queue(`UPDATE archive_quota_days SET usage_units = usage_units - $1
				WHERE month = $2 AND upstream = $3 AND model = $4 AND day = $5`, int64(q.Usage), month, q.Upstream, q.Model, q.Day)
		}
		w.queue(`DELETE FROM archive_quota_days WHERE month = $1 AND (usage_units = 0 OR
			NOT EXISTS (SELECT 1 FROM archive_summaries WHERE month = $1))`, month)
		return nil
	})
}

// insertArchived inserts one archived row by column name, a boolean
// column's 1 or 0 as true or false, its seq as it was.
func insertArchived(ctx context.Context, w *wtx, rec archive.Record) error {
	types, err := columnTypes(ctx, w, rec.Table)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(rec.Row))
	for c := range rec.Row {
		if types[c] == "" {
			return fmt.Errorf("the ledger's %s table has no column %q (%s)", rec.Table, c, archive.Describe(rec.Table, rec.Row))
		}
		names = append(names, c)
	}
	sort.Strings(names)
	args := make([]any, len(names))
	marks := make([]string, len(names))
	for i, c := range names {
		args[i], marks[i] = rec.Row[c], fmt.Sprintf("$%d", i+1)
		if n, ok := rec.Row[c].(int64); ok && types[c] == "boolean" {
			args[i] = n == 1
		}
	}
	q := fmt.Sprintf(`INSERT INTO %s ("%s") OVERRIDING SYSTEM VALUE VALUES (%s)`, rec.Table, strings.Join(names, `", "`),
		strings.Join(marks, ", "))
	if _, err := w.Exec(ctx, q, args...); err != nil {
		return fmt.Errorf("restore %s: %w", archive.Describe(rec.Table, rec.Row), err)
	}
	return nil
}

// columnTypes is table's columns with their types, read once per
// transaction.
func columnTypes(ctx context.Context, w *wtx, table string) (map[string]string, error) {
	if t := w.columns[table]; t != nil {
		return t, nil
	}
	rows, err := w.Query(ctx, `SELECT column_name, data_type FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = $1`, table)
	if err != nil {
		return nil, fmt.Errorf("columns of %s: %w", table, err)
	}
	types := map[string]string{}
	var name, typ string
	if _, err := pgx.ForEachRow(rows, []any{&name, &typ}, func() error { types[name] = typ; return nil }); err != nil {
		return nil, fmt.Errorf("columns of %s: %w", table, err)
	}
	if w.columns == nil {
		w.columns = map[string]map[string]string{}
	}
	w.columns[table] = types
	return types, nil
}
