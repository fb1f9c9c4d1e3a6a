package period_test

import (
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/period"
)

func zone(tb testing.TB, name string) *time.Location {
	tb.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		tb.Fatal(err)
	}
	return loc
}

// at parses an RFC 3339 instant.
func at(tb testing.TB, s string) time.Time {
	tb.Helper()
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		tb.Fatal(err)
	}
	return t
}

func TestAt(t *testing.T) {
	for _, tc := range []struct {
		name, zone string
		kind       period.Kind
		weekStarts time.Weekday
		t          string
		label      string
		start, end string
	}{
		{"DayUTC", "UTC", period.Day, time.Monday, "2026-12-01T13:00:00Z", "2026-12-01", "2026-12-01T00:00:00Z", "2026-12-02T00:00:00Z"},
		{"DayFarZone", "Pacific/Kiritimati", period.Day, time.Monday, "2026-11-30T10:00:00Z", "2026-12-01", "2026-12-01T00:00:00+14:00", "2026-12-02T00:00:00+14:00"},
		{"DayLastNanosecond", "Europe/Berlin", period.Day, time.Monday, "2026-12-01T22:59:59.999999999Z", "2026-12-01", "2026-12-01T00:00:00+01:00", "2026-12-02T00:00:00+01:00"},
		{"DayFirstInstant", "Europe/Berlin", period.Day, time.Monday, "2026-12-01T23:00:00Z", "2026-12-02", "2026-12-02T00:00:00+01:00", "2026-12-03T00:00:00+01:00"},
		{"WeekISO", "Europe/Berlin", period.Week, time.Monday, "2026-12-01T12:00:00Z", "2026-W49", "2026-11-30T00:00:00+01:00", "2026-12-07T00:00:00+01:00"},
		{"WeekSundayToMonday", "Asia/Tokyo", period.Week, time.Monday, "2026-12-06T14:59:59Z", "2026-W49", "2026-11-30T00:00:00+09:00", "2026-12-07T00:00:00+09:00"},
		{"WeekMondayStarts", "Asia/Tokyo", period.Week, time.Monday, "2026-12-06T15:00:00Z", "2026-W50", "2026-12-07T00:00:00+09:00", "2026-12-14T00:00:00+09:00"},
		// ISO week-years at the turn of a year.
		{"WeekYear2026W53", "UTC", period.Week, time.Monday, "2026-12-31T12:00:00Z", "2026-W53", "2026-12-28T00:00:00Z", "2027-01-04T00:00:00Z"},
		{"WeekYearJan1In2026", "UTC", period.Week, time.Monday, "2027-01-03T23:59:59Z", "2026-W53", "2026-12-28T00:00:00Z", "2027-01-04T00:00:00Z"},
		{"WeekYear2027W01", "UTC", period.Week, time.Monday, "2027-01-04T00:00:00Z", "2027-W01", "2027-01-04T00:00:00Z", "2027-01-11T00:00:00Z"},
		{"WeekYearDec30In2025", "UTC", period.Week, time.Monday, "2024-12-30T00:00:00Z", "2025-W01", "2024-12-30T00:00:00Z", "2025-01-06T00:00:00Z"},
		{"WeekYear2020W53", "UTC", period.Week, time.Monday, "2021-01-03T10:00:00Z", "2020-W53", "2020-12-28T00:00:00Z", "2021-01-04T00:00:00Z"},
		// Other week starts take the name of the ISO week holding their middle day.
		{"WeekSunday", "America/New_York", period.Week, time.Sunday, "2026-12-06T12:00:00Z", "2026-W50", "2026-12-06T00:00:00-05:00", "2026-12-13T00:00:00-05:00"},
		{"WeekSundaySaturdayNight", "America/New_York", period.Week, time.Sunday, "2026-12-13T04:59:59Z", "2026-W50", "2026-12-06T00:00:00-05:00", "2026-12-13T00:00:00-05:00"},
		{"WeekSundayAcrossTheYear", "UTC", period.Week, time.Sunday, "2027-01-01T00:00:00Z", "2026-W53", "2026-12-27T00:00:00Z", "2027-01-03T00:00:00Z"},
		{"WeekSundayFirstOf2027", "UTC", period.Week, time.Sunday, "2027-01-03T00:00:00Z", "2027-W01", "2027-01-03T00:00:00Z", "2027-01-10T00:00:00Z"},
		{"WeekThursdayFourDaysIn2026", "UTC", period.Week, time.Thursday, "2027-01-06T00:00:00Z", "2026-W53", "2026-12-31T00:00:00Z", "2027-01-07T00:00:00Z"},
		{"WeekFridayFourDaysIn2027", "UTC", period.Week, time.Friday, "2027-01-01T00:00:00Z", "2027-W01", "2027-01-01T00:00:00Z", "2027-01-08T00:00:00Z"},
		{"WeekSaturday", "UTC", period.Week, time.Saturday, "2026-12-01T00:00:00Z", "2026-W49", "2026-11-28T00:00:00Z", "2026-12-05T00:00:00Z"},
		// Months by the calendar.
		{"MonthDecember", "Europe/Berlin", period.Month, time.Monday, "2026-12-01T00:00:00+01:00", "2026-12", "2026-12-01T00:00:00+01:00", "2027-01-01T00:00:00+01:00"},
		{"MonthJanuary31", "UTC", period.Month, time.Monday, "2026-01-31T23:59:59Z", "2026-01", "2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z"},
		{"MonthFebruary", "UTC", period.Month, time.Monday, "2026-02-01T00:00:00Z", "2026-02", "2026-02-01T00:00:00Z", "2026-03-01T00:00:00Z"},
		{"MonthLeapFebruary", "UTC", period.Month, time.Monday, "2028-02-29T12:00:00Z", "2028-02", "2028-02-01T00:00:00Z", "2028-03-01T00:00:00Z"},
		{"MonthAcrossDST", "Europe/Berlin", period.Month, time.Monday, "2026-03-15T00:00:00Z", "2026-03", "2026-03-01T00:00:00+01:00", "2026-04-01T00:00:00+02:00"},
		{"MonthEndFarZone", "Pacific/Auckland", period.Month, time.Monday, "2026-11-30T10:59:59Z", "2026-11", "2026-11-01T00:00:00+13:00", "2026-12-01T00:00:00+13:00"},
		{"MonthStartFarZone", "Pacific/Auckland", period.Month, time.Monday, "2026-11-30T11:00:00Z", "2026-12", "2026-12-01T00:00:00+13:00", "2027-01-01T00:00:00+13:00"},
		// A midnight the zone skips: the day starts at the transition, 01:00.
		{"SantiagoSkipsMidnight", "America/Santiago", period.Day, time.Monday, "2026-09-06T12:00:00Z", "2026-09-06", "2026-09-06T01:00:00-03:00", "2026-09-07T00:00:00-03:00"},
		{"SantiagoEveBefore", "America/Santiago", period.Day, time.Monday, "2026-09-06T03:59:59Z", "2026-09-05", "2026-09-05T00:00:00-04:00", "2026-09-06T01:00:00-03:00"},
		{"BeirutSkipsMidnight", "Asia/Beirut", period.Day, time.Monday, "2026-03-29T12:00:00Z", "2026-03-29", "2026-03-29T01:00:00+03:00", "2026-03-30T00:00:00+03:00"},
		{"HavanaSkipsMidnight", "America/Havana", period.Day, time.Monday, "2026-03-08T12:00:00Z", "2026-03-08", "2026-03-08T01:00:00-04:00", "2026-03-09T00:00:00-04:00"},
		{"SantiagoWeekStartsAtOne", "America/Santiago", period.Week, time.Sunday, "2026-09-08T12:00:00Z", "2026-W37", "2026-09-06T01:00:00-03:00", "2026-09-13T00:00:00-03:00"},
		// Samoa skipped 30 December 2011: the 29th ends where the 31st starts.
		{"ApiaSkippedDay", "Pacific/Apia", period.Day, time.Monday, "2011-12-30T09:59:59Z", "2011-12-29", "2011-12-29T00:00:00-10:00", "2011-12-31T00:00:00+14:00"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := period.Calendar{Kind: tc.kind, Zone: zone(t, tc.zone), WeekStarts: tc.weekStarts}
			p := c.At(at(t, tc.t))
			got := [3]string{p.Label, p.Start.Format(time.RFC3339), p.End.Format(time.RFC3339)}
			if want := [3]string{tc.label, tc.start, tc.end}; got != want {
				t.Fatalf("At(%s) = %q, want %q", tc.t, got, want)
			}
		})
	}
}

func TestDaysLastByTheCalendar(t *testing.T) {
	for _, tc := range []struct {
		name, zone, day string
		kind            period.Kind
		length          time.Duration
	}{
		{"BerlinSpringForward", "Europe/Berlin", "2026-03-29T12:00:00+02:00", period.Day, 23 * time.Hour},
		{"BerlinFallBack", "Europe/Berlin", "2026-10-25T12:00:00+01:00", period.Day, 25 * time.Hour},
		{"BerlinOrdinary", "Europe/Berlin", "2026-10-26T12:00:00+01:00", period.Day, 24 * time.Hour},
		{"NewYorkSpringForward", "America/New_York", "2026-03-08T12:00:00-04:00", period.Day, 23 * time.Hour},
		{"NewYorkFallBack", "America/New_York", "2026-11-01T12:00:00-05:00", period.Day, 25 * time.Hour},
		{"LordHoweHalfHourForward", "Australia/Lord_Howe", "2026-10-04T12:00:00+11:00", period.Day, 23*time.Hour + 30*time.Minute},
		{"LordHoweHalfHourBack", "Australia/Lord_Howe", "2026-04-05T12:00:00+10:30", period.Day, 24*time.Hour + 30*time.Minute},
		{"SantiagoFromOne", "America/Santiago", "2026-09-06T12:00:00-03:00", period.Day, 23 * time.Hour},
		{"BerlinWeekOfSpringForward", "Europe/Berlin", "2026-03-25T12:00:00+01:00", period.Week, 7*24*time.Hour - time.Hour},
		{"BerlinMarch", "Europe/Berlin", "2026-03-25T12:00:00+01:00", period.Month, 31*24*time.Hour - time.Hour},
		{"UTCFebruary2028", "UTC", "2028-02-10T12:00:00Z", period.Month, 29 * 24 * time.Hour},
		{"UTCFebruary2026", "UTC", "2026-02-10T12:00:00Z", period.Month, 28 * 24 * time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := period.Calendar{Kind: tc.kind, Zone: zone(t, tc.zone), WeekStarts: time.Monday}.At(at(t, tc.day))
			if got := p.End.Sub(p.Start); got != tc.length {
				t.Fatalf("%s %s..%s lasts %v, want %v", p.Label, p.Start, p.End, got, tc.length)
			}
		})
	}
}

// TestTimeDateMissesSkippedMidnight pins why Start is not time.Date(y, m, d,
// 0, 0, 0, 0, zone): for a midnight the zone skips, Go answers an instant of
// the evening before, which belongs to the previous day.
func TestTimeDateMissesSkippedMidnight(t *testing.T) {
	santiago := zone(t, "America/Santiago")
	naive := time.Date(2026, 9, 6, 0, 0, 0, 0, santiago)
	if got := naive.Format(time.RFC3339); got != "2026-09-05T23:00:00-04:00" {
		t.Logf("time.Date now answers %s for the skipped midnight (was the evening before)", got)
	}
	p := period.Calendar{Kind: period.Day, Zone: santiago}.At(naive.Add(2 * time.Hour))
	if p.Start.Format(time.RFC3339) != "2026-09-06T01:00:00-03:00" {
		t.Fatalf("start %s, want the transition, 01:00", p.Start)
	}
}

func TestNextAndPrevious(t *testing.T) {
	c := period.Calendar{Kind: period.Month, Zone: zone(t, "America/New_York")}
	jan := c.At(at(t, "2026-01-31T23:59:59-05:00"))
	feb := c.Next(jan)
	if feb.Label != "2026-02" || !feb.Start.Equal(jan.End) || feb.End.Format(time.RFC3339) != "2026-03-01T00:00:00-05:00" {
		t.Fatalf("next of %+v = %+v", jan, feb)
	}
	if back := c.Previous(feb); back != jan {
		t.Fatalf("previous of %+v = %+v, want %+v", feb, back, jan)
	}
}

func TestNoneHasNoBounds(t *testing.T) {
	for _, c := range []period.Calendar{{}, {Kind: period.None, Zone: time.UTC}} {
		if p := c.At(time.Now()); p != (period.Period{}) || p.Bounded() {
			t.Fatalf("%+v.At = %+v, want the zero Period", c, p)
		}
	}
	if p := (period.Calendar{Kind: period.Day}).At(time.Now()); !p.Bounded() || p.Start.Location() != time.Local {
		t.Fatalf("a nil zone is the machine's: %+v", p)
	}
}
