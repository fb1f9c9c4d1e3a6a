package ledgergen

import (
	"context"
	"database/sql"
	"fmt"
)

// Size is what one table or index of a ledger takes on disk (SQLite's
// dbstat: its pages, free space included).
type Size struct {
	Name  string
	Bytes int64
}

// Sizes reads the ledger at path (read-only) and returns how many runs it
// holds and the size of each table and index, largest first: bytes per run
// are Bytes / runs.
func Sizes(ctx context.Context, path string) (runs int64, sizes []Size, err error) {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=query_only(1)")
	if err != nil {
		return 0, nil, fmt.Errorf("ledgergen: sizes of %s: %w", path, err)
	}
	defer db.Close()
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM runs`).Scan(&runs); err != nil {
		return 0, nil, fmt.Errorf("ledgergen: sizes of %s: count runs: %w", path, err)
	}
	rows, err := db.QueryContext(ctx, `SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC`)
	if err != nil {
		return 0, nil, fmt.Errorf("ledgergen: sizes of %s: dbstat: %w", path, err)
	}
	defer rows.Close()
	for rows.Next() {
		var s Size
		if err := rows.Scan(&s.Name, &s.Bytes); err != nil {
			return 0, nil, fmt.Errorf("ledgergen: sizes of %s: %w", path, err)
		}
		sizes = append(sizes, s)
	}
	return runs, sizes, rows.Err()
}
