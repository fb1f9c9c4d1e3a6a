package ledgersql

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
)

// RunColumns are the columns of runs both stores keep, in the order
// ScanRun reads them and RunValues gives them. PostgreSQL's runs also name
// the instance that holds a run, which a store appends after these.
const RunColumns = `id, tenant_id, upstream, model, quota_day, status, usage, reserve_units, spent_units,
	held_units, overrun_units, evidence, created_at, updated_at,
	door, upstream_protocol, idempotency_key, retry_count, retry_of, cached_tokens,
	prices, input_units, reserve_micros, cost_micros, overrun_micros, period, provider_id, relayed_units,
	attempts, failover_of`

// ScanRun reads a row of RunColumns, then into extra the columns a store
// selects after them.
func ScanRun(r Scanner, extra ...any) (ledger.Run, error) {
	var run ledger.Run
	var id, status, usage, retryOf, prices, failoverOf string
	var created, updated int64
	dest := []any{&id, &run.TenantID, &run.Upstream, &run.Model, &run.QuotaDay, &status, &usage,
		&run.ReserveUnits, &run.SpentUnits, &run.HeldUnits, &run.OverrunUnits, &run.Evidence, &created, &updated,
		&run.Door, &run.UpstreamProtocol, &run.IdempotencyKey, &run.RetryCount, &retryOf, &run.CachedTokens,
		&prices, &run.InputUnits, &run.ReserveMicros, &run.CostMicros, &run.OverrunMicros, &run.Period,
		&run.ProviderID, &run.RelayedUnits, &run.Attempts, &failoverOf}
	if err := r.Scan(append(dest, extra...)...); err != nil {
		return run, err
	}
	var err error
	if run.Prices, err = ledger.ParsePrices(prices); err != nil {
		return run, fmt.Errorf("run %s: %w", id, err)
	}
	run.ID, run.RetryOf, run.FailoverOf = ledger.RunID(id), ledger.RunID(retryOf), ledger.RunID(failoverOf)
	run.Status = ledger.RunStatus(status)
	run.Usage = ledger.UsageStatus(usage)
	run.CreatedAt, run.UpdatedAt = FromNanos(created), FromNanos(updated)
	return run, nil
}

// RunValues are run's values for RunColumns, for an INSERT.
func RunValues(run ledger.Run) []any {
	return []any{string(run.ID), run.TenantID, run.Upstream, run.Model, run.QuotaDay, string(run.Status), string(run.Usage),
		int64(run.ReserveUnits), int64(run.SpentUnits), int64(run.HeldUnits), int64(run.OverrunUnits), run.Evidence,
		Nanos(run.CreatedAt), Nanos(run.UpdatedAt),
		run.Door, run.UpstreamProtocol, run.IdempotencyKey, run.RetryCount, string(run.RetryOf), run.CachedTokens,
		ledger.PricesText(run.Prices), int64(run.InputUnits), int64(run.ReserveMicros), int64(run.CostMicros),
		int64(run.OverrunMicros), run.Period, run.ProviderID, int64(run.RelayedUnits), run.Attempts, string(run.FailoverOf)}
}

// RunRead is err, from reading run id, as a store returns it:
// CodeRunNotFound for noRows (the driver's error for a row that is not
// there), nil for nil.
func RunRead(err, noRows error, id ledger.RunID) error {
	if errors.Is(err, noRows) {
		return ledger.Errorf(ledger.CodeRunNotFound, "run %s not found", id)
	}
	if err != nil {
		return fmt.Errorf("read run %s: %w", id, err)
	}
	return nil
}

// RetryGroup decides req's place among the tenant's earlier runs, inside
// the admission's write, through q: a CodeDuplicateRequest refusal when its
// Idempotency-Key is in use (ledger.KeyedRetry), else the run it retries
// ("" for none); see ledger.AdmitRequest. keyed and retried are the store's
// look-ups — the runs carrying the key since the window's start (tenant,
// key, since), and the attempt the retry count says was retried (tenant,
// fingerprint, since, count) — each written so that its database's planner
// uses the partial index; noRows is q's driver's error for no row.
func RetryGroup(ctx context.Context, q Querier, noRows error, req ledger.AdmitRequest, now time.Time, keyed, retried string) (ledger.RunID, error) {
	since := Nanos(now.Add(-ledger.IdempotencyWindow))
	switch {
	case req.IdempotencyKey != "":
		rows, done, err := q.Query(ctx, keyed, req.TenantID, req.IdempotencyKey, since)
		if err != nil {
			return "", fmt.Errorf("look up idempotency key: %w", err)
		}
		defer done()
		earlier, err := ledger.ScanKeyedRuns(rows)
		if err != nil {
			return "", fmt.Errorf("look up idempotency key: %w", err)
		}
		return ledger.KeyedRetry(req, earlier)
	case req.Fingerprint != "" && req.RetryCount > 0:
		var id string
		err := q.QueryRow(ctx, retried, req.TenantID, req.Fingerprint, since, req.RetryCount-1).Scan(&id)
		if errors.Is(err, noRows) {
			return "", nil
		}
		if err != nil {
			return "", fmt.Errorf("look up the attempt retried: %w", err)
		}
		return ledger.RunID(id), nil
	}
	return "", nil
}
