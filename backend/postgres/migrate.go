package postgres

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/sqlite"
)

// MigrateResult is what `quotagate migrate` copied.
type MigrateResult struct {
	Rows        map[string]int // per table
	Interrupted int            // runs the desktop ledger had left open, ended interrupted first
	Problems    []string       // Verify of the copy, plus any balance that differs from the source
}

// MigrateSQLite copies the desktop ledger at path into the empty shared
// ledger at dsn, in one transaction, then verifies the copy and compares
// every balance with the source. The gateway using path must be stopped:
// runs it left open are first ended interrupted with their holds kept, as
// its next start would. Rows keep their sequence numbers and times.
func MigrateSQLite(ctx context.Context, path, dsn string) (MigrateResult, error) {
	res := MigrateResult{Rows: map[string]int{}}
	if _, err := os.Stat(path); err != nil {
		return res, fmt.Errorf("migrate: no SQLite ledger: %w", err)
	}
	src, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		return res, fmt.Errorf("migrate: %w", err)
	}
	defer src.Close()
	if res.Interrupted, err = readySource(ctx, src); err != nil {
		return res, fmt.Errorf("migrate: %w", err)
	}
	dst, err := Open(ctx, dsn, Options{Instance: "migrate"})
	if err != nil {
		return res, fmt.Errorf("migrate: %w", err)
	}
	defer dst.Close()
	err = pgx.BeginFunc(ctx, dst.pool, func(tx pgx.Tx) error {
		var used bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM tenants) OR EXISTS (SELECT 1 FROM runs)
			OR EXISTS (SELECT 1 FROM audit)`).Scan(&used); err != nil {
			return err
		}
		if used {
			return ledger.Errorf(ledger.CodeConflict, "the PostgreSQL ledger %s is not empty; migrate copies into an empty one", dst.Where())
		}
		if err := src.Dump(ctx, func(table string, cols []string, vals []any) error {
			res.Rows[table]++
			return insertDumped(ctx, tx, table, cols, vals)
		}); err != nil {
			return err
		}
		for _, t := range [][2]string{{"audit", "seq"}, {"snapshots", "id"}} {
			if _, err := tx.Exec(ctx, fmt.Sprintf(`SELECT setval(pg_get_serial_sequence('%[1]s', '%[2]s'),
				coalesce((SELECT max(%[2]s) FROM %[1]s), 0) + 1, false)`, t[0], t[1])); err != nil {
				return fmt.Errorf("advance %s.%s: %w", t[0], t[1], err)
			}
		}
		return nil
	})
	if err != nil {
		return res, fmt.Errorf("migrate %s to %s: %w", path, dst.Where(), err)
	}
	if res.Problems, err = dst.Verify(ctx); err != nil {
		return res, fmt.Errorf("migrate: verify the copy: %w", err)
	}
	want, err := src.Balances(ctx)
	if err != nil {
		return res, fmt.Errorf("migrate: %w", err)
	}
	got, err := dst.Balances(ctx)
	if err != nil {
		return res, fmt.Errorf("migrate: %w", err)
	}
	if !slices.EqualFunc(want, got, ledger.Balance.Equal) {
		res.Problems = append(res.Problems, fmt.Sprintf("balances differ after the copy: SQLite %+v, PostgreSQL %+v", want, got))
	}
	return res, nil
}

// insertDumped inserts one SQLite row, keeping ids and sequence numbers;
// SQLite's 0/1 of audit.balance becomes a boolean, the copied runs belong
// to no live instance.
func insertDumped(ctx context.Context, tx pgx.Tx, table string, cols []string, vals []any) error {
	args := make([]any, len(vals))
	ph := make([]string, len(vals))
	for i, c := range cols {
		args[i] = vals[i]
		if table == "audit" && c == "balance" {
			n, _ := vals[i].(int64)
			args[i] = n == 1
		}
		ph[i] = fmt.Sprintf("$%d", i+1)
	}
	q := fmt.Sprintf(`INSERT INTO %s (%s) OVERRIDING SYSTEM VALUE VALUES (%s)`,
		pgx.Identifier{table}.Sanitize(), quoteCols(cols), strings.Join(ph, ", "))
	if _, err := tx.Exec(ctx, q, args...); err != nil {
		return fmt.Errorf("copy a row of %s: %w", table, err)
	}
	return nil
}

func quoteCols(cols []string) string {
	q := make([]string, len(cols))
	for i, c := range cols {
		q[i] = pgx.Identifier{c}.Sanitize()
	}
	return strings.Join(q, ", ")
}

// readySource ends the runs the desktop gateway left open and checks that
// the ledger verifies. Archived months are copied as their summaries (with
// the audit rows recording them, under the same seqs), so that the copy
// proves its balances as the source does; their files stay where they
// are, and `verify --archive` checks them against either ledger.
func readySource(ctx context.Context, src *sqlite.Store) (int, error) {
	interrupted, err := src.RecoverInterrupted(ctx, ledger.ActorRecovery)
	if err != nil {
		return 0, err
	}
	problems, err := src.Verify(ctx)
	if err != nil {
		return interrupted, err
	}
	if len(problems) > 0 {
		return interrupted, fmt.Errorf("the SQLite ledger does not verify (%d differences; run quotagate verify): %s", len(problems), strings.Join(problems, "; "))
	}
	return interrupted, nil
}
