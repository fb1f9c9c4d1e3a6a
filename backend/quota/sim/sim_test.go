package sim_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/quota"
	"github.com/quotagate/quotagate/backend/quota/sim"
)

// seeds: 20 by default, 200 with QUOTAGATE_LONG=1, 2 under -race.
func seeds() int {
	switch {
	case os.Getenv("QUOTAGATE_LONG") == "1":
		return 200
	case raceEnabled:
		return 2
	}
	return 20
}

func pct(a, b ledger.Units) float64 {
	if b == 0 {
		return 100
	}
	return 100 * float64(a) / float64(b)
}

// TestSixtyDays runs v6 and quotagate's guard on the same 60 days of bursty
// traffic and provider behaviour per seed. quotagate must never be billed;
// v6 must be billed on some day whose B0 is below the cap (seed 002 §7.5's
// residual risk), and quotagate must still serve ≥ 90% of the free pool on
// the days whose demand reached it.
func TestSixtyDays(t *testing.T) {
	n := seeds()
	var b strings.Builder
	fmt.Fprintf(&b, "| seed | days B0<cap | v6 billed | v6 billed days (B0<cap) | v6 free used | v6 pool use | v6 refused (while free) | quotagate billed | quotagate free used | quotagate pool use | quotagate refused (while free) | max v6 L |\n")
	fmt.Fprintf(&b, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	var tv6, tqg sim.Result
	for i := 1; i <= n; i++ {
		cfg := sim.Config{Seed: uint64(i), Days: 60, Options: quota.DefaultOptions()}
		v6, qg := sim.Run(cfg, sim.V6), sim.Run(cfg, sim.Quotagate)
		if v6.Requests != qg.Requests {
			t.Fatalf("seed %d: traffic differs between policies", i)
		}
		if qg.Billed != 0 {
			t.Errorf("seed %d: quotagate was billed %d units on %d days", i, qg.Billed, qg.DaysBilled)
		}
		row(&b, fmt.Sprint(i), v6, qg)
		add(&tv6, v6)
		add(&tqg, qg)
	}
	row(&b, "all", tv6, tqg)
	t.Logf("%d seeds × 60 days, %d requests per policy; pool use = free units served / free pool, on days whose demand reached the pool\n%s",
		n, tv6.Requests, b.String())
	if tqg.DaysBelowCap == 0 || tv6.DaysBilledBelowCap == 0 {
		t.Errorf("no billed v6 day with B0 below the cap (%d days below the cap): the simulator misses seed 002 §7.5's risk",
			tqg.DaysBelowCap)
	}
	if u := pct(tqg.SaturatedFreeUsed, tqg.SaturatedAvail); u < 90 {
		t.Errorf("quotagate served %.1f%% of the free pool on saturated days; want ≥ 90%%", u)
	}
}

func row(b *strings.Builder, seed string, v6, qg sim.Result) {
	fmt.Fprintf(b, "| %s | %d | %d | %d (%d) | %d | %.1f%% | %d (%d) | %d | %d | %.1f%% | %d (%d) | %d |\n", seed, qg.DaysBelowCap,
		v6.Billed, v6.DaysBilled, v6.DaysBilledBelowCap, v6.FreeUsed, pct(v6.SaturatedFreeUsed, v6.SaturatedAvail),
		v6.Refused, v6.RefusedWhileFree,
		qg.Billed, qg.FreeUsed, pct(qg.SaturatedFreeUsed, qg.SaturatedAvail), qg.Refused, qg.RefusedWhileFree,
		v6.MaxInflation)
}

func add(t *sim.Result, r sim.Result) {
	t.Consumed += r.Consumed
	t.Billed += r.Billed
	t.FreeUsed += r.FreeUsed
	t.Requests += r.Requests
	t.Refused += r.Refused
	t.RefusedWhileFree += r.RefusedWhileFree
	t.RefusedWhileFreeWalled += r.RefusedWhileFreeWalled
	t.RefusedWhileFreeBalanceWall += r.RefusedWhileFreeBalanceWall
	t.DaysBelowCap += r.DaysBelowCap
	t.DaysBilled += r.DaysBilled
	t.DaysBilledBelowCap += r.DaysBilledBelowCap
	t.SaturatedAvail += r.SaturatedAvail
	t.SaturatedFreeUsed += r.SaturatedFreeUsed
	t.MaxInflation = max(t.MaxInflation, r.MaxInflation)
	t.BeyondCap += r.BeyondCap
	m, n := &t.Margin, r.Margin
	m.Days += n.Days
	m.Sync, m.Lag, m.Expiry, m.Buffer = m.Sync+n.Sync, m.Lag+n.Lag, m.Expiry+n.Expiry, m.Buffer+n.Buffer
	m.Skew, m.Carry, m.Overrun, m.Wall, m.Gap = m.Skew+n.Skew, m.Carry+n.Carry, m.Overrun+n.Overrun, m.Wall+n.Wall, m.Gap+n.Gap
}
