package sqlite

import (
	"context"
	"time"

	"github.com/quotagate/quotagate/backend/internal/ledgersql"
	"github.com/quotagate/quotagate/backend/ledger"
)

// SpendHoursFromRuns recomputes the rollup's hours in [from, to) from the
// runs admitted in them, for a check of the rollup (Verify's): it reads
// those runs, through runs_created.
func (s *Store) SpendHoursFromRuns(ctx context.Context, from, to time.Time) ([]ledger.SpendHour, error) {
	return ledgersql.ReadSpendHours(ctx, reader{s}, `SELECT created_at / 3600000000000 AS hour, tenant_id, upstream, model,
		sum(spent_units), sum(cost_micros) FROM runs
		WHERE created_at >= ? * 3600000000000 AND created_at < ? * 3600000000000
		GROUP BY 1, 2, 3, 4 HAVING sum(spent_units) > 0 OR sum(cost_micros) > 0 ORDER BY 1, 2, 3, 4`, from, to)
}
