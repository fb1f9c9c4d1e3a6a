package alert_test

import (
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/quotagate/quotagate/backend/alert"
)

func TestParseThresholds(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []int
		want alert.Thresholds
	}{
		{"Contract", []int{50, 80, 95}, alert.Thresholds{50, 80, 95}},
		{"Unsorted", []int{95, 50, 80}, alert.Thresholds{50, 80, 95}},
		{"Ends", []int{100, 1}, alert.Thresholds{1, 100}},
		{"None", nil, alert.Thresholds{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := alert.ParseThresholds("alerts.thresholds", tc.in)
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("ParseThresholds(%v) = %v, %v; want %v", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestParseThresholdsRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []int
		says string
	}{
		{"Zero", []int{50, 0}, "alerts.thresholds[1]: 0 is not a percent from 1 to 100"},
		{"Negative", []int{-5}, "alerts.thresholds[0]: -5 is not a percent from 1 to 100"},
		{"AboveAll", []int{80, 101}, "alerts.thresholds[1]: 101 is not a percent from 1 to 100"},
		{"Repeated", []int{50, 80, 50}, "alerts.thresholds[2]: 50 is listed twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := alert.ParseThresholds("alerts.thresholds", tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("ParseThresholds(%v) = %v, want %q", tc.in, err, tc.says)
			}
		})
	}
}

func TestCrossed(t *testing.T) {
	ts := alert.Thresholds{50, 80, 95}
	for _, tc := range []struct {
		name                  string
		before, after, budget int64
		want                  alert.Thresholds
	}{
		{"BelowAll", 0, 499, 1000, nil},
		{"ExactlyHalf", 499, 500, 1000, alert.Thresholds{50}},
		{"AlreadyPast", 500, 700, 1000, nil},
		{"OneSettleCrossesTwo", 400, 900, 1000, alert.Thresholds{50, 80}},
		{"AllAtOnce", 0, 1000, 1000, alert.Thresholds{50, 80, 95}},
		{"Overrun", 940, 1200, 1000, alert.Thresholds{95}},
		{"FallingUseCrossesNothing", 900, 100, 1000, nil},
		// 80 % of 3 units is 2.4: 2 units is below it, 3 reaches it; no rounding.
		{"IndivisibleBudgetBelow", 0, 2, 3, alert.Thresholds{50}},
		{"IndivisibleBudgetAt", 2, 3, 3, alert.Thresholds{80, 95}},
		// 95 % of $5.00 is 4.750000 in micros, exactly.
		{"MoneyOneMicroShort", 0, 4_749_999, 5_000_000, alert.Thresholds{50, 80}},
		{"MoneyToTheMicro", 4_749_999, 4_750_000, 5_000_000, alert.Thresholds{95}},
		{"NoBudget", 0, 10, 0, nil},
		{"HugeBudgetNoOverflow", 0, math.MaxInt64 / 100 * 80, math.MaxInt64 / 100 * 100, alert.Thresholds{50, 80}},
		{"HugeUseNoOverflow", 0, math.MaxInt64, math.MaxInt64, alert.Thresholds{50, 80, 95}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ts.Crossed(tc.before, tc.after, tc.budget); !slices.Equal(got, tc.want) {
				t.Fatalf("Crossed(%d, %d, %d) = %v, want %v", tc.before, tc.after, tc.budget, got, tc.want)
			}
		})
	}
}

func TestReached(t *testing.T) {
	ts := alert.Thresholds{50, 80, 95}
	if got := ts.Reached(800, 1000); !slices.Equal(got, alert.Thresholds{50, 80}) {
		t.Fatalf("Reached(800, 1000) = %v", got)
	}
	if got := ts.Reached(-1, 1000); got != nil {
		t.Fatalf("Reached(-1, 1000) = %v", got)
	}
}

// TestRacingAdmissionsCrossOnce is the property the store relies on: when
// each admission's before and after are consecutive states of one
// serialized counter, a threshold is crossed by exactly one of them, however
// the calls race.
func TestRacingAdmissionsCrossOnce(t *testing.T) {
	ts := alert.Thresholds{50, 80, 95}
	const budget, calls, each = 10_000, 50, 190
	var used atomic.Int64
	var mu sync.Mutex
	fired := map[alert.Threshold]int{}
	var wg sync.WaitGroup
	for range calls {
		wg.Go(func() {
			after := used.Add(each)
			crossed := ts.Crossed(after-each, after, budget)
			mu.Lock()
			for _, th := range crossed {
				fired[th]++
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	for _, th := range ts {
		if fired[th] != 1 {
			t.Fatalf("threshold %d fired %d times by %d racing calls, want once (%v)", th, fired[th], calls, fired)
		}
	}
}
