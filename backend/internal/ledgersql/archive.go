package ledgersql

import (
	"context"

	"github.com/quotagate/quotagate/backend/ledger"
)

// ArchiveSummaries are the summaries the ledger keeps of month's archived
// runs, by part, tenant and period (none: the month was never archived, or
// was restored).
func (r Reads) ArchiveSummaries(ctx context.Context, month string) ([]ledger.ArchiveSummary, error) {
	return List(ctx, r.Q, scanArchiveSummary, "read archive summaries",
		`SELECT month, part, tenant_id, period, runs, rows, spent_units, spent_micros, net_units,
		settled_units, first_seq, last_seq, hash FROM archive_summaries WHERE month = ? ORDER BY part, tenant_id, period`, month)
}

func scanArchiveSummary(r Scanner) (ledger.ArchiveSummary, error) {
	var sum ledger.ArchiveSummary
	err := r.Scan(&sum.Month, &sum.Part, &sum.TenantID, &sum.Period, &sum.Runs, &sum.Rows, &sum.SpentUnits,
		&sum.SpentMicros, &sum.Net, &sum.Settled, &sum.FirstSeq, &sum.LastSeq, &sum.Hash)
	return sum, err
}

// ArchivedMonths are the months whose runs live in an archive file, not in
// the ledger, oldest first.
func (r Reads) ArchivedMonths(ctx context.Context) ([]string, error) {
	return List(ctx, r.Q, ScanString, "read archived months", `SELECT DISTINCT month FROM archive_summaries ORDER BY month`)
}

// ArchivedParts are the parts of month the ledger keeps summaries of, and
// the file they went to (archive.Ledger).
func (r Reads) ArchivedParts(ctx context.Context, month string) (map[int64]bool, string, error) {
	rows, done, err := r.Q.Query(ctx, `SELECT DISTINCT part, file FROM archive_summaries WHERE month = ?`, month)
	if err != nil {
		return nil, "", err
	}
	defer done()
	parts := map[int64]bool{}
	var file string
	var part int64
	err = ForEach(rows, []any{&part, &file}, func() { parts[part] = true })
	return parts, file, err
}
