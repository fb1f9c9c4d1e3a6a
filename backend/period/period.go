package period

import (
	"fmt"
	"time"
)

// Kind is how long a budget's period lasts.
type Kind string

const (
	None  Kind = "none" // the budget never renews (the default)
	Day   Kind = "day"
	Week  Kind = "week"
	Month Kind = "month"
)

// Calendar cuts time into one tenant's periods. The zero Calendar is None.
type Calendar struct {
	Kind Kind // from ParseKind: At panics on a kind it does not know
	// Zone is the tenant's time zone (PickZone); nil is the machine's.
	Zone *time.Location
	// WeekStarts is the first day of a Week period (time.Monday from config).
	WeekStarts time.Weekday
}

// Period is one stretch of a budget's time. A None period is the zero
// Period: no label and no bounds, as a budget that never renews has.
type Period struct {
	// Label names the period: "2026-12-01", "2026-W49", "2026-12".
	Label string
	// Start is the period's first instant, End the next period's first:
	// Start <= t < End for every t in it. Both are in the calendar's zone,
	// so that RFC 3339 shows the tenant's wall clock.
	Start, End time.Time
}

// Bounded reports whether p is a period with bounds (not None's).
func (p Period) Bounded() bool { return p.Label != "" }

// At returns the period holding t.
func (c Calendar) At(t time.Time) Period {
	if c.Kind == None || c.Kind == "" {
		return Period{}
	}
	t = t.In(c.zone())
	sp := c.spanOf(t)
	return Period{Label: c.label(sp), Start: c.start(t, sp), End: c.end(t, sp)}
}

// Next returns the period after p (p bounded).
func (c Calendar) Next(p Period) Period { return c.At(p.End) }

// Previous returns the period before p (p bounded), for a history of spend.
func (c Calendar) Previous(p Period) Period { return c.At(p.Start.Add(-time.Nanosecond)) }

func (c Calendar) zone() *time.Location {
	if c.Zone == nil {
		return time.Local
	}
	return c.Zone
}

// span is a period as wall-clock times: [from, to) as times in UTC whose
// fields are the zone's wall clock, free of the zone's transitions.
type span struct{ from, to time.Time }

// wall returns t's wall clock as a time in UTC with the same fields.
func wall(t time.Time) time.Time {
	_, offset := t.Zone()
	return t.UTC().Add(time.Duration(offset) * time.Second)
}

// instant returns the instant at which a clock offset from UTC by the
// zone in effect at u shows the wall time w.
func instant(w, u time.Time) time.Time {
	_, offset := u.Zone()
	return w.Add(-time.Duration(offset) * time.Second).In(u.Location())
}

func (c Calendar) spanOf(t time.Time) span {
	w := wall(t)
	y, m, d := w.Date()
	switch c.Kind {
	case Day:
		from := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
		return span{from, from.AddDate(0, 0, 1)}
	case Week:
		back := (int(w.Weekday()) - int(c.WeekStarts) + 7) % 7
		from := time.Date(y, m, d-back, 0, 0, 0, 0, time.UTC)
		return span{from, from.AddDate(0, 0, 7)}
	case Month:
		from := time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
		return span{from, from.AddDate(0, 1, 0)}
	}
	panic(fmt.Sprintf("period: unknown kind %q", c.Kind))
}

func (c Calendar) label(sp span) string {
	switch c.Kind {
	case Day:
		return sp.from.Format("2006-01-02")
	case Week:
		year, week := sp.from.AddDate(0, 0, 3).ISOWeek() // the middle day names the week (doc.go)
		return fmt.Sprintf("%04d-W%02d", year, week)
	}
	return sp.from.Format("2006-01")
}

// start walks back from t over the zone's transitions to the first instant
// of the unbroken stretch whose wall clock is in sp. Inside one zone offset
// the wall clock runs with real time, so the stretch starts either where
// that offset's clock shows sp.from, or at the transition into the offset
// when the clock before it showed another period (a skipped midnight) —
// or, when it showed this one too (clocks set back), further back.
func (c Calendar) start(t time.Time, sp span) time.Time {
	for u := t; ; {
		zoneStart, _ := u.ZoneBounds()
		at := instant(sp.from, u)
		if zoneStart.IsZero() || at.After(zoneStart) {
			return at
		}
		before := zoneStart.Add(-time.Nanosecond)
		if !c.spanOf(before).from.Equal(sp.from) {
			return zoneStart
		}
		u = before
	}
}

// end walks forward from t the same way to the first instant after the
// stretch: where the offset's clock shows sp.to, or the transition out of
// the offset when the clock after it shows another period.
func (c Calendar) end(t time.Time, sp span) time.Time {
	for u := t; ; {
		_, zoneEnd := u.ZoneBounds()
		at := instant(sp.to, u)
		if zoneEnd.IsZero() || at.Before(zoneEnd) {
			return at
		}
		if !c.spanOf(zoneEnd).from.Equal(sp.from) {
			return zoneEnd
		}
		u = zoneEnd
	}
}
