package clock_test

import (
	"strings"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/clock"
)

func env(value string, set bool) func(string) (string, bool) {
	return func(name string) (string, bool) {
		if name != clock.EnvOffset {
			return "", false
		}
		return value, set
	}
}

func TestFromEnv(t *testing.T) {
	for _, tc := range []struct {
		name   string
		value  string
		set    bool
		offset time.Duration
		banner string
	}{
		{"Unset", "", false, 0, "clock offset none (real time)"},
		{"Empty", "", true, 0, "clock offset none (real time)"},
		{"Zero", "0", true, 0, "clock offset none (real time)"},
		{"Forward", "36h", true, 36 * time.Hour, "clock offset +36h0m0s"},
		{"Backward", "-90m", true, -90 * time.Minute, "clock offset -1h30m0s"},
		{"Mixed", "2h30m15s", true, 2*time.Hour + 30*time.Minute + 15*time.Second, "clock offset +2h30m15s"},
		{"Spaces", " 1h ", true, time.Hour, "clock offset +1h0m0s"},
		{"Century", "876000h", true, clock.MaxOffset, "clock offset +876000h0m0s"},
		{"CenturyBack", "-876000h", true, -clock.MaxOffset, "clock offset -876000h0m0s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := clock.FromEnv(env(tc.value, tc.set))
			if err != nil {
				t.Fatal(err)
			}
			if c.Offset() != tc.offset || c.String() != tc.banner || c.Shifted() != (tc.offset != 0) {
				t.Fatalf("offset %v %q shifted %v, want %v %q", c.Offset(), c.String(), c.Shifted(), tc.offset, tc.banner)
			}
		})
	}
}

func TestFromEnvRefuses(t *testing.T) {
	for _, tc := range []struct{ name, value, says string }{
		{"NoUnit", "36", "not a Go duration"},
		{"Days", "2d", "not a Go duration"},
		{"Words", "tomorrow", "not a Go duration"},
		{"Garbage", "1h-", "not a Go duration"},
		{"BeyondCentury", "876001h", "at most"},
		{"BeyondCenturyBack", "-876001h", "at most"},
		{"Overflow", "99999999999h", "not a Go duration"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := clock.FromEnv(env(tc.value, true))
			if err == nil {
				t.Fatalf("%q accepted", tc.value)
			}
			msg := err.Error()
			if !strings.Contains(msg, clock.EnvOffset) || !strings.Contains(msg, tc.says) || !strings.Contains(msg, tc.value) {
				t.Fatalf("error %q must name %s, the value and say %q", msg, clock.EnvOffset, tc.says)
			}
		})
	}
}

func TestNowIsShiftedRealTime(t *testing.T) {
	real := time.Date(2026, 11, 30, 23, 59, 0, 0, time.UTC)
	c := clock.New(36 * time.Hour).WithReal(func() time.Time { return real })
	if got, want := c.Now(), real.Add(36*time.Hour); !got.Equal(want) {
		t.Fatalf("Now %v, want %v", got, want)
	}
	var seam clock.Func = c.Now // what server hands the stores and the limiter
	if got := seam(); !got.Equal(real.Add(36 * time.Hour)) {
		t.Fatalf("seam %v", got)
	}
}

func TestNowTracksTheWallClock(t *testing.T) {
	c := clock.New(-48 * time.Hour)
	before := time.Now()
	now := c.Now()
	after := time.Now()
	if now.Before(before.Add(-48*time.Hour)) || now.After(after.Add(-48*time.Hour)) {
		t.Fatalf("Now %v not within [%v, %v] shifted by -48h", now, before, after)
	}
	var zero clock.Clock
	if got := zero.Now(); got.Before(before) {
		t.Fatalf("zero clock %v before real time %v", got, before)
	}
}
