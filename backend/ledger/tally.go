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
	LastRow int64     `json:"last_row"` // the store's last run row counted (SQLite: rowid)
	Pending []string  `json:"pending,omitempty"`
	Books   []BookRow `json:"books,omitempty"`
	Days    []DayRow  `json:"days,omitempty"`
}
