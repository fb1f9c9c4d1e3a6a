package sqlite_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/ledger/ledgertest"
	"github.com/quotagate/quotagate/backend/sqlite"
)

type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// TestUsageSeries: settled and reconciled units of a guarded model land in
// the minute of the settlement, [from, to) selects by minute start, and the
// series is kept for at least two days (pruned after three).
func TestUsageSeries(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 29, 8, 0, 30, 0, time.UTC)
	clock := &fakeClock{now: t0}
	st := MustOpenStore(t, sqlite.Options{Now: clock.Now})
	ledgertest.MustApply(t, st, ledgertest.Tenant("t", 1_000_000, 10))
	q := &ledger.QuotaCheck{Day: "2026-11-29", LimitUnits: 1_000_000}
	settleAt := func(id ledger.RunID, at time.Time, units ledger.Units) {
		t.Helper()
		clock.Set(at)
		ledgertest.MustAdmit(t, st, ledger.AdmitRequest{RunID: id, TenantID: "t", Upstream: "ark", Model: "m", ReserveUnits: 1000, Quota: q})
		if _, err := st.Settle(ctx, id, units, "usage", ledger.System("test")); err != nil {
			t.Fatal(err)
		}
	}
	settleAt("a", t0, 100)
	settleAt("b", t0.Add(20*time.Second), 50) // same minute (08:00)
	settleAt("c", t0.Add(time.Minute), 7)     // 08:01
	clock.Set(t0.Add(2 * time.Minute))
	ledgertest.MustAdmit(t, st, ledger.AdmitRequest{RunID: "d", TenantID: "t", Upstream: "ark", Model: "m", ReserveUnits: 1000, Quota: q})
	if _, err := st.KeepHold(ctx, "d", ledger.RunInterrupted, "cut", ledger.System("test")); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Reconcile(ctx, "d", 3, "console", ledger.ActorAdmin); err != nil { // 08:02
		t.Fatal(err)
	}
	m0 := t0.Truncate(time.Minute)
	series := func(from, to time.Time) []ledger.UsagePoint {
		t.Helper()
		p, err := st.UsageSeries(ctx, "ark", "m", from, to)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	all := series(m0.Add(-time.Hour), m0.Add(time.Hour))
	want := []ledger.UsagePoint{{Minute: m0, Units: 150}, {Minute: m0.Add(time.Minute), Units: 7}, {Minute: m0.Add(2 * time.Minute), Units: 3}}
	if len(all) != len(want) {
		t.Fatalf("series = %+v, want %+v", all, want)
	}
	for i := range want {
		if !all[i].Minute.Equal(want[i].Minute) || all[i].Units != want[i].Units {
			t.Fatalf("series = %+v, want %+v", all, want)
		}
	}
	if p := series(m0.Add(time.Minute), m0.Add(2*time.Minute)); len(p) != 1 || p[0].Units != 7 {
		t.Fatalf("[08:01, 08:02) = %+v, want only 08:01", p)
	}
	if p := series(m0.Add(time.Second), m0.Add(2*time.Minute)); len(p) != 1 || p[0].Units != 7 {
		t.Fatalf("[08:00:01, 08:02) = %+v: a minute belongs to the range when its start does", p)
	}
	// Two days later the series is still there; past three days it is pruned
	// by the next write.
	clock.Set(t0.Add(48 * time.Hour))
	settleAt("e", t0.Add(48*time.Hour), 1)
	if p := series(m0, m0.Add(3*time.Minute)); len(p) != 3 {
		t.Fatalf("after two days the series is %+v", p)
	}
	settleAt("f", t0.Add(73*time.Hour), 1)
	if p := series(m0, m0.Add(3*time.Minute)); len(p) != 0 {
		t.Fatalf("after three days the series still has %+v", p)
	}
	// The day's usage is not pruned with it.
	if u, _ := st.QuotaUsage(ctx, "ark", "m", "2026-11-29"); u.UsageUnits != 162 {
		t.Fatalf("quota usage = %+v, want 162", u)
	}
	ledgertest.WantVerified(t, st)
}
