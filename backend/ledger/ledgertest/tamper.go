package ledgertest

import (
	"context"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/period"
)

// TamperBooks writes a small consistent ledger into st, for tests that
// change it behind the store's back: tenant t, budget 100: settled (7 of
// 20), held (22, unknown), active (20, guarded); settled and held are
// priced at TestPrice with 10 tokens of counted input: settled reserved
// 100 micros and cost 14 (7 input tokens), held holds 116. Tenant p,
// budget 100 renewing daily: daily (5 of 10).
func TamperBooks(t *testing.T, st ledger.Store) {
	t.Helper()
	ctx := context.Background()
	MustApply(t, st, Tenant("t", 100, 4), PeriodTenant("p", 100, 4, period.Calendar{Kind: period.Day, Zone: time.UTC}))
	MustAdmit(t, st, ledger.AdmitRequest{RunID: "daily", TenantID: "p", ReserveUnits: 10})
	if _, err := st.Settle(ctx, "daily", 5, "usage", ledger.System("test")); err != nil {
		t.Fatal(err)
	}
	MustAdmit(t, st, ledger.AdmitRequest{RunID: "settled", TenantID: "t", ReserveUnits: 20,
		InputUnits: 10, ReserveMicros: 100, Prices: TestPrice})
	MustAdmit(t, st, ledger.AdmitRequest{RunID: "held", TenantID: "t", ReserveUnits: 22,
		InputUnits: 10, ReserveMicros: 116, Prices: TestPrice})
	MustAdmit(t, st, ledger.AdmitRequest{RunID: "active", TenantID: "t", ReserveUnits: 20,
		Quota: &ledger.QuotaCheck{Day: "2026-11-29", LimitUnits: 1000}})
	if _, err := st.Settle(ctx, "settled", 7, "usage", ledger.System("test")); err != nil {
		t.Fatal(err)
	}
	if _, err := st.KeepHold(ctx, "held", ledger.RunInterrupted, "cut", ledger.System("test")); err != nil {
		t.Fatal(err)
	}
	WantVerified(t, st)
}
