package ledgertest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/period"
)

// ArchiveBooks fills st (whose clock set moves) with runs that end in
// October and November 2026 — tenant t (units, priced runs, a guarded
// model's day, one run left holding in October) and p (a monthly budget),
// three runs of each on each of four days — and leaves the clock in
// December, the books verified.
func ArchiveBooks(t *testing.T, st ledger.Store, set func(time.Time)) {
	t.Helper()
	ctx := context.Background()
	set(time.Date(2026, 10, 3, 12, 0, 0, 0, time.UTC))
	MustApply(t, st, Tenant("t", 100_000, 4),
		PeriodTenant("p", 1_000, 4, period.Calendar{Kind: period.Month, Zone: time.UTC}))
	for i, day := range []time.Time{
		time.Date(2026, 10, 5, 0, 0, 0, 0, time.UTC), time.Date(2026, 10, 20, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC),
	} {
		set(day)
		for j := range 3 {
			id := ledger.RunID(fmt.Sprintf("t%d-%d", i, j))
			MustAdmit(t, st, ledger.AdmitRequest{RunID: id, TenantID: "t", Upstream: "demo", Model: "demo-model",
				ReserveUnits: 50, InputUnits: 10, ReserveMicros: 400, Prices: TestPrice,
				Quota: &ledger.QuotaCheck{Day: day.Format("2006-01-02"), LimitUnits: 1_000_000}})
			if _, err := st.Settle(ctx, id, ledger.Units(20+j), "usage", ledger.System("test")); err != nil {
				t.Fatal(err)
			}
			pid := ledger.RunID(fmt.Sprintf("p%d-%d", i, j))
			MustAdmit(t, st, ledger.AdmitRequest{RunID: pid, TenantID: "p", ReserveUnits: 10})
			if _, err := st.Settle(ctx, pid, 4, "usage", ledger.System("test")); err != nil {
				t.Fatal(err)
			}
		}
		if i == 0 {
			MustAdmit(t, st, ledger.AdmitRequest{RunID: "held", TenantID: "t", ReserveUnits: 30})
			if _, err := st.KeepHold(ctx, "held", ledger.RunInterrupted, "cut", ledger.System("test")); err != nil {
				t.Fatal(err)
			}
		}
	}
	set(time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC))
	WantVerified(t, st)
}

// OctoberRuns are the runs of ArchiveBooks that end in October.
func OctoberRuns() []string {
	var ids []string
	for i := range 2 {
		for j := range 3 {
			ids = append(ids, fmt.Sprintf("t%d-%d", i, j), fmt.Sprintf("p%d-%d", i, j))
		}
	}
	return append(ids, "held")
}
