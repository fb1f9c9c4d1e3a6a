package alert_test

import (
	"math"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/alert"
)

func TestBackoffSchedule(t *testing.T) {
	for _, tc := range []struct {
		name   string
		b      alert.Backoff
		delays []time.Duration // after failure 0, 1, 2, …
	}{
		{"DefaultsTopOfRange", alert.Backoff{Jitter: func() float64 { return 1 }},
			[]time.Duration{0, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second,
				32 * time.Second, 64 * time.Second, 128 * time.Second, 256 * time.Second, 5 * time.Minute, 5 * time.Minute}},
		{"DefaultsBottomOfRange", alert.Backoff{Jitter: func() float64 { return 0 }},
			[]time.Duration{0, 500 * time.Millisecond, time.Second, 2 * time.Second}},
		{"HalfJitter", alert.Backoff{First: 100 * time.Millisecond, Max: time.Second, Jitter: func() float64 { return 0.5 }},
			[]time.Duration{0, 75 * time.Millisecond, 150 * time.Millisecond, 300 * time.Millisecond, 600 * time.Millisecond, 750 * time.Millisecond, 750 * time.Millisecond}},
		{"FirstAboveMax", alert.Backoff{First: time.Hour, Max: time.Minute, Jitter: func() float64 { return 1 }},
			[]time.Duration{0, time.Minute, time.Minute}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for failures, want := range tc.delays {
				if got := tc.b.Delay(failures); got != want {
					t.Fatalf("Delay(%d) = %v, want %v", failures, got, want)
				}
			}
		})
	}
}

func TestBackoffBounded(t *testing.T) {
	b := alert.Backoff{Max: math.MaxInt64}
	for _, failures := range []int{1, 10, 62, 63, 64, 1000, math.MaxInt} {
		if d := b.Delay(failures); d < 0 || d > math.MaxInt64 {
			t.Fatalf("Delay(%d) = %v", failures, d)
		}
	}
	for failures := 1; failures < 100; failures++ {
		if d := (alert.Backoff{}).Delay(failures); d < alert.DefaultFirstRetry/2 || d > alert.DefaultMaxRetry {
			t.Fatalf("random Delay(%d) = %v outside [%v, %v]", failures, d, alert.DefaultFirstRetry/2, alert.DefaultMaxRetry)
		}
	}
	if d := (alert.Backoff{Jitter: func() float64 { return 7 }}).Delay(1); d != time.Second {
		t.Fatalf("a jitter above 1 is clamped: %v", d)
	}
}
