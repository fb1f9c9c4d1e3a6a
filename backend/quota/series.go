package quota

import (
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
)

// Series is a guarded model's settled usage by minute, held as running
// totals so that "usage up to t" costs one index.
type Series struct {
	start time.Time      // first minute (UTC, truncated)
	cum   []ledger.Units // cum[i]: units settled in the i minutes starting at start
}

// NewSeries builds a Series from the ledger's per-minute points (any order
// within a minute is summed; points must be oldest first).
func NewSeries(points []ledger.UsagePoint) *Series {
	s := &Series{}
	for _, p := range points {
		s.Add(p.Minute, p.Units)
	}
	return s
}

// Add records units settled during the minute containing at. Minutes must
// not go backwards by more than the series already holds; earlier minutes
// than the start are ignored (they are before the window the caller asked).
func (s *Series) Add(at time.Time, units ledger.Units) {
	m := at.UTC().Truncate(time.Minute)
	if s.cum == nil {
		s.start = m
		s.cum = []ledger.Units{0}
	}
	i := int(m.Sub(s.start) / time.Minute)
	if i < 0 {
		return
	}
	for len(s.cum) <= i+1 {
		s.cum = append(s.cum, s.cum[len(s.cum)-1])
	}
	for j := i + 1; j < len(s.cum); j++ {
		s.cum[j] += units
	}
}

// Cum is the usage settled in whole minutes that ended at or before t.
// Partial minutes are left out: B0 = balance + usage(t−Δ) then errs low.
func (s *Series) Cum(t time.Time) ledger.Units {
	if s == nil || len(s.cum) == 0 || !t.After(s.start) {
		return 0
	}
	i := int(t.Sub(s.start) / time.Minute)
	if i >= len(s.cum) {
		i = len(s.cum) - 1
	}
	return s.cum[i]
}

// index is the number of whole minutes from the series start to t (may be
// negative or past the end); cumAt(index(t)) == Cum(t).
func (s *Series) index(t time.Time) int {
	if s == nil || len(s.cum) == 0 {
		return 0
	}
	d := t.Sub(s.start)
	i := int(d / time.Minute)
	if d < 0 && d%time.Minute != 0 {
		i-- // floor, not truncation toward zero
	}
	return i
}

// minuteOfStart is the series start in minutes since the Unix epoch.
func (s *Series) minuteOfStart() int {
	if s == nil {
		return 0
	}
	return int(s.start.Unix() / 60)
}

// stepIndexFrom is minute index i rounded down to a multiple of step
// minutes on the clock (the settle point of an API that settles every step
// minutes); base is the series start's minute (minuteOfStart).
func (s *Series) stepIndexFrom(i, step, base int) int {
	if step <= 1 {
		return i
	}
	r := (base + i) % step
	if r < 0 {
		r += step
	}
	return i - r
}

func (s *Series) cumAt(i int) ledger.Units {
	if s == nil || len(s.cum) == 0 || i <= 0 {
		return 0
	}
	if i >= len(s.cum) {
		i = len(s.cum) - 1
	}
	return s.cum[i]
}

// Between is the usage settled in the whole minutes within [a, b).
func (s *Series) Between(a, b time.Time) ledger.Units { return s.Cum(b) - s.Cum(a) }
