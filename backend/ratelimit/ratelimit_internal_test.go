package ratelimit

import (
	"testing"
	"time"
)

// Memory stays bounded by the largest limit however long a tenant calls.
func TestLogBoundedByLimit(t *testing.T) {
	now := time.Date(2026, 10, 14, 0, 0, 0, 0, time.UTC)
	l := New(Options{Now: func() time.Time { return now }})
	l.SetLimits("a", Limits{PerMinute: 10, PerHour: 120})
	l.SetLimits("b", Limits{PerMinute: 7})
	maxA, maxB := 0, 0
	for i := range 20000 {
		now = now.Add(time.Duration(i%13) * 300 * time.Millisecond)
		l.Allow("a")
		l.Allow("b")
		maxA = max(maxA, len(l.tenants["a"].stamps))
		maxB = max(maxB, len(l.tenants["b"].stamps))
	}
	if maxA > 120 || maxB > 7 {
		t.Fatalf("log grew to %d / %d stamps, limits are 120 / 7", maxA, maxB)
	}
	if cap(l.tenants["b"].stamps) > 64 {
		t.Fatalf("b's log capacity %d: pruning leaks the front of the array", cap(l.tenants["b"].stamps))
	}
}

func TestCeilSeconds(t *testing.T) {
	tests := []struct {
		in, want time.Duration
	}{
		{0, time.Second},
		{-time.Second, time.Second},
		{time.Nanosecond, time.Second},
		{time.Second, time.Second},
		{time.Second + time.Nanosecond, 2 * time.Second},
		{50500 * time.Millisecond, 51 * time.Second},
		{time.Hour, time.Hour},
	}
	for _, tt := range tests {
		if got := ceilSeconds(tt.in); got != tt.want {
			t.Errorf("ceilSeconds(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
