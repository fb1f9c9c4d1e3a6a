package ledgertest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/period"
)

// testClock is a controllable Now for a store's options.
type testClock struct {
	mu sync.Mutex
	at time.Time
}

func (c *testClock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.at }
func (c *testClock) set(t time.Time) { c.mu.Lock(); c.at = t; c.mu.Unlock() }

// PeriodTenant is a tenant whose units budget renews in cal's periods.
func PeriodTenant(id string, budget ledger.Units, maxConcurrent int, cal period.Calendar) ledger.Tenant {
	t := Tenant(id, budget, maxConcurrent)
	t.Calendar = cal
	return t
}

func mustZone(tb testing.TB, name string) *time.Location {
	tb.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		tb.Fatal(err)
	}
	return loc
}

// RunPeriods is the budget-period part of the contract, on a store whose
// clock the test moves: a run's hold, settlement and reconcile stay in the
// period it was admitted in; a new period admits its whole budget; racing
// admissions across a boundary never exceed either period's budget; days
// in a zone that changes its clocks last 23 and 25 hours.
func RunPeriods(t *testing.T, open ClockOpener) {
	kiritimati, pagoPago := mustZone(t, "Pacific/Kiritimati"), mustZone(t, "Pacific/Pago_Pago")
	boundaries := []struct {
		name       string
		cal        period.Calendar
		last       time.Time // the old period's last second
		old, fresh string
	}{
		{"Day", period.Calendar{Kind: period.Day, Zone: kiritimati},
			time.Date(2026, 12, 1, 23, 59, 59, 0, kiritimati), "2026-12-01", "2026-12-02"},
		{"WeekSundayToMonday", period.Calendar{Kind: period.Week, Zone: pagoPago, WeekStarts: time.Monday},
			time.Date(2026, 12, 6, 23, 59, 59, 0, pagoPago), "2026-W49", "2026-W50"},
		{"MonthEnd", period.Calendar{Kind: period.Month, Zone: kiritimati},
			time.Date(2026, 12, 31, 23, 59, 59, 0, kiritimati), "2026-12", "2027-01"},
	}
	for _, b := range boundaries {
		t.Run(b.name, func(t *testing.T) { testPeriodBoundary(t, open, b.cal, b.last, b.old, b.fresh) })
		t.Run(b.name+"Race", func(t *testing.T) { testPeriodRace(t, open, b.cal, b.last, b.old, b.fresh) })
	}
	t.Run("DSTDays", func(t *testing.T) { testDSTDays(t, open) })
	t.Run("CalendarConfig", func(t *testing.T) { testCalendarConfig(t, open) })
}

// testPeriodBoundary: holds taken in the old period's last second and
// ended after the boundary (settled, reconciled, released) move the old
// period's books; the new period starts empty and admits its whole budget.
func testPeriodBoundary(t *testing.T, open ClockOpener, cal period.Calendar, last time.Time, old, fresh string) {
	ctx := context.Background()
	clock := &testClock{at: last}
	st := open(t, clock.now)
	MustApply(t, st, PeriodTenant("p", 100, 10, cal), Tenant("n", 100, 10))
	r1 := MustAdmit(t, st, ledger.AdmitRequest{RunID: "r1", TenantID: "p", ReserveUnits: 40})
	MustAdmit(t, st, ledger.AdmitRequest{RunID: "r2", TenantID: "p", ReserveUnits: 30})
	MustAdmit(t, st, ledger.AdmitRequest{RunID: "r3", TenantID: "p", ReserveUnits: 20})
	if r1.Period != old {
		t.Fatalf("run admitted in %s's last second is in period %q, want %q", old, r1.Period, old)
	}
	_, err := st.Admit(ctx, ledger.AdmitRequest{RunID: "over", TenantID: "p", Upstream: "demo", Model: "demo-model", ReserveUnits: 11})
	WantCode(t, err, ledger.CodeInsufficientBudget)
	if _, err := st.KeepHold(ctx, "r2", ledger.RunInterrupted, "cut", ledger.System("test")); err != nil {
		t.Fatal(err)
	}
	clock.set(last.Add(time.Second))
	bal := wantPeriod(t, st, "p", cal, fresh, 0, 0)
	if !bal.PeriodStart.Equal(last.Add(time.Second)) {
		t.Fatalf("period %s starts at %v, want %v", fresh, bal.PeriodStart, last.Add(time.Second))
	}
	if _, err := st.Settle(ctx, "r1", 25, "usage", ledger.System("test")); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Reconcile(ctx, "r2", 10, "bill", ledger.Operator("test")); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ReleaseHold(ctx, "r3", ledger.RunFailed, "HTTP 500 before output", ledger.System("test")); err != nil {
		t.Fatal(err)
	}
	wantPeriod(t, st, "p", cal, fresh, 0, 0)
	r4 := MustAdmit(t, st, ledger.AdmitRequest{RunID: "r4", TenantID: "p", ReserveUnits: 100})
	if r4.Period != fresh {
		t.Fatalf("run admitted after the boundary is in period %q, want %q", r4.Period, fresh)
	}
	wantPeriod(t, st, "p", cal, fresh, 0, 100)
	hist, err := st.PeriodHistory(ctx, "p", ledger.PeriodHistoryLength)
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 2 || hist[0].Period != fresh || hist[0].SpentUnits != 0 || hist[1].Period != old ||
		hist[1].SpentUnits != 35 || !hist[0].PeriodStart.Equal(last.Add(time.Second)) {
		t.Fatalf("period history = %+v, want %s (0 spent) then %s (35 spent)", hist, fresh, old)
	}
	if none, err := st.PeriodHistory(ctx, "n", ledger.PeriodHistoryLength); err != nil || len(none) != 0 {
		t.Fatalf("a tenant that never renews has a period history: %+v, %v", none, err)
	}
	clock.set(last) // seen from the old period again: what its runs left there
	wantPeriod(t, st, "p", cal, old, 35, 0)
	clock.set(last.Add(time.Second))
	// A tenant that never renews is as it always was: no period, and its
	// JSON names none.
	WantBalance(t, st, ledger.Balance{TenantID: "n", BudgetUnits: 100, AvailableUnits: 100})
	nb, err := st.Balance(ctx, "n")
	if err != nil {
		t.Fatal(err)
	}
	if js, _ := json.Marshal(nb); strings.Contains(string(js), "period") {
		t.Fatalf("a balance that never renews carries a period: %s", js)
	}
	for _, e := range tenantAudit(t, st, "p") {
		if e.RunID == "r1" && e.Period != old {
			t.Fatalf("audit row of r1 names period %q, want %q: %+v", e.Period, old, e)
		}
	}
	WantVerified(t, st)
}

// wantPeriod fails tb unless tenant's balance is in period label of cal,
// with spent and held as given.
func wantPeriod(tb testing.TB, st ledger.Store, tenant string, cal period.Calendar, label string, spent, held ledger.Units) ledger.Balance {
	tb.Helper()
	b, err := st.Balance(context.Background(), tenant)
	if err != nil {
		tb.Fatal(err)
	}
	if b.Period != label || b.SpentUnits != spent || b.HeldUnits != held || b.AvailableUnits != b.BudgetUnits-spent-held {
		tb.Fatalf("balance of %s = %+v, want period %s spent %d held %d", tenant, b, label, spent, held)
	}
	want := cal.At(b.PeriodStart)
	if !b.PeriodStart.Equal(want.Start) || !b.PeriodEnd.Equal(want.End) {
		tb.Fatalf("period %s runs %v – %v, want %v – %v", label, b.PeriodStart, b.PeriodEnd, want.Start, want.End)
	}
	if err := b.Check(); err != nil {
		tb.Fatal(err)
	}
	return b
}

// testPeriodRace: admissions racing while the clock crosses the boundary
// never admit more than a period's budget into either period, and each
// period's books are the sums over its runs.
func testPeriodRace(t *testing.T, open ClockOpener, cal period.Calendar, last time.Time, old, fresh string) {
	ctx := context.Background()
	clock := &testClock{at: last}
	st := open(t, clock.now)
	const budget, reserve, n = 100, 10, 60
	MustApply(t, st, PeriodTenant("p", budget, n, cal))
	race(t, n, func(i int) error {
		if i == n/3 {
			clock.set(last.Add(time.Second)) // the boundary passes mid-race
		}
		_, err := st.Admit(ctx, ledger.AdmitRequest{RunID: ledger.RunID(fmt.Sprintf("r%02d", i)), TenantID: "p",
			Upstream: "demo", Model: "demo-model", ReserveUnits: reserve})
		return err
	})
	// Whatever the race left to the new period, it admits up to its budget
	// and no further.
	for i := 0; ; i++ {
		_, err := st.Admit(ctx, ledger.AdmitRequest{RunID: ledger.RunID(fmt.Sprintf("x%02d", i)), TenantID: "p",
			Upstream: "demo", Model: "demo-model", ReserveUnits: reserve})
		if err != nil {
			WantCode(t, err, ledger.CodeInsufficientBudget)
			break
		}
	}
	runs, err := st.Runs(ctx, ledger.RunFilter{TenantID: "p", Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	held := map[string]ledger.Units{}
	for _, r := range runs {
		if r.Period != old && r.Period != fresh {
			t.Fatalf("run %s is in period %q, neither %s nor %s", r.ID, r.Period, old, fresh)
		}
		held[r.Period] += r.HeldUnits
	}
	for label, h := range held {
		if h > budget {
			t.Fatalf("period %s admitted %d units, above its budget %d", label, h, budget)
		}
	}
	if held[fresh] != budget {
		t.Fatalf("the new period admitted %d units of %d", held[fresh], budget)
	}
	wantPeriod(t, st, "p", cal, fresh, 0, held[fresh])
	clock.set(last)
	wantPeriod(t, st, "p", cal, old, 0, held[old])
	WantVerified(t, st)
}

// testDSTDays: a daily period in New York lasts 23 hours on the day the
// clocks spring forward and 25 on the day they fall back, and a run
// admitted in the 25th hour is still that day's.
func testDSTDays(t *testing.T, open ClockOpener) {
	ny := mustZone(t, "America/New_York")
	cal := period.Calendar{Kind: period.Day, Zone: ny}
	clock := &testClock{at: time.Date(2026, 3, 8, 12, 0, 0, 0, ny)}
	st := open(t, clock.now)
	MustApply(t, st, PeriodTenant("p", 100, 10, cal))
	b := wantPeriod(t, st, "p", cal, "2026-03-08", 0, 0)
	if d := b.PeriodEnd.Sub(b.PeriodStart); d != 23*time.Hour {
		t.Fatalf("2026-03-08 in New York lasts %v, want 23h", d)
	}
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, ny)
	clock.set(start.Add(24*time.Hour + 30*time.Minute)) // 23:30 local, the 25th hour
	run := MustAdmit(t, st, ledger.AdmitRequest{RunID: "late", TenantID: "p", ReserveUnits: 10})
	if run.Period != "2026-11-01" {
		t.Fatalf("a run in the 25th hour of 2026-11-01 is in period %q", run.Period)
	}
	b = wantPeriod(t, st, "p", cal, "2026-11-01", 0, 10)
	if d := b.PeriodEnd.Sub(b.PeriodStart); d != 25*time.Hour {
		t.Fatalf("2026-11-01 in New York lasts %v, want 25h", d)
	}
	WantVerified(t, st)
}

// testCalendarConfig: a tenant's calendar is kept by the store and a change
// of it is audited as a config change; applying the same one again is not.
func testCalendarConfig(t *testing.T, open ClockOpener) {
	ctx := context.Background()
	clock := &testClock{at: time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)}
	st := open(t, clock.now)
	plain := Tenant("p", 100, 10)
	MustApply(t, st, plain)
	cal := period.Calendar{Kind: period.Week, Zone: mustZone(t, "Pacific/Pago_Pago"), WeekStarts: time.Sunday}
	renewing := PeriodTenant("p", 100, 10, cal)
	MustApply(t, st, renewing)
	row := lastAudit(t, st, "p")
	if row.Kind != ledger.AuditConfig || !strings.Contains(row.Detail, "budget_period none→week") {
		t.Fatalf("the calendar's change was audited as %+v", row)
	}
	MustApply(t, st, renewing)
	if again := lastAudit(t, st, "p"); again.Seq != row.Seq {
		t.Fatalf("applying the same calendar again was audited: %+v", again)
	}
	tenants, err := st.Tenants(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := tenants[0].Calendar
	if got.Kind != cal.Kind || ledger.CalendarZone(got) != "Pacific/Pago_Pago" || got.WeekStarts != time.Sunday {
		t.Fatalf("stored calendar = %+v, want %+v", got, cal)
	}
	wantPeriod(t, st, "p", cal, "2026-W49", 0, 0)
	WantVerified(t, st)
}
