package ledger

import (
	"sort"

	"github.com/quotagate/quotagate/backend/price"
)

// RunFigures is what one run adds to its tenant's books, its period's and
// its guarded model's day.
type RunFigures struct {
	ID, Tenant, Period        string
	Open                      bool // queued or active
	Holding                   bool // usage pending or unknown
	Spent, Held, Overrun      Units
	Cost, Reserve             price.Micros
	Upstream, Model, QuotaDay string
}

// Ended says the run's figures never change again: it is neither open nor
// holding.
func (r RunFigures) Ended() bool { return !r.Open && !r.Holding }

// BookKey is a tenant's books: its own (Period "") or one period's.
type BookKey struct {
	Tenant string `json:"tenant"`
	Period string `json:"period,omitempty"`
}

// BookSums adds up runs of one BookKey.
type BookSums struct {
	Spent      Units        `json:"spent"`
	Held       Units        `json:"held,omitempty"`
	Cost       price.Micros `json:"cost"`
	HeldMicros price.Micros `json:"held_micros,omitempty"`
	Open       int          `json:"open,omitempty"`
}

// DayKey is a guarded model's day.
type DayKey struct {
	Upstream string `json:"upstream"`
	Model    string `json:"model"`
	Day      string `json:"day"`
}

// DaySums adds up runs of one DayKey.
type DaySums struct {
	Usage Units `json:"usage"`
	Held  Units `json:"held,omitempty"`
}

// Tally adds up runs (and archive summaries) the way the books do.
type Tally struct {
	Books map[BookKey]*BookSums
	Days  map[DayKey]*DaySums
}

func (t *Tally) book(k BookKey) *BookSums {
	if t.Books == nil {
		t.Books, t.Days = map[BookKey]*BookSums{}, map[DayKey]*DaySums{}
	}
	b := t.Books[k]
	if b == nil {
		b = &BookSums{}
		t.Books[k] = b
	}
	return b
}

func (t *Tally) day(k DayKey) *DaySums {
	t.book(BookKey{}) // makes the maps
	d := t.Days[k]
	if d == nil {
		d = &DaySums{}
		t.Days[k] = d
	}
	return d
}

// Add counts one run.
func (t *Tally) Add(r RunFigures) {
	b := t.book(BookKey{r.Tenant, r.Period})
	b.Spent += r.Spent
	b.Held += r.Held
	b.Cost += r.Cost
	if r.Holding {
		b.HeldMicros += r.Reserve
	}
	if r.Open {
		t.book(BookKey{Tenant: r.Tenant}).Open++ // a tenant's active count spans its periods
	}
	if r.QuotaDay != "" {
		d := t.day(DayKey{r.Upstream, r.Model, r.QuotaDay})
		d.Usage += r.Spent + r.Overrun
		d.Held += r.Held
	}
}

// AddSummary counts an archived month's summary.
func (t *Tally) AddSummary(s ArchiveSummary) {
	b := t.book(BookKey{s.TenantID, s.Period})
	b.Spent += s.SpentUnits
	b.Cost += s.SpentMicros
}

// AddQuota counts what a guarded model's day lost to archiving.
func (t *Tally) AddQuota(q ArchivedQuota) {
	t.day(DayKey{q.Upstream, q.Model, q.Day}).Usage += q.Usage
}

// BookRow and DayRow are a Tally's entries as a checkpoint keeps them.
type BookRow struct {
	BookKey
	BookSums
}

type DayRow struct {
	DayKey
	DaySums
}

// Rows lists t's entries in key order.
func (t *Tally) Rows() ([]BookRow, []DayRow) {
	books := make([]BookRow, 0, len(t.Books))
	for k, b := range t.Books {
		books = append(books, BookRow{k, *b})
	}
	sort.Slice(books, func(i, j int) bool {
		a, b := books[i].BookKey, books[j].BookKey
		return a.Tenant < b.Tenant || a.Tenant == b.Tenant && a.Period < b.Period
	})
	days := make([]DayRow, 0, len(t.Days))
	for k, d := range t.Days {
		days = append(days, DayRow{k, *d})
	}
	sort.Slice(days, func(i, j int) bool {
		a, b := days[i].DayKey, days[j].DayKey
		return a.Upstream < b.Upstream || a.Upstream == b.Upstream && (a.Model < b.Model || a.Model == b.Model && a.Day < b.Day)
	})
	return books, days
}

// AddRows counts entries a checkpoint kept.
func (t *Tally) AddRows(books []BookRow, days []DayRow) {
	for _, r := range books {
		b := t.book(r.BookKey)
		b.Spent += r.Spent
		b.Held += r.Held
		b.Cost += r.Cost
		b.HeldMicros += r.HeldMicros
		b.Open += r.Open
	}
	for _, r := range days {
		d := t.day(r.DayKey)
		d.Usage += r.Usage
		d.Held += r.DaySums.Held
	}
}

// Of is what t holds for k (zero when nothing).
func (t *Tally) Of(k BookKey) BookSums {
	if b := t.Books[k]; b != nil {
		return *b
	}
	return BookSums{}
}

// RunsCheckpoint is what a checkpoint keeps of the runs, so that the next
// verify adds up only the runs written since (and those still open or
// holding) rather than every run: the sums over the runs that had ended by
// the checkpoint, which never change again, up to the store's last run row.
type RunsCheckpoint struct {
	// LastRow is the store's last run row counted: SQLite's rowid;
	// PostgreSQL's audit seq up to which runs were counted by their admit
	// rows (its run rows are numbered before they commit, out of order).
	LastRow int64     `json:"last_row"`
	Pending []string  `json:"pending,omitempty"`
	Books   []BookRow `json:"books,omitempty"`
	Days    []DayRow  `json:"days,omitempty"`
}

// RunsCount adds up the runs a verify reads: into All every one, and, for
// the checkpoint it may leave, into Ended those counted by it that ended
// (their figures never change again), listing in Next.Pending those it
// counts that have not. A verify that starts from a checkpoint starts both
// sums from it.
type RunsCount struct {
	All, Ended Tally
	Next       RunsCheckpoint
}

// CountFrom starts a count from what cp kept of the runs.
func CountFrom(cp *RunsCheckpoint) *RunsCount {
	c := &RunsCount{}
	c.All.AddRows(cp.Books, cp.Days)
	c.Ended.AddRows(cp.Books, cp.Days)
	c.Next.LastRow = cp.LastRow
	return c
}

// Add counts run r, read at row; kept says the checkpoint counts it (a run
// it does not is read again by the next verify).
func (c *RunsCount) Add(row int64, r RunFigures, kept bool) {
	c.All.Add(r)
	if !kept {
		return
	}
	c.Next.LastRow = max(c.Next.LastRow, row)
	if r.Ended() {
		c.Ended.Add(r)
	} else {
		c.Next.Pending = append(c.Next.Pending, r.ID)
	}
}

// Checkpoint is what the next checkpoint keeps of the runs counted.
func (c *RunsCount) Checkpoint() *RunsCheckpoint {
	next := c.Next
	next.Books, next.Days = c.Ended.Rows()
	return &next
}

// BooksCheck compares the books a store reads (each tenant's balance row,
// each period's books, each guarded model's day) with t, the sums over the
// runs and the archived months' summaries, saying what differs in v.
type BooksCheck struct {
	v       *Verification
	t       *Tally
	periods map[BookKey]bool
	days    map[DayKey]bool
}

// BooksAgainst starts comparing the books with t.
func (v *Verification) BooksAgainst(t *Tally) *BooksCheck {
	return &BooksCheck{v: v, t: t, periods: map[BookKey]bool{}, days: map[DayKey]bool{}}
}

// Balance compares a tenant's balance row.
func (c *BooksCheck) Balance(b Balance) {
	own := c.t.Of(BookKey{Tenant: b.TenantID})
	c.v.Tenant(b, own.Spent, own.Held, own.Open)
	c.v.TenantMoney(b, own.Cost, own.HeldMicros)
}

// Period compares one period's books b of tenant tn.
func (c *BooksCheck) Period(tn Tenant, b PeriodBooks) {
	k := BookKey{Tenant: tn.ID, Period: b.Label}
	c.periods[k] = true
	s := c.t.Of(k)
	c.v.Period(tn, b, PeriodBooks{Label: b.Label, SpentUnits: s.Spent, HeldUnits: s.Held,
		SpentMicros: s.Cost, HeldMicros: s.HeldMicros})
}

// PeriodsDone reports the periods whose runs spent or hold something but
// that have no books, after every Period.
func (c *BooksCheck) PeriodsDone() {
	for k, s := range c.t.Books {
		if k.Period != "" && !c.periods[k] && (s.Spent != 0 || s.Held != 0 || s.Cost != 0 || s.HeldMicros != 0) {
			c.v.Addf("tenant %s: period %s spent 0 held 0 (money 0.00, 0.00) but its runs spent %d and hold %d (money %s, %s)",
				k.Tenant, k.Period, s.Spent, s.Held, s.Cost, s.HeldMicros)
		}
	}
}

// Day compares a guarded model's day.
func (c *BooksCheck) Day(k DayKey, usage, held Units) {
	c.days[k] = true
	var s DaySums
	if d := c.t.Days[k]; d != nil {
		s = *d
	}
	if usage != s.Usage || held != s.Held {
		c.v.QuotaDay(k.Upstream, k.Model, k.Day, usage, held, s.Usage, s.Held)
	}
}

// DaysDone reports the days whose runs used or hold something but that
// have no row, after every Day.
func (c *BooksCheck) DaysDone() {
	for k, s := range c.t.Days {
		if !c.days[k] && (s.Usage != 0 || s.Held != 0) {
			c.v.QuotaDay(k.Upstream, k.Model, k.Day, 0, 0, s.Usage, s.Held)
		}
	}
}
