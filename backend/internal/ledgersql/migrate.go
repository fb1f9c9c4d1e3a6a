package ledgersql

import (
	"context"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"time"
)

// MigrationTx is the transaction one migration runs in, as a store's
// driver gives it. Statements take "?" arguments, numbered as the store's
// database names them; a statement without arguments (a migration's
// script) runs as it is written.
type MigrationTx interface {
	QueryRow(ctx context.Context, query string, args ...any) Scanner
	Exec(ctx context.Context, query string, args ...any) error
}

// Migrate applies the migrations embedded in fsys (migrations/*.sql) in
// name order, each through begin: one transaction of the store's that
// commits the migration together with its schema_version row, or neither.
// A migration schema_version already records is passed over. Both stores
// keep schema_version alike: the file name of each migration applied, and
// when.
func Migrate(ctx context.Context, fsys fs.ReadFileFS, begin func(apply func(MigrationTx) error) error) error {
	names, err := fs.Glob(fsys, "migrations/*.sql")
	if err != nil {
		return fmt.Errorf("list migrations: %w", err)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := begin(func(tx MigrationTx) error { return migrateFile(ctx, tx, fsys, name) }); err != nil {
			return fmt.Errorf("migration %s: %w", name, err)
		}
	}
	return nil
}

func migrateFile(ctx context.Context, tx MigrationTx, fsys fs.ReadFileFS, name string) error {
	version := strings.TrimPrefix(name, "migrations/")
	var n int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM schema_version WHERE version = ?`, version).Scan(&n); err != nil || n > 0 {
		return err
	}
	script, err := fsys.ReadFile(name)
	if err != nil {
		return err
	}
	if err := tx.Exec(ctx, string(script)); err != nil {
		return err
	}
	return tx.Exec(ctx, `INSERT INTO schema_version (version, applied_at) VALUES (?, ?)`, version, time.Now().UnixNano())
}
