package sim_test

import (
	"os"
	"strconv"
	"testing"

	"github.com/quotagate/quotagate/backend/quota"
	"github.com/quotagate/quotagate/backend/quota/sim"
)

// TestTrace prints one seed day by day: QUOTAGATE_SIM_TRACE=<seed>.
func TestTrace(t *testing.T) {
	seed, err := strconv.ParseUint(os.Getenv("QUOTAGATE_SIM_TRACE"), 10, 64)
	if err != nil {
		t.Skip("set QUOTAGATE_SIM_TRACE=<seed> to print a day-by-day trace")
	}
	for _, p := range []sim.Policy{sim.V6, sim.Quotagate} {
		cfg := sim.Config{Seed: seed, Days: 60, Options: quota.DefaultOptions(), Trace: func(d sim.DayTrace) {
			t.Logf("%-9s %s pool %8d refund %8d expired %8d consumed %8d billed %7d refused %4d rwf %4d end %8d",
				d.Policy, d.Day, d.Pool, d.Refund, d.Expired, d.Consumed, d.Billed, d.Refused, d.RefusedWhileFree, d.PoolAtEnd)
		}}
		sim.Run(cfg, p)
	}
}
