package ledgersql

import (
	"errors"
	"fmt"

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
