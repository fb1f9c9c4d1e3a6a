// Package ledgersql holds what the two ledger stores, backend/sqlite and
// backend/postgres, share of their SQL: the statements they both run on
// the same tables, how a row of those tables reads into a ledger value, and
// how times are kept in columns. The stores differ in their drivers and in
// how a statement names its arguments; the statements here are written
// with "?" and PostgreSQL numbers them (Dollar).
package ledgersql

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// Scanner is one row as both drivers give it (*sql.Row, *sql.Rows,
// pgx.Row, pgx.Rows).
type Scanner interface{ Scan(dest ...any) error }

// Rows is a result set as both drivers give it (pgx.Rows, *sql.Rows),
// without its Close, whose signature differs.
type Rows interface {
	Scanner
	Next() bool
	Err() error
}

// Collect reads every row of rows with scan; the caller closes rows.
func Collect[T any](rows Rows, scan func(Scanner) (T, error)) ([]T, error) {
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// Dollar numbers a statement's "?" arguments as PostgreSQL names them
// ($1, $2, …). The statements here have no "?" inside a literal.
func Dollar(query string) string {
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r != '?' {
			b.WriteRune(r)
			continue
		}
		n++
		b.WriteString("$" + strconv.Itoa(n))
	}
	return b.String()
}

// Times are kept as Unix nanoseconds in UTC.

// Nanos is t as a column keeps it.
func Nanos(t time.Time) int64 { return t.UnixNano() }

// FromNanos reads a time column.
func FromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }

// FromNanosOrZero reads 0 as the zero time (never).
func FromNanosOrZero(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return FromNanos(n)
}

// NanosOrMin maps the zero time to "no bound", for a lower bound.
func NanosOrMin(t time.Time) int64 {
	if t.IsZero() {
		return math.MinInt64
	}
	return Nanos(t)
}

// CeilUnix is the smallest Unix second not before t, so that a minute
// starting at t' < to is included even when to has a fraction of a second.
func CeilUnix(t time.Time) int64 {
	if t.Truncate(time.Second).Equal(t) {
		return t.Unix()
	}
	return t.Unix() + 1
}

// ForEach scans every row of rows into dest and calls fn after each, as
// pgx.ForEachRow does; the caller closes rows.
func ForEach(rows Rows, dest []any, fn func()) error {
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		fn()
	}
	return rows.Err()
}
