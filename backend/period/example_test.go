package period_test

import (
	"fmt"
	"time"

	"github.com/quotagate/quotagate/backend/period"
)

func ExampleCalendar_At() {
	kind, _ := period.ParseKind("tenants[0].budget_period", "month")
	tenant, _ := period.LoadZone("tenants[0].timezone", "Pacific/Auckland")
	weekStarts, _ := period.ParseWeekday("tenants[0].week_starts", "")
	c := period.Calendar{Kind: kind, Zone: period.PickZone(tenant, nil), WeekStarts: weekStarts}

	admitted := time.Date(2026, 11, 30, 10, 59, 0, 0, time.UTC) // 23:59 in Auckland
	p := c.At(admitted)
	fmt.Println(p.Label, p.Start.Format(time.RFC3339), p.End.Format(time.RFC3339))
	fmt.Println(c.Next(p).Label, "starts in", p.End.Sub(admitted))
	// Output:
	// 2026-11 2026-11-01T00:00:00+13:00 2026-12-01T00:00:00+13:00
	// 2026-12 starts in 1m0s
}
