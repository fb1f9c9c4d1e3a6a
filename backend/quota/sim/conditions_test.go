package sim_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/quota"
	"github.com/quotagate/quotagate/backend/quota/sim"
)

// condition is one row of TestConditions: a provider and traffic, the
// guard's options for it, and whether it is one of the two edges that must
// also consume nothing beyond the provider's daily cap.
type condition struct {
	name string
	h    sim.Harsh
	opts func(*quota.Options)
	edge bool
}

func conditions() []condition {
	low := sim.Harsh{PoolMin: 200_000, PoolMax: 1_200_000}
	cold := low
	cold.ReasoningColdStart = true
	return []condition{
		{name: "usual", h: sim.Harsh{}},
		{name: "lag drift: the balance API's lag drifting 5–60 min within a day, freezes up to 2 h",
			h: sim.Harsh{LagDrift: true, MaxFreeze: 2 * time.Hour}},
		{name: "late refund: refunds 00:05–16:00, a third of them in two parts",
			h: sim.Harsh{RefundBy: 16 * time.Hour, RefundSplit: true}},
		{name: "low B0 days: pools of 200k–1.2M, below the cap every day", h: low},
		{name: "edge: a reasoning model's first day (40 reasoning calls at 01:00, output 1–4× the cap; low B0)",
			h: cold, opts: func(o *quota.Options) { o.Reasoning = true }, edge: true},
		{name: "edge: the provider's day ±10 min from the guard's, a burst just before midnight",
			h: sim.Harsh{DaySkew: 10 * time.Minute, BurstsAtMidnight: true}, edge: true},
	}
}

// conditionSeeds: 100 × 30 days with QUOTAGATE_LONG=1 (make soak), 3 by
// default, 1 under -race (the two edges only: TestHarsherProvider runs
// the usual row there);
// QUOTAGATE_SIM_SEEDS=<n> sets it.
func conditionSeeds() int {
	if n, err := strconv.Atoi(os.Getenv("QUOTAGATE_SIM_SEEDS")); err == nil && n > 0 {
		return n
	}
	switch {
	case os.Getenv("QUOTAGATE_LONG") == "1":
		return 100
	case raceEnabled:
		return 1
	}
	return 3
}

// TestConditions tables the free quota's use per condition: pool use and
// calls refused while free quota remained, quotagate against v6 on the same
// traffic and provider, 30 days per seed. quotagate is never billed, on
// any seed of any condition, and on the two edges consumes nothing beyond
// the provider's daily cap. With the full 100 seeds, the usual row serves
// ≥ 98 % of the pool.
func TestConditions(t *testing.T) {
	n := conditionSeeds()
	cs := conditions()
	if raceEnabled {
		cs = []condition{cs[4], cs[5]}
	}
	rows, margins := make([]string, len(cs)), make([]string, len(cs))
	t.Run("condition", func(t *testing.T) {
		for i, c := range cs {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				t.Parallel()
				rows[i], margins[i] = conditionRow(t, c, n)
				t.Log(rows[i])
			})
		}
	})
	t.Logf("%s per condition; pool use = free units served / free pool on days whose demand reached it\n"+
		"| condition | pool use quotagate / v6 | refused while free quotagate / v6 | of which at a wall quotagate / v6 | of those at the balance wall quotagate / v6 | billed quotagate / v6 | beyond the cap quotagate / v6 |\n"+
		"|---|---:|---:|---:|---:|---:|---:|\n%s", moved(n), strings.Join(rows, "\n"))
	t.Logf("where quotagate's margin goes, per day, at its first refusal of a call the free pool could serve (mean units)\n"+
		"| condition | days | gap below the estimated pool | lag | expiry | buffer | skew | carry | overrun | usage wall (beside) | sync timing (true pool above the estimate) |\n"+
		"|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n%s", strings.Join(margins, "\n"))
}

// marginRow is a condition's mean Margin per day, as a table row.
func marginRow(name string, m sim.Margin) string {
	d := ledger.Units(max(m.Days, 1))
	return fmt.Sprintf("| %s | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d |", name, m.Days, m.Gap/d,
		m.Lag/d, m.Expiry/d, m.Buffer/d, m.Skew/d, m.Carry/d, m.Overrun/d, m.Wall/d, m.Sync/d)
}

func conditionRow(t *testing.T, c condition, n int) (row, margin string) {
	var tv6, tqg sim.Result
	for i := 1; i <= n; i++ {
		o := simOptions(t)
		if c.opts != nil {
			c.opts(&o)
		}
		cfg := sim.Config{Seed: uint64(i), Days: 30, Options: o, Harsh: c.h}
		v6, qg := sim.Run(cfg, sim.V6), sim.Run(cfg, sim.Quotagate)
		if v6.Requests != qg.Requests {
			t.Fatalf("%s, seed %d: traffic differs between policies", c.name, i)
		}
		if qg.Billed != 0 {
			t.Errorf("%s, seed %d: quotagate was billed %d units on %d days", c.name, i, qg.Billed, qg.DaysBilled)
		}
		if c.edge && qg.BeyondCap != 0 {
			t.Errorf("%s, seed %d: quotagate consumed %d units beyond the daily cap", c.name, i, qg.BeyondCap)
		}
		add(&tv6, v6)
		add(&tqg, qg)
	}
	use := pct(tqg.SaturatedFreeUsed, tqg.SaturatedAvail)
	if c.h == (sim.Harsh{}) && n >= 100 && use < 98 && measurement() == "" {
		t.Errorf("usual conditions: quotagate served %.2f %% of the free pool on full-demand days; want ≥ 98 %%", use)
	}
	return fmt.Sprintf("| %s | %.1f %% / %.1f %% | %d / %d | %d / %d | %d / %d | %s / %s | %s / %s |", c.name,
		use, pct(tv6.SaturatedFreeUsed, tv6.SaturatedAvail), tqg.RefusedWhileFree, tv6.RefusedWhileFree,
		tqg.RefusedWhileFreeWalled, tv6.RefusedWhileFreeWalled,
		tqg.RefusedWhileFreeBalanceWall, tv6.RefusedWhileFreeBalanceWall,
		units(tqg.Billed), units(tv6.Billed), units(tqg.BeyondCap), units(tv6.BeyondCap)), marginRow(c.name, tqg.Margin)
}

// simOptions are the guard's default options, moved for a measurement as
// the environment says (sim.Measurement).
func simOptions(t *testing.T) quota.Options {
	o, _, err := sim.Measurement(quota.DefaultOptions(), os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// measurement names what the environment moved ("" when nothing): the
// defaults' own checks (pool use) then do not apply.
func measurement() string {
	_, note, _ := sim.Measurement(quota.DefaultOptions(), os.Getenv)
	return note
}

// moved is the tables' heading: the seeds, and what a measurement moved.
func moved(n int) string {
	if note := measurement(); note != "" {
		return fmt.Sprintf("%d seeds × 30 days, options moved (%s)", n, note)
	}
	return fmt.Sprintf("%d seeds × 30 days", n)
}
