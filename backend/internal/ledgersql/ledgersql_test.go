package ledgersql

import (
	"math"
	"testing"
	"time"
)

func TestDollar(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"SELECT 1", "SELECT 1"},
		{"WHERE a = ? AND b = ?", "WHERE a = $1 AND b = $2"},
		{QuotaUsage, "SELECT usage_units, held_units FROM quota_days\n\tWHERE upstream = $1 AND model = $2 AND day = $3"},
	} {
		if got := Dollar(c.in); got != c.want {
			t.Errorf("Dollar(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestTimes(t *testing.T) {
	at := time.Date(2026, 12, 2, 5, 0, 0, 500, time.UTC)
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"FromNanos(Nanos)", FromNanos(Nanos(at)), at},
		{"FromNanosOrZero(0)", FromNanosOrZero(0), time.Time{}},
		{"FromNanosOrZero(n)", FromNanosOrZero(Nanos(at)), at},
		{"NanosOrMin(zero)", NanosOrMin(time.Time{}), int64(math.MinInt64)},
		{"CeilUnix(whole second)", CeilUnix(at.Truncate(time.Second)), at.Unix()},
		{"CeilUnix(fraction)", CeilUnix(at), at.Unix() + 1},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}
