package ledger

import (
	"fmt"
	"strings"
	"time"

	"github.com/quotagate/quotagate/backend/period"
	"github.com/quotagate/quotagate/backend/price"
)

// Budget periods. A tenant whose calendar renews its budget (Tenant.Calendar,
// a day, week or month in its zone) keeps one set of books per period: what
// its runs admitted in that period spent and hold. A run belongs to the
// period it was admitted in (Run.Period, decided once at admission), so its
// hold, settlement, release and reconcile move that period's books, never
// the current one's — a hold taken on the 31st and settled on the 1st is
// neither lost nor counted twice. Admission checks the current period's
// books; a period without books yet has spent and held nothing.
//
// The tenant's row keeps the books of the runs admitted without a period
// (Run.Period ""): every run of a tenant that never renews, and the runs a
// tenant admitted before it first had a period. Its active count is the
// tenant's, whatever the period: concurrency does not renew.

// PeriodBooks are a tenant's figures in one period (the zero value: a period
// in which nothing was spent or held).
type PeriodBooks struct {
	Label                   string
	Start, End              time.Time
	SpentUnits, HeldUnits   Units
	SpentMicros, HeldMicros price.Micros
}

// Move adds m's spent and held figures to the books.
func (b *PeriodBooks) Move(m Moves) {
	b.SpentUnits += m.Spent
	b.HeldUnits += m.Held
	b.SpentMicros += m.SpentMicros
	b.HeldMicros += m.HeldMicros
}

// Move adds m to the position: its active count always, its spent and held
// figures when the position is the books m's run belongs to.
func (p *Position) Move(m Moves, books bool) {
	p.Active += m.Active
	if books {
		p.SpentUnits += m.Spent
		p.HeldUnits += m.Held
		p.SpentMicros += m.SpentMicros
		p.HeldMicros += m.HeldMicros
	}
}

// InPeriod is the position as seen from period b: the tenant's budget and
// limits, b's spent and held figures. A store answers with the tenant's row
// itself for a run without a period.
func (p Position) InPeriod(b PeriodBooks) Position {
	p.SpentUnits, p.HeldUnits = b.SpentUnits, b.HeldUnits
	p.SpentMicros, p.HeldMicros = b.SpentMicros, b.HeldMicros
	p.Period = b.Label
	return p
}

// Current is the period of the tenant's calendar holding now (the zero
// Period for a tenant that never renews).
func (p Position) Current(now time.Time) period.Period { return p.Calendar.At(now) }

// WithPeriod sets the balance's period and, for a bounded one, its figures
// from the period's books: a balance of a tenant that renews shows where its
// current period stands.
func (b Balance) WithPeriod(per period.Period, books PeriodBooks) Balance {
	if !per.Bounded() {
		return b
	}
	b.Period, b.PeriodStart, b.PeriodEnd = per.Label, per.Start, per.End
	b.SpentUnits, b.HeldUnits = books.SpentUnits, books.HeldUnits
	b.SpentMicros, b.HeldMicros = books.SpentMicros, books.HeldMicros
	b.AvailableUnits, b.AvailableMicros = b.Available(), b.AvailableMoney()
	return b
}

// PeriodSpend is what a tenant spent in one of its periods, for the history
// of its spend.
type PeriodSpend struct {
	Period      string       `json:"period"`
	PeriodStart time.Time    `json:"period_start"`
	SpentUnits  Units        `json:"spent_units"`
	SpentMicros price.Micros `json:"spent_micros"`
}

// PeriodHistoryLength is how many periods the admin state shows per tenant.
const PeriodHistoryLength = 12

// CalendarOf reads a calendar as a store keeps it: kind, zone name ("" is
// the machine's zone) and the first weekday (0 is Sunday).
func CalendarOf(kind, zone string, weekStarts int) (period.Calendar, error) {
	k, err := period.ParseKind("budget_period", kind)
	if err != nil {
		return period.Calendar{}, err
	}
	loc, err := period.LoadZone("timezone", zone)
	if err != nil {
		return period.Calendar{}, err
	}
	if weekStarts < 0 || weekStarts > 6 {
		return period.Calendar{}, Errorf(CodeInvalidRequest, "week_starts %d is not a weekday (0 to 6)", weekStarts)
	}
	return period.Calendar{Kind: k, Zone: loc, WeekStarts: time.Weekday(weekStarts)}, nil
}

// CalendarKind is c's kind as a store keeps it ("none" for the zero Calendar).
func CalendarKind(c period.Calendar) string {
	if c.Kind == "" {
		return string(period.None)
	}
	return string(c.Kind)
}

// CalendarZone is c's zone as a store keeps it: its IANA name, "" for the
// machine's zone.
func CalendarZone(c period.Calendar) string {
	if c.Zone == nil || c.Zone == time.Local {
		return ""
	}
	return c.Zone.String()
}

// Renews reports whether the calendar cuts time into periods.
func Renews(c period.Calendar) bool { return c.Kind != "" && c.Kind != period.None }

// budgetBelowPeriod refuses t's budget when it is below what stored tenant
// old has already spent and holds in its current period.
func budgetBelowPeriod(old StoredTenant, t Tenant) error {
	c := old.Current
	if c.Label == "" {
		return nil
	}
	if t.BudgetUnits < c.SpentUnits+c.HeldUnits {
		return Errorf(CodeInvalidRequest,
			"tenant %s: budget_units %d is below what period %s has already spent (%d) and holds (%d); raise it or reconcile holds first",
			t.ID, t.BudgetUnits, c.Label, c.SpentUnits, c.HeldUnits)
	}
	if t.HasMoneyBudget && t.BudgetMicros < c.SpentMicros+c.HeldMicros {
		return Errorf(CodeInvalidRequest,
			"tenant %s: budget %s is below what period %s has already spent (%s) and holds (%s); raise it or reconcile holds first",
			t.ID, t.BudgetMicros, c.Label, c.SpentMicros, c.HeldMicros)
	}
	return nil
}

// calendarText is a created tenant's calendar for its audit row's detail,
// "" for one that never renews (so such tenants read as before).
func calendarText(c period.Calendar) string {
	if !Renews(c) {
		return ""
	}
	return fmt.Sprintf(" budget_period=%s timezone=%s week_starts=%s", c.Kind, zoneWord(c), weekWord(c))
}

// calendarDiff says what changed between two calendars, in the config's
// words.
func calendarDiff(old, c period.Calendar) []string {
	var d []string
	if CalendarKind(old) != CalendarKind(c) {
		d = append(d, "budget_period "+CalendarKind(old)+"→"+CalendarKind(c))
	}
	if !Renews(old) && !Renews(c) {
		return d // zone and week start mean nothing to a budget that never renews
	}
	if CalendarZone(old) != CalendarZone(c) {
		d = append(d, "timezone "+zoneWord(old)+"→"+zoneWord(c))
	}
	if old.WeekStarts != c.WeekStarts {
		d = append(d, "week_starts "+weekWord(old)+"→"+weekWord(c))
	}
	return d
}

func zoneWord(c period.Calendar) string {
	if z := CalendarZone(c); z != "" {
		return z
	}
	return "local"
}

func weekWord(c period.Calendar) string { return strings.ToLower(c.WeekStarts.String()) }

// RunPeriod is the period run belongs to, with its bounds as the tenant's
// calendar (p's) cuts them; bounds unknown (zero) when the calendar has
// changed since the run's admission. The zero Period for a run without one.
func (p Position) RunPeriod(run Run) period.Period {
	if run.Period == "" {
		return period.Period{}
	}
	if per := p.Calendar.At(run.CreatedAt); per.Label == run.Period {
		return per
	}
	return period.Period{Label: run.Period}
}

// NewPeriodBooks are the books of per before anything moved them.
func NewPeriodBooks(per period.Period) PeriodBooks {
	return PeriodBooks{Label: per.Label, Start: per.Start, End: per.End}
}

// OnRow is what m moves on the tenant's row for run: all of it for a run
// without a period, else only the active count (its period's books take
// the rest).
func (m Moves) OnRow(run Run) Moves {
	if run.Period == "" {
		return m
	}
	return Moves{Active: m.Active}
}

// Equal reports whether two balances say the same: their figures, and their
// period's bounds as instants (two readings of one zone are two
// *time.Location, so == on a balance with a period is false).
func (b Balance) Equal(o Balance) bool {
	if !b.PeriodStart.Equal(o.PeriodStart) || !b.PeriodEnd.Equal(o.PeriodEnd) {
		return false
	}
	b.PeriodStart, b.PeriodEnd, o.PeriodStart, o.PeriodEnd = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	return b == o
}
