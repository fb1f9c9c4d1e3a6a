// Package auditsql builds the audit page's SELECT for both stores: they keep
// the same audit table and the same indexes ending in seq, and differ only in
// how a statement names its arguments.
package auditsql

import (
	"strings"

	"github.com/quotagate/quotagate/backend/ledger"
)

// Query is the SELECT of columns from audit for f, and its arguments. bind
// names the nth argument, counted from 1 ("?" for SQLite, "$n" for
// PostgreSQL). Times are Unix nanoseconds, as the stores write them.
func Query(f ledger.AuditFilter, columns string, bind func(n int) string) (string, []any) {
	var where []string
	var args []any
	arg := func(cond string, v any) {
		args = append(args, v)
		where = append(where, cond+" "+bind(len(args)))
	}
	if !f.From.IsZero() {
		arg("at >=", f.From.UnixNano())
	}
	if !f.To.IsZero() {
		arg("at <", f.To.UnixNano())
	}
	if f.TenantID != "" {
		arg("tenant_id =", f.TenantID)
	}
	if f.Kind != "" {
		arg("kind =", string(f.Kind))
	}
	if f.RunID != "" {
		arg("run_id =", string(f.RunID))
	}
	if f.AfterSeq > 0 {
		arg("seq >", f.AfterSeq)
	}
	if f.BeforeSeq > 0 {
		arg("seq <", f.BeforeSeq)
	}
	q := `SELECT ` + columns + ` FROM audit`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY seq"
	if f.Newest {
		q += " DESC"
	}
	if f.Limit > 0 {
		args = append(args, f.Limit)
		q += " LIMIT " + bind(len(args))
	}
	return q, args
}
