package period_test

import (
	"regexp"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/period"
)

// zones are the fuzz target's and the walk's: ordinary ones, far ones,
// half-hour and 45-minute offsets, half-hour shifts, skipped midnights,
// midnight fall-backs, a skipped day, and a day lived twice (Alaska, 1867).
var zones = []string{
	"UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "America/Santiago",
	"Asia/Beirut", "America/Havana", "America/Sao_Paulo", "Pacific/Apia", "Pacific/Kiritimati",
	"Pacific/Chatham", "Asia/Kathmandu", "Asia/Tehran", "Africa/Casablanca", "America/Juneau",
	"Pacific/Kwajalein", "Antarctica/Troll", "Asia/Shanghai",
}

var kinds = []period.Kind{period.Day, period.Week, period.Month}

var labelShape = map[period.Kind]*regexp.Regexp{
	period.Day:   regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`),
	period.Week:  regexp.MustCompile(`^\d{4}-W(0[1-9]|[1-4]\d|5[0-3])$`),
	period.Month: regexp.MustCompile(`^\d{4}-\d{2}$`),
}

// checkPeriod asserts what every period must be around t: it holds t, it
// is the period of each of its ends' inner instants, and it abuts the
// periods before and after it.
func checkPeriod(t *testing.T, c period.Calendar, instant time.Time, inside uint64) period.Period {
	t.Helper()
	p := c.At(instant)
	if p.Start.After(instant) || !instant.Before(p.End) {
		t.Fatalf("%s %s: At(%s) = %s [%s, %s) does not hold it", c.Zone, c.Kind, instant, p.Label, p.Start, p.End)
	}
	if !labelShape[c.Kind].MatchString(p.Label) {
		t.Fatalf("%s %s: label %q", c.Zone, c.Kind, p.Label)
	}
	span := p.End.Sub(p.Start)
	other := p.Start.Add(time.Duration(inside % uint64(span)))
	for _, in := range []time.Time{p.Start, p.End.Add(-time.Nanosecond), other} {
		if q := c.At(in); q != p {
			t.Fatalf("%s %s: At(%s) = %+v, want %+v (a label is stable within its period)", c.Zone, c.Kind, in, q, p)
		}
	}
	if next := c.At(p.End); !next.Start.Equal(p.End) {
		t.Fatalf("%s %s: the period after %+v starts at %s, not at its end", c.Zone, c.Kind, p, next.Start)
	}
	if prev := c.At(p.Start.Add(-time.Nanosecond)); !prev.End.Equal(p.Start) {
		t.Fatalf("%s %s: the period before %+v ends at %s, not at its start", c.Zone, c.Kind, p, prev.End)
	}
	return p
}

func FuzzAt(f *testing.F) {
	f.Add(int64(1796083200), uint32(0), uint8(4), uint8(0), uint8(1), uint64(7))       // Santiago, 2026-12
	f.Add(int64(1788660000), uint32(1), uint8(4), uint8(0), uint8(1), uint64(0))       // Santiago's skipped midnight
	f.Add(int64(1774746000), uint32(0), uint8(1), uint8(0), uint8(1), uint64(1<<40))   // Berlin's spring forward
	f.Add(int64(1325152800), uint32(0), uint8(8), uint8(0), uint8(1), uint64(99))      // Apia's skipped day
	f.Add(int64(-3225312000), uint32(0), uint8(14), uint8(0), uint8(0), uint64(12345)) // Juneau, October 1867
	f.Add(int64(1798675200), uint32(5), uint8(0), uint8(1), uint8(0), uint64(3))       // a Sunday week across 2027
	zonesLoaded := make([]*time.Location, len(zones))
	for i, name := range zones {
		zonesLoaded[i] = zone(f, name)
	}
	const from, years = -5364662400, 600 // 1800-01-01, to 2400
	f.Fuzz(func(t *testing.T, sec int64, nsec uint32, z, k, wd uint8, inside uint64) {
		sec = from + int64(uint64(sec)%uint64(years*365*86400))
		c := period.Calendar{
			Kind:       kinds[int(k)%len(kinds)],
			Zone:       zonesLoaded[int(z)%len(zonesLoaded)],
			WeekStarts: time.Weekday(wd % 7),
		}
		checkPeriod(t, c, time.Unix(sec, int64(nsec%1e9)), inside)
	})
}

// TestWalk steps period by period through seven decades in every zone and
// kind: no period is empty, each starts where the last ended, and none
// repeats a label.
func TestWalk(t *testing.T) {
	if testing.Short() {
		t.Skip("walks 70 years of periods in every zone")
	}
	for _, name := range zones {
		loc := zone(t, name)
		for _, kind := range kinds {
			c := period.Calendar{Kind: kind, Zone: loc, WeekStarts: time.Weekday(len(name) % 7)}
			seen := map[string]bool{}
			p := c.At(time.Date(1970, 1, 1, 12, 0, 0, 0, time.UTC))
			for p.Start.Year() < 2040 {
				if !p.End.After(p.Start) || seen[p.Label] {
					t.Fatalf("%s %s: period %+v empty or its label repeated", name, kind, p)
				}
				seen[p.Label] = true
				next := c.Next(p)
				if !next.Start.Equal(p.End) {
					t.Fatalf("%s %s: %+v then %+v", name, kind, p, next)
				}
				p = next
			}
		}
	}
}
