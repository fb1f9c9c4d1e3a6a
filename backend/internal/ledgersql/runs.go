package ledgersql

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/quotagate/quotagate/backend/ledger"
)

// RunTable is how a store reads its runs: the columns it selects
// (RunColumns, then its own), their scan, and the column that orders the
// runs created in one nanosecond as they were written (SQLite's rowid,
// PostgreSQL's seq).
type RunTable struct {
	Columns string
	Scan    func(Scanner) (ledger.Run, error)
	Seq     string
}

// Run returns one run.
func (r Reads) Run(ctx context.Context, id ledger.RunID) (ledger.Run, error) {
	run, err := r.RunTable.Scan(r.Q.QueryRow(ctx, `SELECT `+r.RunTable.Columns+` FROM runs WHERE id = ?`, string(id)))
	return run, RunRead(err, r.NoRows, id)
}

// Runs lists runs newest first.
func (r Reads) Runs(ctx context.Context, f ledger.RunFilter) ([]ledger.Run, error) {
	t := r.RunTable
	var where []string
	var args []any
	if f.TenantID != "" {
		where = append(where, "tenant_id = ?")
		args = append(args, f.TenantID)
	}
	if f.HoldingOnly {
		where = append(where, "usage IN ('pending', 'unknown')")
	}
	if f.Before != "" {
		// Row values compare on the listing's index (created_at, then
		// Seq), so the page starts at the cursor.
		var at, seq int64
		err := r.Q.QueryRow(ctx, `SELECT created_at, `+t.Seq+` FROM runs WHERE id = ?`, string(f.Before)).Scan(&at, &seq)
		if errors.Is(err, r.NoRows) {
			return nil, ledger.Errorf(ledger.CodeRunNotFound, "run %s not found", f.Before)
		}
		if err != nil {
			return nil, fmt.Errorf("list runs before %s: %w", f.Before, err)
		}
		where = append(where, "(created_at, "+t.Seq+") < (?, ?)")
		args = append(args, at, seq)
	}
	q := `SELECT ` + t.Columns + ` FROM runs`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY created_at DESC, " + t.Seq + " DESC LIMIT ?"
	return List(ctx, r.Q, t.Scan, "list runs", q, append(args, f.RunsLimit())...)
}
