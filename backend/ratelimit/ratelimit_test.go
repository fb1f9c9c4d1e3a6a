package ratelimit_test

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/ratelimit"
)

// clock is a hand-driven clock for Options.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 10, 14, 9, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

// set moves the clock to t.
func (c *clock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

func newLimiter(t *testing.T, lim ratelimit.Limits) (*ratelimit.Limiter, *clock, time.Time) {
	t.Helper()
	c := newClock()
	l := ratelimit.New(ratelimit.Options{Now: c.Now})
	l.SetLimits("alice", lim)
	return l, c, c.Now()
}

// wantAllow calls Allow at start+at and checks the verdict and Retry-After.
func wantAllow(t *testing.T, l *ratelimit.Limiter, c *clock, start time.Time, at time.Duration, ok bool, retry time.Duration) {
	t.Helper()
	c.set(start.Add(at))
	gotRetry, gotOK := l.Allow("alice")
	if gotOK != ok || gotRetry != retry {
		t.Fatalf("Allow at +%v = (%v, %v), want (%v, %v)", at, gotRetry, gotOK, retry, ok)
	}
}

// Seed 003, product answer: consult is 10/minute + 120/hour.
func TestMinuteWindow_TenthPassesEleventhRefused(t *testing.T) {
	l, c, start := newLimiter(t, ratelimit.Limits{PerMinute: 10, PerHour: 120})
	for i := range 10 {
		wantAllow(t, l, c, start, time.Duration(i)*time.Second, true, 0) // calls 1..10 at +0s..+9s
	}
	// The 11th at +9.5s: the first call (+0s) ages out at +60s → 50.5 s → 51.
	wantAllow(t, l, c, start, 9500*time.Millisecond, false, 51*time.Second)
	// Still refused a hair before +60s, with the one second that is left.
	wantAllow(t, l, c, start, 60*time.Second-time.Millisecond, false, time.Second)
	// At +60s exactly the first stamp no longer counts.
	wantAllow(t, l, c, start, 60*time.Second, true, 0)
	// Full again; the next slot opens when the +1s call ages out at +61s.
	wantAllow(t, l, c, start, 60*time.Second, false, time.Second)
	wantAllow(t, l, c, start, 61*time.Second, true, 0)
}

func TestHourWindow_RefusesWhenMinuteWouldPass(t *testing.T) {
	l, c, start := newLimiter(t, ratelimit.Limits{PerMinute: 10, PerHour: 120})
	// 120 calls 7 s apart: at most 9 in any minute, so the minute window never refuses.
	for i := range 120 {
		wantAllow(t, l, c, start, time.Duration(i)*7*time.Second, true, 0)
	}
	last := 119 * 7 * time.Second // +833s
	// 121st call at +840s: the minute window holds 8 calls and would admit; the
	// hour window is full until the +0s call ages out at +3600s.
	if st := l.State()[0]; st.LastMinute >= 10 || st.LastHour != 120 {
		t.Fatalf("state before the 121st call = %+v, want last_minute < 10 and last_hour 120", st)
	}
	wantAllow(t, l, c, start, last+7*time.Second, false, (3600-840)*time.Second)
	wantAllow(t, l, c, start, time.Hour-time.Nanosecond, false, time.Second)
	wantAllow(t, l, c, start, time.Hour, true, 0)
}

// Retry-After is the wait until BOTH windows admit: the later reopening.
func TestRetryAfter_LaterOfBothWindows(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name  string
		lim   ratelimit.Limits
		calls []time.Duration // admitted calls, offsets from start
		at    time.Duration
		want  time.Duration
	}{
		{
			name:  "hour dominates",
			lim:   ratelimit.Limits{PerMinute: 2, PerHour: 3},
			calls: []time.Duration{0, 1000 * time.Second, 1001 * time.Second},
			at:    1001*time.Second + 500*ms, // minute reopens at 1060 s, hour at 3600 s
			want:  2599 * time.Second,        // ceil(3600 − 1001.5)
		},
		{
			name:  "minute dominates",
			lim:   ratelimit.Limits{PerMinute: 2, PerHour: 3},
			calls: []time.Duration{0, 3599500 * ms, 3599700 * ms},
			at:    3599900 * ms, // hour reopens at 3600 s, minute at 3659.5 s
			want:  60 * time.Second,
		},
		{
			name:  "minute dominates after hour reopened",
			lim:   ratelimit.Limits{PerMinute: 2, PerHour: 3},
			calls: []time.Duration{0, 3599500 * ms, 3599700 * ms},
			at:    3600 * time.Second, // hour has room again; minute still full until 3659.5 s
			want:  60 * time.Second,   // ceil(59.5)
		},
		{
			name:  "minute only",
			lim:   ratelimit.Limits{PerMinute: 1},
			calls: []time.Duration{0},
			at:    59*time.Second + 1*ms,
			want:  time.Second, // 0.999 s rounds up to 1
		},
		{
			name:  "hour only",
			lim:   ratelimit.Limits{PerHour: 1},
			calls: []time.Duration{10 * time.Second},
			at:    11 * time.Second,
			want:  3599 * time.Second,
		},
		{
			name:  "whole seconds stay whole",
			lim:   ratelimit.Limits{PerMinute: 1},
			calls: []time.Duration{0},
			at:    30 * time.Second,
			want:  30 * time.Second,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, c, start := newLimiter(t, tt.lim)
			for _, at := range tt.calls {
				wantAllow(t, l, c, start, at, true, 0)
			}
			wantAllow(t, l, c, start, tt.at, false, tt.want)
		})
	}
}

func TestRefusedCallsConsumeNothing(t *testing.T) {
	l, c, start := newLimiter(t, ratelimit.Limits{PerMinute: 3})
	for range 3 {
		wantAllow(t, l, c, start, 0, true, 0)
	}
	// Hammer the closed window: every refusal names the same reopening.
	for i := 1; i < 60; i++ {
		wantAllow(t, l, c, start, time.Duration(i)*time.Second, false, time.Duration(60-i)*time.Second)
	}
	for range 3 {
		wantAllow(t, l, c, start, time.Minute, true, 0)
	}
	st := l.State()[0]
	if st.Admitted != 6 || st.Refused != 59 || st.LastMinute != 3 {
		t.Fatalf("state = %+v, want admitted 6, refused 59, last_minute 3", st)
	}
}

func TestUnlimitedTenants(t *testing.T) {
	l, c, start := newLimiter(t, ratelimit.Limits{})
	for i := range 1000 {
		wantAllow(t, l, c, start, time.Duration(i)*time.Millisecond, true, 0)
	}
	if n := len(l.State()); n != 0 {
		t.Fatalf("an unlimited tenant kept state: %d entries", n)
	}
	if _, ok := l.Allow("never-configured"); !ok {
		t.Fatal("an unknown tenant was refused; limits apply only to configured tenants")
	}
}

func TestReplaceForgetsAndLowers(t *testing.T) {
	c := newClock()
	l := ratelimit.New(ratelimit.Options{Now: c.Now})
	l.Replace(map[string]ratelimit.Limits{"a": {PerMinute: 5}, "b": {PerMinute: 1}})
	for range 5 {
		if _, ok := l.Allow("a"); !ok {
			t.Fatal("a refused within its limit")
		}
	}
	l.Allow("b")
	// Lower a to 2: it made 5 calls this minute, so it stays refused; b is forgotten.
	l.Replace(map[string]ratelimit.Limits{"a": {PerMinute: 2}})
	if retry, ok := l.Allow("a"); ok || retry != time.Minute {
		t.Fatalf("a after lowering = (%v, %v), want refused for 60 s", retry, ok)
	}
	if _, ok := l.Allow("b"); !ok {
		t.Fatal("b still limited after being removed from the config")
	}
	st := l.State()
	if len(st) != 1 || st[0].Tenant != "a" || st[0].LastMinute != 2 {
		t.Fatalf("state = %+v, want only a with the 2 newest stamps kept", st)
	}
}

func TestRefusalError(t *testing.T) {
	err := error(ratelimit.Refusal("alice", 51*time.Second))
	var e *ledger.Error
	if !errors.As(err, &e) || e.Code != ledger.CodeRateLimited || ledger.RetryAfter(err) != 51*time.Second {
		t.Fatalf("Refusal = %#v, want rate_limited with Retry-After 51 s", err)
	}
	if want := "tenant alice has made too many requests; try again in 51 s"; e.Message != want {
		t.Fatalf("message %q, want %q", e.Message, want)
	}
}

// Under -race: many goroutines on one tenant at a frozen instant admit
// exactly the limit, never more.
func TestConcurrentAllowAdmitsExactlyTheLimit(t *testing.T) {
	l, _, _ := newLimiter(t, ratelimit.Limits{PerMinute: 100, PerHour: 150})
	var admitted, refused atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for g := range 16 {
		wg.Go(func() {
			<-start
			for range 50 {
				if _, ok := l.Allow("alice"); ok {
					admitted.Add(1)
				} else {
					refused.Add(1)
				}
				if g%4 == 0 {
					l.State() // readers race with writers too
				}
			}
		})
	}
	close(start)
	wg.Wait()
	if admitted.Load() != 100 || refused.Load() != 700 {
		t.Fatalf("admitted %d refused %d, want 100 and 700", admitted.Load(), refused.Load())
	}
}

func TestManyTenantsConcurrently(t *testing.T) {
	c := newClock()
	l := ratelimit.New(ratelimit.Options{Now: c.Now})
	for i := range 8 {
		l.SetLimits(fmt.Sprint("t", i), ratelimit.Limits{PerMinute: 10})
	}
	var wg sync.WaitGroup
	var admitted [8]atomic.Int64
	for g := range 32 {
		wg.Go(func() {
			id := g % 8
			for range 20 {
				if _, ok := l.Allow(fmt.Sprint("t", id)); ok {
					admitted[id].Add(1)
				}
			}
			if g == 0 {
				l.SetLimits("t7", ratelimit.Limits{PerMinute: 10}) // reconfigure mid-flight
			}
		})
	}
	wg.Wait()
	for i := range admitted {
		if n := admitted[i].Load(); n != 10 {
			t.Errorf("tenant t%d admitted %d, want 10", i, n)
		}
	}
}
