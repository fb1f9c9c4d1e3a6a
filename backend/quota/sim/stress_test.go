package sim_test

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/quota"
	"github.com/quotagate/quotagate/backend/quota/sim"
)

// TestStallStress (QUOTAGATE_SIM_STALL=<minutes>) lengthens the balance
// API's stalls far beyond the guard's lag bound and reports what it costs.
func TestStallStress(t *testing.T) {
	m, err := strconv.Atoi(os.Getenv("QUOTAGATE_SIM_STALL"))
	if err != nil {
		t.Skip("set QUOTAGATE_SIM_STALL=<minutes> (and QUOTAGATE_SIM_LAG=<minutes>) to stress the lag bound")
	}
	lag, _ := strconv.Atoi(os.Getenv("QUOTAGATE_SIM_LAG"))
	var v6, qg sim.Result
	for i := 1; i <= seeds(); i++ {
		cfg := sim.Config{Seed: uint64(i), Days: 60, Options: quota.DefaultOptions(), MaxStall: time.Duration(m) * time.Minute,
			BaseLag: time.Duration(lag) * time.Minute}
		add(&v6, sim.Run(cfg, sim.V6))
		r := sim.Run(cfg, sim.Quotagate)
		add(&qg, r)
		if r.Billed != 0 {
			t.Errorf("seed %d: quotagate billed %d with stalls up to %d min", i, r.Billed, m)
		}
	}
	t.Logf("base lag %d min (0: 8–16), stalls ≤ %d min: v6 billed %d (%d days), quotagate billed %d; pool use v6 %.1f%% quotagate %.1f%%",
		lag, m, v6.Billed, v6.DaysBilled, qg.Billed, pct(v6.SaturatedFreeUsed, v6.SaturatedAvail), pct(qg.SaturatedFreeUsed, qg.SaturatedAvail))
}
