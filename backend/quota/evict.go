package quota

import (
	"fmt"

	"github.com/quotagate/quotagate/backend/ledger"
)

// Eviction reasons.
const (
	ReasonUsageWall   = "usage_wall"
	ReasonBalanceWall = "balance_wall"
)

// Wall is the usage at which a model is evicted: min(limit, usage_wall).
func Wall(o Options, limit ledger.Units) ledger.Units { return min(limit, o.UsageWall) }

// ShouldEvict is seed 002 §7.6's rule: evict when usage ≥ min(limit,
// usage_wall), or when balance_at_sync < balance_wall and usage > 0 (usage > 0
// keeps a small pool, B0 < balance_wall, from being locked out for good).
// Restore is its exact complement — usage below the wall and (balance ≥ wall
// or usage = 0) — so a sync cannot flap a model between the two.
func ShouldEvict(o Options, limit, usage, balanceAtSync ledger.Units) (bool, string) {
	if w := Wall(o, limit); usage >= w {
		return true, fmt.Sprintf("%s: usage %d ≥ wall %d (min of limit %d and usage wall %d)",
			ReasonUsageWall, usage, w, limit, o.UsageWall)
	}
	if balanceAtSync < o.BalanceWall && usage > 0 {
		return true, fmt.Sprintf("%s: balance at sync %d < %d with usage %d",
			ReasonBalanceWall, balanceAtSync, o.BalanceWall, usage)
	}
	return false, ""
}

// PlanTopUp is the nightly top-up clamp (seed 002 §8.4): the units a
// consumption job may still spend today, plan ≤ cap − usage and
// plan ≤ B0_est − small_buffer − usage, never negative.
func PlanTopUp(o Options, usage, b0 ledger.Units) ledger.Units {
	return clamp(min(o.DailyCap-usage, b0-o.SmallBuffer-usage))
}

// ReasonNoBalance marks a model with no balance reading (and no manual B0):
// the guard fails closed until one arrives.
const ReasonNoBalance = "no_balance"

// Verdict applies ShouldEvict to an assessment and today's settled usage;
// the units yesterday's runs settled since 00:00 count toward the walls too
// (they were collected, and paid, today).
func Verdict(o Options, a Assessment, usage ledger.Units) (bool, string) {
	if !a.B0.Known {
		return true, ReasonNoBalance + ": no balance reading or manual B0 yet"
	}
	return ShouldEvict(o, a.Limit, usage+a.Carry.Settled, a.BalanceAtSync)
}
