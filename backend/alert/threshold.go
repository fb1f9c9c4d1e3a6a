package alert

import (
	"fmt"
	"math/bits"
	"slices"
)

// Threshold is a percent of a budget, 1 to 100, at which a tenant is warned.
type Threshold int

// Thresholds are a tenant's thresholds, ascending and without repeats.
type Thresholds []Threshold

// ParseThresholds reads alerts.thresholds: each 1–100, none listed twice,
// in any order; the answer is ascending. field names the key in errors
// ("alerts.thresholds").
func ParseThresholds(field string, percents []int) (Thresholds, error) {
	seen := make(map[int]bool, len(percents))
	ts := make(Thresholds, 0, len(percents))
	for i, p := range percents {
		if p < 1 || p > 100 {
			return nil, fmt.Errorf("%s[%d]: %d is not a percent from 1 to 100", field, i, p)
		}
		if seen[p] {
			return nil, fmt.Errorf("%s[%d]: %d is listed twice", field, i, p)
		}
		seen[p] = true
		ts = append(ts, Threshold(p))
	}
	slices.Sort(ts)
	return ts, nil
}

// Reached returns the thresholds that use has reached of budget: t is
// reached when used×100 >= t×budget, computed exactly (in 128 bits, so no
// budget or use overflows). A budget of 0 or less has no thresholds.
func (ts Thresholds) Reached(used, budget int64) Thresholds {
	var reached Thresholds
	for _, t := range ts {
		if atOrAbove(used, budget, t) {
			reached = append(reached, t)
		}
	}
	return reached
}

// Crossed returns the thresholds a change of use from before to after
// carries the tenant over: reached after, not reached before. Use that
// falls (a release, a reconcile below the reserve) crosses nothing.
func (ts Thresholds) Crossed(before, after, budget int64) Thresholds {
	var crossed Thresholds
	for _, t := range ts {
		if atOrAbove(after, budget, t) && !atOrAbove(before, budget, t) {
			crossed = append(crossed, t)
		}
	}
	return crossed
}

func atOrAbove(used, budget int64, t Threshold) bool {
	if budget <= 0 || used < 0 || t <= 0 {
		return false
	}
	uHi, uLo := bits.Mul64(uint64(used), 100)
	bHi, bLo := bits.Mul64(uint64(t), uint64(budget))
	return uHi > bHi || (uHi == bHi && uLo >= bLo)
}
