// Package clock is the gateway's one reading of the time: real time shifted
// by QUOTAGATE_CLOCK_OFFSET, so that a test or a demo can cross a period's
// boundary, a quota day or a rate window within seconds, from outside the
// process, without anything else behaving differently.
//
// Every part of the gateway that reads the time takes a Func (the shape the
// stores, the rate limiter and the quota guard already take as their Now);
// server passes Clock.Now to each, so that one offset shifts them all.
package clock

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// EnvOffset names the environment variable holding the offset, a Go
// duration ("36h", "-90m", "2h30m").
const EnvOffset = "QUOTAGATE_CLOCK_OFFSET"

// MaxOffset bounds the offset either way: a century is more than any test
// or demo needs, and keeps every shifted time inside the years that Unix
// nanoseconds, RFC 3339 and the stores represent (up to 2262).
const MaxOffset = 100 * 365 * 24 * time.Hour

// Func is the seam the rest of the gateway takes: it answers the current
// time.
type Func func() time.Time

// Clock is real time shifted by Offset. The zero Clock is real time.
type Clock struct {
	offset time.Duration
	real   Func // time.Now when nil; a test's own time otherwise
}

// New returns the clock offset from real time by offset.
func New(offset time.Duration) Clock { return Clock{offset: offset} }

// FromEnv reads EnvOffset through lookup (os.LookupEnv in the gateway): an
// unset or empty variable is real time, anything else must be a Go
// duration within MaxOffset either way; an error names the variable.
func FromEnv(lookup func(string) (string, bool)) (Clock, error) {
	raw, _ := lookup(EnvOffset)
	offset, err := ParseOffset(raw)
	if err != nil {
		return Clock{}, err
	}
	return New(offset), nil
}

// ParseOffset reads an offset written as a Go duration; "" is none. Its
// error names EnvOffset, where the value comes from.
func ParseOffset(raw string) (time.Duration, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(raw)
	if err != nil {
		return 0, fmt.Errorf("%s=%q: not a Go duration (write it like 36h, -90m or 2h30m; units ns, us, ms, s, m, h)", EnvOffset, raw)
	}
	if d > MaxOffset || d < -MaxOffset {
		return 0, fmt.Errorf("%s=%q: at most %v either way", EnvOffset, raw, MaxOffset)
	}
	return d, nil
}

// WithReal returns c reading real from now on instead of time.Now: a test
// moves its own real time and keeps the offset.
func (c Clock) WithReal(real Func) Clock {
	c.real = real
	return c
}

// Now is the shifted time. It keeps time.Now's monotonic reading (shifted
// alike), so durations measured between two readings stay right.
func (c Clock) Now() time.Time {
	if c.real == nil {
		return time.Now().Add(c.offset)
	}
	return c.real().Add(c.offset)
}

// Offset is how far the clock runs from real time.
func (c Clock) Offset() time.Duration { return c.offset }

// Shifted reports whether the clock runs off real time.
func (c Clock) Shifted() bool { return c.offset != 0 }

// String is the start banner's line: "clock offset +36h0m0s",
// "clock offset -1h30m0s", or "clock offset none (real time)".
func (c Clock) String() string {
	switch {
	case c.offset > 0:
		return "clock offset +" + c.offset.String()
	case c.offset < 0:
		return "clock offset " + c.offset.String()
	}
	return "clock offset none (real time)"
}

// Sleep waits d, or until ctx ends: false when ctx ended first or had
// ended already. A d of zero or less does not wait. A wait is the same on
// every clock, shifted or not.
func Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
