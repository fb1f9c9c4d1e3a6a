package admin_test

import (
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/admin"
	"github.com/quotagate/quotagate/backend/ledger"
)

// TestSpendByDay: hours are summed into the days of the zone the range
// starts in, per tenant and model; a day that spent nothing has no row.
func TestSpendByDay(t *testing.T) {
	zone := time.FixedZone("UTC+8", 8*3600)
	from := time.Date(2026, 12, 1, 0, 0, 0, 0, zone)
	hour := func(utc string) time.Time {
		at, err := time.Parse(time.RFC3339, utc)
		if err != nil {
			t.Fatal(err)
		}
		return at
	}
	hours := []ledger.SpendHour{
		{Hour: hour("2026-11-30T16:00:00Z"), TenantID: "a", Upstream: "u", Model: "m", SpentUnits: 1, CostMicros: 10}, // 12-01 00:00 local
		{Hour: hour("2026-12-01T15:00:00Z"), TenantID: "a", Upstream: "u", Model: "m", SpentUnits: 2, CostMicros: 20}, // 12-01 23:00 local
		{Hour: hour("2026-12-01T16:00:00Z"), TenantID: "a", Upstream: "u", Model: "m", SpentUnits: 4, CostMicros: 40}, // 12-02 00:00 local
		{Hour: hour("2026-12-01T16:00:00Z"), TenantID: "b", Upstream: "u", Model: "m", SpentUnits: 8},
	}
	p := admin.SpendByDay(hours, from, 3)
	if want := []string{"2026-12-01", "2026-12-02", "2026-12-03"}; len(p.Days) != 3 || p.Days[0] != want[0] || p.Days[2] != want[2] {
		t.Fatalf("days %v, want %v", p.Days, want)
	}
	want := []admin.SpendDay{
		{Day: "2026-12-01", Tenant: "a", Upstream: "u", Model: "m", SpentUnits: 3, CostMicros: 30},
		{Day: "2026-12-02", Tenant: "a", Upstream: "u", Model: "m", SpentUnits: 4, CostMicros: 40},
		{Day: "2026-12-02", Tenant: "b", Upstream: "u", Model: "m", SpentUnits: 8},
	}
	if len(p.Rows) != len(want) {
		t.Fatalf("rows %+v, want %+v", p.Rows, want)
	}
	for i := range want {
		if p.Rows[i] != want[i] {
			t.Errorf("row %d %+v, want %+v", i, p.Rows[i], want[i])
		}
	}
}
