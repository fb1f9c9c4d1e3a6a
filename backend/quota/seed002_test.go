package quota_test

import (
	"strings"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/quota"
)

var cst = mustLoc("Asia/Shanghai")

func mustLoc(name string) *time.Location {
	l, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return l
}

func at(day string, hhmmss string) time.Time {
	t, err := time.ParseInLocation(time.DateOnly+" 15:04:05", day+" "+hhmmss, cst)
	if err != nil {
		panic(err)
	}
	return t
}

func opts() quota.Options { return quota.DefaultOptions() }

// spread adds to s `units` settled evenly over the whole minutes in [from, to).
func spread(s *quota.Series, from, to time.Time, units ledger.Units) {
	n := int(to.Sub(from) / time.Minute)
	for i := 0; i < n; i++ {
		u := units / ledger.Units(n)
		if i == n-1 {
			u = units - u*ledger.Units(n-1)
		}
		s.Add(from.Add(time.Duration(i)*time.Minute), u)
	}
}

func reading(at time.Time, bal, usage ledger.Units) ledger.Snapshot {
	return ledger.Snapshot{Upstream: "ark", Model: "deepseek-v4-flash", Day: quota.DefaultOptions().Day(at),
		At: at, BalanceUnits: bal, UsageAtSync: usage, Source: "volcengine"}
}

// v4 (seed 002 §7.3) took the remaining balance for a cumulative limit and
// refused everything at 15:09:51 on 08-12. A converged reading (14:59:51,
// balance 596,869 = 2,293,004 − 1,696,135) must not block.
func TestV4MisBlockDoesNotBlock(t *testing.T) {
	o := opts()
	s := &quota.Series{}
	spread(s, at("2026-08-12", "09:00:00"), at("2026-08-12", "13:38:00"), 1_696_135)
	snaps := []ledger.Snapshot{reading(at("2026-08-12", "14:59:51"), 596_869, 1_696_135)}
	now := at("2026-08-12", "15:09:51")
	a := quota.Assess(o, now, snaps, s)

	if a.B0.Units != 2_293_004 {
		t.Fatalf("B0 = %d, want 2,293,004 (balance 596,869 + usage 1,696,135)", a.B0.Units)
	}
	if a.Limit != 2_000_000 {
		t.Fatalf("limit = %d, want the cap 2,000,000", a.Limit)
	}
	v4 := ledger.Units(596_869 - 300_000) // v4: max(0, balance − BUFFER)
	usage := ledger.QuotaUsage{UsageUnits: 1_696_135}
	if quota.Admits(usage, 16, v4) {
		t.Fatal("the v4 formula should have refused (that was the bug this test pins)")
	}
	if !quota.Admits(usage, 16, a.Limit) {
		t.Fatalf("quotagate refused usage 1,696,135 + 16 under limit %d", a.Limit)
	}
	if ev, why := quota.Verdict(o, a, usage.UsageUnits); ev {
		t.Fatalf("evicted with real free quota left: %s", why)
	}
}

// 08-13 (seed 002 §4.2): B0 2,242,178 from the console; at 11:22 the API read
// 1,726,526 = B0 − 515,652, the usage at 11:08 (Δ = 14 min), while usage at
// 11:22 was 665,268. v6 gives 2,341,794 before the cap; B0 − buffer is 2,192,178.
func TestCalibration0813(t *testing.T) {
	o := opts()
	day := "2026-08-13"
	s := &quota.Series{}
	spread(s, at(day, "10:54:00"), at(day, "11:08:00"), 515_652) // usage began at 10:54
	spread(s, at(day, "11:08:00"), at(day, "11:22:00"), 665_268-515_652)
	now := at(day, "11:22:00")
	r1108 := reading(at(day, "11:08:00"), 2_242_063, 515_652) // ≈ B0, residue 115 (§4.2)
	r1122 := reading(now, 1_726_526, 665_268)
	manual := ledger.Snapshot{Upstream: "ark", Model: "deepseek-v4-flash", Day: day, At: at(day, "11:25:00"),
		B0Units: 2_242_178, Source: quota.SourceManualB0}

	if got := quota.LimitV6(quota.Options{DailyCap: 1 << 40, SmallBuffer: 50_000}, 1_726_526, 665_268); got != 2_341_794 {
		t.Fatalf("v6 before the cap = %d, want 2,341,794", got)
	}
	if got := quota.LimitV6(o, 1_726_526, 665_268); got != 2_000_000 {
		t.Fatalf("v6 after the cap = %d, want 2,000,000", got)
	}
	uncapped := o
	uncapped.DailyCap = 1 << 40

	tests := []struct {
		name      string
		snaps     []ledger.Snapshot
		lag       time.Duration // 0: estimate
		now       time.Time
		wantB0    ledger.Units
		wantLimit ledger.Units // uncapped
	}{
		{"ManualB0", []ledger.Snapshot{r1122, manual}, 0, at(day, "11:30:00"), 2_242_178, 2_192_178},
		{"EstimateAt1122WithLag14m", []ledger.Snapshot{r1122}, 14 * time.Minute, now, 2_242_178, 2_192_178},
		// Both readings: the 11:08 one (residue 115 below B0) is the smaller estimate, and the guard
		// keeps the smaller: 115 conservative.
		{"EstimateFromHistory", []ledger.Snapshot{r1108, r1122}, 0, now, 2_242_063, 2_192_063},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lag := tc.lag
			if lag == 0 {
				lag = quota.EstimateLag(uncapped, tc.snaps, s, tc.now)
			}
			b0 := quota.EstimateB0(uncapped, day, tc.snaps, s, lag, tc.now)
			if b0.Units != tc.wantB0 {
				t.Fatalf("B0 = %d (lag %s), want %d", b0.Units, lag, tc.wantB0)
			}
			if got := quota.Limit(uncapped, b0.Units); got != tc.wantLimit {
				t.Fatalf("limit = %d, want %d", got, tc.wantLimit)
			}
			if got := quota.Limit(o, b0.Units); got != 2_000_000 {
				t.Fatalf("capped limit = %d, want 2,000,000", got)
			}
		})
	}
	t.Run("LagEstimatedAs14m", func(t *testing.T) {
		if lag := quota.EstimateLag(o, []ledger.Snapshot{r1108, r1122}, s, now); lag != 14*time.Minute {
			t.Fatalf("lag = %s, want 14m", lag)
		}
	})
}

// 08-12 20:53 (seed 002 §7.6): usage 1,800,000 under the cap wall (B0
// 2,293,004). A 200k-token input with max_tokens 50k is refused; a 126k one
// passes, settles, and the usage wall then evicts the model.
func TestIncident2053(t *testing.T) {
	o := opts()
	a := quota.Assessment{B0: quota.B0Estimate{Units: 2_293_004, Known: true}, Limit: quota.Limit(o, 2_293_004),
		BalanceAtSync: 596_771}
	if a.Limit != 2_000_000 {
		t.Fatalf("limit = %d, want 2,000,000", a.Limit)
	}
	u := ledger.QuotaUsage{UsageUnits: 1_800_000}
	if quota.Admits(u, 200_000+50_000, a.Limit) {
		t.Fatal("a 200k input + 50k output at usage 1.8M was admitted")
	}
	if !quota.Admits(u, 126_000+50_000, a.Limit) {
		t.Fatal("a 126k input + 50k output at usage 1.8M was refused")
	}
	if ev, why := quota.Verdict(o, a, u.UsageUnits); ev {
		t.Fatalf("evicted at 1.8M: %s", why)
	}
	u.UsageUnits += 176_000 // settled at most its reserve
	if ev, why := quota.Verdict(o, a, u.UsageUnits); !ev || !strings.HasPrefix(why, quota.ReasonUsageWall) {
		t.Fatalf("usage %d: evicted %v (%s), want evicted at the usage wall", u.UsageUnits, ev, why)
	}
}

// §7.6 thinking model: 18 input + 16 declared was reserved as 34 and cost
// 150–167; meter's ReservePolicy gives 18 + max(16, 4096) = 4,114. The guard
// must use the reserve it is given, not a smaller guess.
func TestThinkingReserve(t *testing.T) {
	u := ledger.QuotaUsage{UsageUnits: 1_995_000, HeldInFlight: 1_000}
	limit := ledger.Units(2_000_000)
	if !quota.Admits(u, 34, limit) {
		t.Fatal("34 units should fit: this row only shows the two reserves differ")
	}
	if quota.Admits(u, 4_114, limit) {
		t.Fatal("reserve 4,114 admitted past the limit")
	}
}

// Seed 002 §7.6's nine soft-evict/restore scenarios (kick / no kick /
// deadlock guard / no flapping / dynamic wall takes the min).
func TestSoftEvictScenarios(t *testing.T) {
	o := opts()
	tests := []struct {
		name         string
		limit, usage ledger.Units
		balance      ledger.Units
		evict        bool
		reason       string
	}{
		{"UsageWallEvicts", 2_000_000, 1_950_000, 500_000, true, quota.ReasonUsageWall},
		{"BelowUsageWallStays", 2_000_000, 1_949_999, 500_000, false, ""},
		{"DynamicWallTakesLimit", 1_500_000, 1_500_000, 400_000, true, quota.ReasonUsageWall},
		{"BelowDynamicWallStays", 1_500_000, 1_499_999, 400_000, false, ""},
		{"BalanceWallEvicts", 2_000_000, 1, 99_999, true, quota.ReasonBalanceWall},
		{"SmallPoolUnusedNotEvicted", 30_000, 0, 80_000, false, ""}, // B0 80k < 100k, usage 0: no deadlock
		{"BalanceAtWallStays", 2_000_000, 500_000, 100_000, false, ""},
		{"StillLowStaysEvicted", 2_000_000, 10, 90_000, true, quota.ReasonBalanceWall}, // no restore flap
		{"RefundRestores", 2_000_000, 500_000, 1_900_000, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ev, why := quota.ShouldEvict(o, tc.limit, tc.usage, tc.balance)
			if ev != tc.evict {
				t.Fatalf("evict = %v (%s), want %v", ev, why, tc.evict)
			}
			if tc.evict && !strings.HasPrefix(why, tc.reason) {
				t.Fatalf("reason %q, want prefix %q", why, tc.reason)
			}
		})
	}
}

func TestDayRollover(t *testing.T) {
	o := opts()
	before := time.Date(2026, 8, 12, 15, 59, 59, 0, time.UTC) // 23:59:59 CST
	after := before.Add(time.Second)
	if d := o.Day(before); d != "2026-08-12" {
		t.Fatalf("day before = %s", d)
	}
	if d := o.Day(after); d != "2026-08-13" {
		t.Fatalf("day after = %s", d)
	}
	if got := o.NextDayStart(before); !got.Equal(after) {
		t.Fatalf("next day start = %s, want %s", got, after)
	}

	// Yesterday's last reading (23:50, lag 15m) carries into today: B0_today =
	// balance − usage in [23:35, 00:00). Usage that late must not inflate today.
	s := &quota.Series{}
	spread(s, at("2026-08-12", "23:30:00"), at("2026-08-13", "00:00:00"), 30_000) // 1,000 a minute
	snaps := []ledger.Snapshot{reading(at("2026-08-12", "23:50:00"), 1_500_000, 1_900_000)}
	now := at("2026-08-13", "00:05:00")
	a := quota.Assess(o, now, snaps, s)
	if a.Day != "2026-08-13" {
		t.Fatalf("day = %s", a.Day)
	}
	if want := ledger.Units(1_500_000 - 25_000); a.B0.Units != want {
		t.Fatalf("B0 = %d, want %d", a.B0.Units, want)
	}
	// A new day has no usage yet: the usage wall of yesterday no longer applies.
	if ev, why := quota.Verdict(o, a, 0); ev {
		t.Fatalf("evicted at 00:05 with usage 0: %s", why)
	}
}

// The morning gap (seed 002 §1.1): refunds arrive at an unknown time after
// 00:00. Until then the pool is what is left; the same formula gives it, and
// a refund (a balance rise) lifts B0 at the next reading.
func TestMorningGap(t *testing.T) {
	o := opts()
	day := "2026-08-13"
	s := &quota.Series{}
	spread(s, at(day, "01:00:00"), at(day, "02:00:00"), 60_000)
	snaps := []ledger.Snapshot{
		reading(at("2026-08-12", "23:55:00"), 300_000, 1_700_000), // yesterday spent most of the pool
		reading(at(day, "02:30:00"), 240_000, 60_000),
	}
	a := quota.Assess(o, at(day, "02:35:00"), snaps, s)
	if a.Limit != 250_000 {
		t.Fatalf("limit before the refund = %d, want 300,000 − 50,000", a.Limit)
	}
	if ev, why := quota.Verdict(o, a, 60_000); ev {
		t.Fatalf("mis-killed in the morning gap: %s", why)
	}
	if !quota.Admits(ledger.QuotaUsage{UsageUnits: 60_000}, 190_000, a.Limit) || quota.Admits(ledger.QuotaUsage{UsageUnits: 60_000}, 190_001, a.Limit) {
		t.Fatal("admission in the morning gap is not exactly limit-bound")
	}
	snaps = append(snaps, reading(at(day, "09:40:00"), 1_940_000, 60_000)) // refund of 1.7M arrived
	a = quota.Assess(o, at(day, "09:41:00"), snaps, s)
	if a.B0.Units != 2_000_000 || a.Limit != 1_950_000 {
		t.Fatalf("after the refund B0 = %d, limit = %d; want 2,000,000 and 1,950,000", a.B0.Units, a.Limit)
	}
}

func TestLagEstimateBounded(t *testing.T) {
	o := opts()
	base := at("2026-08-13", "08:00:00")
	for _, tc := range []struct {
		name    string
		trueLag time.Duration
		lo, hi  time.Duration
	}{
		{"Lag9m", 9 * time.Minute, 9 * time.Minute, 9 * time.Minute},
		{"Lag14m", 14 * time.Minute, 14 * time.Minute, 14 * time.Minute},
		{"Lag90mStaysInBounds", 90 * time.Minute, 30 * time.Minute, o.MaxLag},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &quota.Series{}
			var cum ledger.Units
			usageAt := map[time.Time]ledger.Units{}
			for i := 0; i < 6*60; i++ {
				m := base.Add(time.Duration(i) * time.Minute)
				usageAt[m] = cum
				u := ledger.Units((i*7919)%5000) * ledger.Units(1+i%3)
				s.Add(m, u)
				cum += u
			}
			var snaps []ledger.Snapshot
			for m := base.Add(2 * time.Hour); m.Before(base.Add(6 * time.Hour)); m = m.Add(10 * time.Minute) {
				snaps = append(snaps, reading(m, 3_000_000-usageAt[m.Add(-tc.trueLag)], 0))
			}
			if got := quota.EstimateLag(o, snaps, s, base.Add(6*time.Hour)); got < tc.lo || got > tc.hi {
				t.Fatalf("lag = %s, want within [%s, %s]", got, tc.lo, tc.hi)
			}
		})
	}
	if got := quota.EstimateLag(o, nil, &quota.Series{}, base); got != o.DefaultLag {
		t.Fatalf("no history: lag = %s, want default %s", got, o.DefaultLag)
	}
}

func TestPlanTopUp(t *testing.T) {
	o := opts()
	for _, tc := range []struct {
		name      string
		usage, b0 ledger.Units
		want      ledger.Units
	}{
		{"CapBinds", 500_000, 3_000_000, 1_500_000},
		{"PoolBinds", 500_000, 1_200_000, 650_000},
		{"Exhausted", 1_990_000, 2_000_000, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := quota.PlanTopUp(o, tc.usage, tc.b0); got != tc.want {
				t.Fatalf("plan = %d, want %d", got, tc.want)
			}
		})
	}
}
