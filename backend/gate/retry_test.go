package gate_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/gate"
)

func TestRetryPolicyNext(t *testing.T) {
	now := time.Date(2026, 10, 14, 9, 0, 0, 0, time.UTC)
	p := gate.DefaultRetryPolicy
	p.Now = func() time.Time { return now }
	httpDate := func(d time.Duration) string { return now.Add(d).Format(http.TimeFormat) }
	s := time.Second

	tests := []struct {
		name     string
		attempt  int
		status   int
		header   string
		elapsed  time.Duration
		wantWait time.Duration
		wantOK   bool
	}{
		{"429 with seconds", 1, 429, "2", 0, 2 * s, true},
		{"503 with seconds", 1, 503, "3", 4 * s, 3 * s, true},
		{"second retry allowed", 2, 429, "1", 5 * s, 1 * s, true},
		{"third retry refused: three 429s fail", 3, 429, "1", 6 * s, 0, false},
		{"HTTP-date", 1, 429, httpDate(5 * s), 0, 5 * s, true},
		{"HTTP-date RFC 850", 1, 503, now.Add(4 * s).Format(time.RFC850), 0, 4 * s, true},
		{"HTTP-date ANSI C", 1, 503, now.Add(6 * s).Format(time.ANSIC), 0, 6 * s, true},
		{"HTTP-date in the past means now", 1, 429, httpDate(-time.Hour), 0, 0, true},
		{"zero seconds", 1, 429, "0", 0, 0, true},
		{"no header: backoff 1 s", 1, 429, "", 0, 1 * s, true},
		{"no header: backoff doubles", 2, 503, "", 2 * s, 2 * s, true},
		{"malformed header: backoff", 1, 429, "soon", 0, 1 * s, true},
		{"negative seconds are malformed", 1, 429, "-5", 0, 1 * s, true},
		{"fraction is malformed", 1, 429, "1.5", 0, 1 * s, true},
		{"whitespace tolerated", 1, 429, " 4 ", 0, 4 * s, true},
		{"exactly 15 s in all is allowed", 1, 429, "10", 5 * s, 10 * s, true},
		{"past 15 s in all: give up now", 1, 429, "11", 5 * s, 0, false},
		{"huge Retry-After", 1, 429, "86400", 0, 0, false},
		{"overflowing Retry-After", 1, 429, "99999999999999999999999", 0, 0, false},
		{"far HTTP-date", 1, 429, httpDate(time.Hour), 0, 0, false},
		{"elapsed already over", 1, 429, "0", 16 * s, 0, false},
		{"500 is not retried", 1, 500, "1", 0, 0, false},
		{"502 is not retried", 1, 502, "1", 0, 0, false},
		{"400 is not retried", 1, 400, "", 0, 0, false},
		{"attempt 0 is a caller bug", 0, 429, "1", 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wait, ok := p.Next(tt.attempt, tt.status, tt.header, tt.elapsed)
			if wait != tt.wantWait || ok != tt.wantOK {
				t.Fatalf("Next(%d, %d, %q, %v) = (%v, %v), want (%v, %v)",
					tt.attempt, tt.status, tt.header, tt.elapsed, wait, ok, tt.wantWait, tt.wantOK)
			}
		})
	}
}

func TestRetryPolicyZeroValueNeverRetries(t *testing.T) {
	if _, ok := (gate.RetryPolicy{}).Next(1, 429, "1", 0); ok {
		t.Fatal("the zero RetryPolicy retried")
	}
}

// The loop a caller writes: the policy ends it within 2 retries and 15 s
// whatever the upstream says.
func TestRetryPolicyBoundsALoop(t *testing.T) {
	for _, header := range []string{"", "0", "1", "5", "7", "14", "15"} {
		p := gate.DefaultRetryPolicy
		var elapsed time.Duration
		attempts := 1
		for {
			wait, ok := p.Next(attempts, 429, header, elapsed)
			if !ok {
				break
			}
			elapsed += wait + 100*time.Millisecond // the wait plus the next attempt's own time
			attempts++
		}
		if attempts > 3 || elapsed > 15*time.Second+100*time.Millisecond {
			t.Fatalf("Retry-After %q: %d attempts over %v", header, attempts, elapsed)
		}
	}
}

func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"", "0", "120", "Wed, 21 Oct 2015 07:28:00 GMT", "Sunday, 06-Nov-94 08:49:37 GMT",
		"Sun Nov  6 08:49:37 1994", "-1", "1e3", "18446744073709551616", " 3", "٣"} {
		f.Add(s)
	}
	now := time.Date(2026, 10, 14, 9, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		d, ok := gate.ParseRetryAfter(v, now)
		if d < 0 || d > 24*time.Hour || (!ok && d != 0) {
			t.Fatalf("ParseRetryAfter(%q) = (%v, %v)", v, d, ok)
		}
		wait, ok := gate.DefaultRetryPolicy.Next(1, 429, v, 0)
		if ok && (wait < 0 || wait > 15*time.Second) {
			t.Fatalf("Next with %q waits %v", v, wait)
		}
	})
}
