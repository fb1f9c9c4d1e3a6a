// Package auditsql builds the audit page's SELECT for both stores: they keep
// the same audit table and the same indexes ending in seq, and differ only in
// how a statement names its arguments and how it searches the rows' text.
package auditsql

import (
	"strings"

	"github.com/quotagate/quotagate/backend/ledger"
)

// Dialect is what one store spells its own way.
type Dialect struct {
	// Bind names the nth argument, counted from 1 ("?" for SQLite, "$n" for
	// PostgreSQL).
	Bind func(n int) string
	// Text is the search for rows whose text may contain text: what the
	// SELECT reads FROM (audit, or audit joined to the store's text index),
	// the column that orders it by seq, and a condition on args, each
	// written "%s" where its name goes, in order. ok is false when no index
	// serves this text: the rows are then read in seq order and the reader
	// matches them (ledger.AuditMatches).
	Text func(text string) (from, seq, cond string, args []any, ok bool)
	// Lagging, if set, says the text index lags the rows: for a text Text
	// serves, it gives the condition (on audit's columns, each argument
	// written "%s") of the rows the index does not hold yet that hold the
	// text. The SELECT then also reads those rows one by one, in a second
	// SELECT merged with the index's in seq order.
	Lagging func(text string) (cond string, args []any)
}

// Query is the SELECT of columns from audit for f, and its arguments. Times
// are Unix nanoseconds, as the stores write them. The rows it selects are a
// superset of f's for an actor or a text (see ledger.AuditFilter). columns
// begin with seq when the dialect has Lagging.
func Query(f ledger.AuditFilter, columns string, d Dialect) (string, []any) {
	var args []any
	bind := func(v any) string {
		args = append(args, v)
		return d.Bind(len(args))
	}
	from, seq, columns1 := "audit", "seq", columns
	var text []string
	lagging := false
	if f.Text != "" && d.Text != nil {
		if tf, ts, cond, vs, ok := d.Text(f.Text); ok {
			from, seq = tf, ts
			text = []string{fill(cond, vs, bind)}
			lagging = d.Lagging != nil
		}
	}
	if lagging {
		// Each SELECT of the compound is ordered by its first column, which
		// for the index's is the index's own seq, so that it is read in order.
		rest, _ := strings.CutPrefix(columns, "seq, ")
		columns1 = seq + " AS seq, " + rest
	}
	q := `SELECT ` + columns1 + ` FROM ` + from + where(append(text, filters(f, seq, bind)...))
	if lagging {
		cond, vs := d.Lagging(f.Text)
		q += ` UNION ALL SELECT ` + columns + ` FROM audit` + where(append([]string{fill(cond, vs, bind)}, filters(f, "seq", bind)...))
		seq = "seq"
	}
	q += " ORDER BY " + seq
	if f.Newest {
		q += " DESC"
	}
	if f.Limit > 0 {
		q += " LIMIT " + bind(f.Limit)
	}
	return q, args
}

// fill binds vs to cond's "%s", in order.
func fill(cond string, vs []any, bind func(any) string) string {
	for _, v := range vs {
		cond = strings.Replace(cond, "%s", bind(v), 1)
	}
	return cond
}

func where(conds []string) string {
	if len(conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(conds, " AND ")
}

// filters are the conditions of f but its text, seq naming the column
// that orders the rows.
func filters(f ledger.AuditFilter, seq string, bind func(any) string) []string {
	var conds []string
	arg := func(cond string, v any) { conds = append(conds, cond+" "+bind(v)) }
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
	if !f.Actor.IsZero() {
		conds = append(conds, actorCond(f.Actor, bind)...)
	}
	if f.AfterSeq > 0 {
		arg(seq+" >", f.AfterSeq)
	}
	if f.BeforeSeq > 0 {
		arg(seq+" <", f.BeforeSeq)
	}
	return conds
}

// actorCond selects rows that may be a's. A tenant's rows are nearly all
// of its own calls, so a tenant actor reads the tenant's index (a tenant
// acts only on its own runs); every other actor's rows are the few that no
// tenant wrote about itself, which the partial index audit_actor holds:
// its condition is repeated here so that the planner may use it.
func actorCond(a ledger.Actor, bind func(any) string) []string {
	var conds []string
	if a.Kind == ledger.ActorTenant { // bound first: SQLite's "?" are numbered in the order they appear
		conds = append(conds, "tenant_id = "+bind(a.Name))
	}
	forms := a.StoredForms()
	names := make([]string, len(forms))
	for i, s := range forms {
		names[i] = bind(s)
	}
	conds = append(conds, "actor IN ("+strings.Join(names, ", ")+")")
	if a.Kind != ledger.ActorTenant {
		conds = append(conds, NotOwnCall)
	}
	return conds
}

// NotOwnCall is the condition of the partial index audit_actor in both
// stores: a row whose actor is not its own tenant.
const NotOwnCall = "actor != 'tenant:' || tenant_id"
