package ledgersql

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
)

// Querier runs a read of this package on a store's connections, binding
// the statement's "?" arguments as the store's database names them. Query
// returns the rows with the function that closes them.
type Querier interface {
	Query(ctx context.Context, query string, args ...any) (Rows, func(), error)
	QueryRow(ctx context.Context, query string, args ...any) Scanner
}

// Reads are the ledger.Store reads both stores make the same way, through
// Q; NoRows is Q's driver's error for a row that is not there. A store
// embeds Reads, as it embeds ledger.Transitions.
type Reads struct {
	Q      Querier
	NoRows error
	// InPeriods reads the balances a statement of TenantBalances selects,
	// each in its tenant's current period, from one consistent snapshot
	// (the store's own read transaction).
	InPeriods func(ctx context.Context, query string, args ...any) ([]ledger.Balance, error)
	// OutboxPending selects the undelivered alerts' count and when the
	// next one is due (0 when none): what the stores' outboxes keep
	// differently (PostgreSQL's claims have leases).
	OutboxPending string
	// RunTable is how Run and Runs read the store's runs.
	RunTable RunTable
}

// OutboxStatus reports the undelivered count and the latest attempt
// (ledger.Outbox).
func (r Reads) OutboxStatus(ctx context.Context) (ledger.OutboxStatus, error) {
	var st ledger.OutboxStatus
	var next int64
	if err := r.Q.QueryRow(ctx, r.OutboxPending).Scan(&st.Pending, &next); err != nil {
		return st, fmt.Errorf("outbox status: %w", err)
	}
	if st.Pending > 0 {
		st.NextDue = FromNanos(next)
	}
	if err := ReadLastAttempt(r.Q.QueryRow(ctx, LastAttempt), r.NoRows, &st); err != nil {
		return st, fmt.Errorf("outbox status: %w", err)
	}
	return st, nil
}

// Tenants lists every tenant, with its key hashes, ordered by id.
func (r Reads) Tenants(ctx context.Context) ([]ledger.Tenant, error) {
	stored, err := LoadTenants(ctx, r.Q, "")
	if err != nil {
		return nil, err
	}
	out := make([]ledger.Tenant, len(stored))
	for i, t := range stored {
		out[i] = t.Tenant
	}
	return out, nil
}

// Balance returns one tenant's position (CodeInvalidAPIKey for an unknown
// tenant), in its current period for a tenant whose budget renews.
func (r Reads) Balance(ctx context.Context, tenantID string) (ledger.Balance, error) {
	out, err := r.InPeriods(ctx, TenantBalances+` WHERE id = ?`, tenantID)
	return ledger.OnlyBalance(tenantID, out, err)
}

// Balances returns every tenant's position, ordered by tenant id, from one
// consistent snapshot.
func (r Reads) Balances(ctx context.Context) ([]ledger.Balance, error) {
	out, err := r.InPeriods(ctx, TenantBalances+` ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("balances: %w", err)
	}
	return out, nil
}

// QuotaUsage returns a guarded model's settled usage and in-flight holds
// for day (on a shared ledger, summed over every gateway).
func (r Reads) QuotaUsage(ctx context.Context, upstream, model, day string) (ledger.QuotaUsage, error) {
	u := ledger.QuotaUsage{Upstream: upstream, Model: model, Day: day}
	err := r.Q.QueryRow(ctx, QuotaUsage, upstream, model, day).Scan(&u.UsageUnits, &u.HeldInFlight)
	if err != nil && !errors.Is(err, r.NoRows) {
		return u, fmt.Errorf("quota usage of %s/%s on %s: %w", upstream, model, day, err)
	}
	return u, nil
}

// UsageSeries returns the per-minute settled units of a guarded model in
// [from, to), oldest first; minutes with no usage are absent.
func (r Reads) UsageSeries(ctx context.Context, upstream, model string, from, to time.Time) ([]ledger.UsagePoint, error) {
	return List(ctx, r.Q, ScanUsagePoint, "usage series of "+upstream+"/"+model,
		UsageSeries, upstream, model, CeilUnix(from), CeilUnix(to))
}

// Snapshots returns a guarded model's snapshots at or after since, oldest
// first.
func (r Reads) Snapshots(ctx context.Context, upstream, model string, since time.Time) ([]ledger.Snapshot, error) {
	return List(ctx, r.Q, ScanSnapshot, "snapshots of "+upstream+"/"+model,
		Snapshots, upstream, model, NanosOrMin(since))
}

// SchemaVersions lists the applied migrations in order.
func (r Reads) SchemaVersions(ctx context.Context) ([]string, error) {
	return List(ctx, r.Q, ScanString, "schema versions", `SELECT version FROM schema_version ORDER BY version`)
}

// ScanString reads a row of one text column.
func ScanString(r Scanner) (string, error) {
	var s string
	err := r.Scan(&s)
	return s, err
}

// List runs query through q and reads every row with scan; what names the
// list in an error.
func List[T any](ctx context.Context, q Querier, scan func(Scanner) (T, error), what, query string, args ...any) ([]T, error) {
	rows, done, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer done()
	out, err := Collect(rows, scan)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}
