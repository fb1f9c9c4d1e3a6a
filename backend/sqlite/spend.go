package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
)

// SpendHours returns the spend rollup's hours in [from, to), oldest first:
// the rows the spend chart reads (ledger.SpendHour).
func (s *Store) SpendHours(ctx context.Context, from, to time.Time) ([]ledger.SpendHour, error) {
	return s.spendHours(ctx, `SELECT hour, tenant_id, upstream, model, spent_units, cost_micros
		FROM spend_hours WHERE hour >= ? AND hour < ? ORDER BY hour, tenant_id, upstream, model`, from, to)
}

// SpendHoursFromRuns recomputes the rollup's hours in [from, to) from the
// runs admitted in them, for a check of the rollup (Verify's): it reads
// those runs, through runs_created.
func (s *Store) SpendHoursFromRuns(ctx context.Context, from, to time.Time) ([]ledger.SpendHour, error) {
	return s.spendHours(ctx, `SELECT created_at / 3600000000000 AS hour, tenant_id, upstream, model,
		sum(spent_units), sum(cost_micros) FROM runs
		WHERE created_at >= ? * 3600000000000 AND created_at < ? * 3600000000000
		GROUP BY 1, 2, 3, 4 HAVING sum(spent_units) > 0 OR sum(cost_micros) > 0 ORDER BY 1, 2, 3, 4`, from, to)
}

func (s *Store) spendHours(ctx context.Context, q string, from, to time.Time) ([]ledger.SpendHour, error) {
	rows, err := s.query(ctx, q, ledger.SpendHourIndex(from), ledger.SpendHourIndex(to))
	if err != nil {
		return nil, fmt.Errorf("read spend by hour: %w", err)
	}
	defer rows.Close()
	var out []ledger.SpendHour
	for rows.Next() {
		var h ledger.SpendHour
		var hour int64
		if err := rows.Scan(&hour, &h.TenantID, &h.Upstream, &h.Model, &h.SpentUnits, &h.CostMicros); err != nil {
			return nil, fmt.Errorf("read spend by hour: %w", err)
		}
		h.Hour = ledger.SpendHourStart(hour)
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read spend by hour: %w", err)
	}
	return out, nil
}
