package ledgersql

import (
	"context"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/price"
)

// SpendHours returns the spend rollup's hours in [from, to), oldest first:
// the rows the spend chart reads (ledger.SpendHour).
func (r Reads) SpendHours(ctx context.Context, from, to time.Time) ([]ledger.SpendHour, error) {
	return ReadSpendHours(ctx, r.Q, `SELECT hour, tenant_id, upstream, model, spent_units, cost_micros
		FROM spend_hours WHERE hour >= ? AND hour < ? ORDER BY hour, tenant_id, upstream, model`, from, to)
}

// ReadSpendHours reads the hours query selects (hour index, tenant,
// upstream, model, units, micros) in [from, to): its two arguments are the
// hours' indexes (ledger.SpendHourIndex).
func ReadSpendHours(ctx context.Context, q Querier, query string, from, to time.Time) ([]ledger.SpendHour, error) {
	return List(ctx, q, scanSpendHour, "read spend by hour", query, ledger.SpendHourIndex(from), ledger.SpendHourIndex(to))
}

func scanSpendHour(r Scanner) (ledger.SpendHour, error) {
	var h ledger.SpendHour
	var hour, units, micros int64
	err := r.Scan(&hour, &h.TenantID, &h.Upstream, &h.Model, &units, &micros)
	h.Hour, h.SpentUnits, h.CostMicros = ledger.SpendHourStart(hour), ledger.Units(units), price.Micros(micros)
	return h, err
}
