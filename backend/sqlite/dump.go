package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// DumpTables are the ledger's tables in the order Dump reads them (parents
// before children), for `quotagate migrate`.
var DumpTables = []string{"tenants", "tenant_keys", "tenant_periods", "runs", "spend_hours", "quota_days", "usage_minutes", "snapshots", "audit",
	"archive_summaries", "archive_quota_days"}

// Dump reads every row of DumpTables in one read snapshot, in insertion
// order, and hands each to row with its column names. It changes nothing.
func (s *Store) Dump(ctx context.Context, row func(table string, cols []string, vals []any) error) error {
	tx, err := s.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("dump ledger: %w", err)
	}
	defer tx.Rollback()
	for _, table := range DumpTables {
		if err := dumpTable(ctx, tx, table, row); err != nil {
			return fmt.Errorf("dump ledger table %s: %w", table, err)
		}
	}
	return nil
}

func dumpTable(ctx context.Context, tx *sql.Tx, table string, row func(string, []string, []any) error) error {
	order := "rowid"
	switch table {
	case "quota_days", "usage_minutes": // WITHOUT ROWID
		order = "1, 2, 3"
	case "tenant_periods": // WITHOUT ROWID
		order = "1, 2"
	case "spend_hours", "archive_summaries", "archive_quota_days": // WITHOUT ROWID
		order = "1, 2, 3, 4"
	}
	return eachRow(ctx, tx, `SELECT * FROM `+table+` ORDER BY `+order, nil, func(cols []string, vals []any) error {
		return row(table, cols, vals)
	})
}

// eachRow runs query with args in tx and calls fn with each row's column
// names and values, the values fresh for each row (fn may keep them).
func eachRow(ctx context.Context, tx *sql.Tx, query string, args []any, fn func(cols []string, vals []any) error) error {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		if err := fn(cols, vals); err != nil {
			return err
		}
	}
	return rows.Err()
}
