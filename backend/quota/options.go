package quota

import (
	"fmt"
	"sync"
	"time"
	_ "time/tzdata" // the day's zone (Asia/Shanghai) must load on machines without zoneinfo

	"github.com/quotagate/quotagate/backend/ledger"
)

// Defaults from seed 002 (Volcengine Ark's free daily token packages).
const (
	DefaultDailyCap      ledger.Units = 2_000_000 // collection cap per model per day
	DefaultSmallBuffer   ledger.Units = 50_000    // covers package expiry and settlement residue, not lag
	DefaultUsageWall     ledger.Units = 1_950_000 // §7.6 soft-evict usage wall
	DefaultBalanceWall   ledger.Units = 100_000   // §7.6 soft-evict balance wall
	DefaultBurstSync     ledger.Units = 100_000   // sync again after this much usage since the last sync
	DefaultLowBalance    ledger.Units = 300_000   // below it (balance or headroom) sync every SyncEveryLow
	DefaultTimezone                   = "Asia/Shanghai"
	DefaultSyncEvery                  = 30 * time.Minute
	DefaultSyncEveryLow               = 5 * time.Minute
	DefaultLag                        = 15 * time.Minute // §4.2 measured ≈14 min
	DefaultMinLag                     = 1 * time.Minute
	DefaultMaxLag                     = 45 * time.Minute
	DefaultTopUpAt                    = 23*time.Hour + 20*time.Minute
	DefaultExpiryHorizon              = 15 * time.Minute // ≥ the longest call: Check re-applies it at every request
	// DefaultResidue is what the limit holds back below B0 when the source
	// lists its packages' expiries (the horizon then leaves expiring units
	// out): the settlement residue alone. Seed 002 §4.2 saw 115 units
	// between the console's B0 and a reading that had settled nothing yet.
	DefaultResidue ledger.Units = 5_000
)

// Options configure one guarded model. Zero fields take the defaults above.
type Options struct {
	DailyCap     ledger.Units
	SmallBuffer  ledger.Units
	Residue      ledger.Units // held back instead of SmallBuffer when expiries are listed (≤ SmallBuffer)
	UsageWall    ledger.Units
	BalanceWall  ledger.Units
	Timezone     string // IANA zone of the quota day; rollover at 00:00 local
	SyncEvery    time.Duration
	SyncEveryLow time.Duration
	LowBalance   ledger.Units
	BurstSync    ledger.Units
	DefaultLag   time.Duration // used until snapshots and usage can tell
	MinLag       time.Duration // bounds of the online lag estimate
	MaxLag       time.Duration
	// ExpiryHorizon: free units of packages expiring within it no longer count
	// toward the limit (seed 002 §7.5 residual risk 2), when the source lists them.
	ExpiryHorizon time.Duration
	// Reasoning declares a model whose calls may consume beyond their
	// output cap (reasoning tokens): until its own calls are known it is
	// reserved at ReasoningPrior.
	Reasoning bool
	TopUp     TopUpOptions
}

// TopUpOptions configure the nightly top-up of one model (seed 002 §1.1).
// Off by default. The guard only plans it (dry run); the TopUp executor
// spends only for the upstreams its TopUpRunOptions.Spend names.
type TopUpOptions struct {
	Enabled bool
	At      time.Duration // offset from local midnight; default 23:20
}

// ModelOptions names the guarded model an Options applies to.
type ModelOptions struct {
	Upstream string
	Model    string
	Options
}

// DefaultOptions returns seed 002's figures.
func DefaultOptions() Options { return Options{}.withDefaults() }

func (o Options) withDefaults() Options {
	def := func(v *ledger.Units, d ledger.Units) {
		if *v == 0 {
			*v = d
		}
	}
	defD := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	def(&o.DailyCap, DefaultDailyCap)
	def(&o.SmallBuffer, DefaultSmallBuffer)
	def(&o.Residue, DefaultResidue)
	def(&o.UsageWall, DefaultUsageWall)
	def(&o.BalanceWall, DefaultBalanceWall)
	def(&o.BurstSync, DefaultBurstSync)
	def(&o.LowBalance, DefaultLowBalance)
	if o.Timezone == "" {
		o.Timezone = DefaultTimezone
	}
	defD(&o.SyncEvery, DefaultSyncEvery)
	defD(&o.SyncEveryLow, DefaultSyncEveryLow)
	defD(&o.DefaultLag, DefaultLag)
	defD(&o.MinLag, DefaultMinLag)
	defD(&o.MaxLag, DefaultMaxLag)
	defD(&o.TopUp.At, DefaultTopUpAt)
	defD(&o.ExpiryHorizon, DefaultExpiryHorizon)
	return o
}

// Validate fills the defaults and reports the first inconsistent field.
func (o Options) Validate() (Options, error) {
	o = o.withDefaults()
	for _, f := range []struct {
		name string
		v    ledger.Units
	}{{"daily_cap", o.DailyCap}, {"small_buffer", o.SmallBuffer}, {"usage_wall", o.UsageWall},
		{"balance_wall", o.BalanceWall}, {"burst_sync", o.BurstSync}, {"low_balance", o.LowBalance}} {
		if err := ledger.CheckUnits(f.name, f.v); err != nil {
			return o, err
		}
	}
	if o.SmallBuffer >= o.DailyCap {
		return o, ledger.Errorf(ledger.CodeInvalidRequest, "quota.small_buffer (%d) must be below daily_cap (%d)", o.SmallBuffer, o.DailyCap)
	}
	if _, err := o.Location(); err != nil {
		return o, err
	}
	if o.MinLag < 0 || o.MinLag > o.MaxLag || o.DefaultLag < o.MinLag || o.DefaultLag > o.MaxLag {
		return o, ledger.Errorf(ledger.CodeInvalidRequest,
			"quota lag bounds must satisfy 0 ≤ min %s ≤ default %s ≤ max %s", o.MinLag, o.DefaultLag, o.MaxLag)
	}
	if o.SyncEvery <= 0 || o.SyncEveryLow <= 0 {
		return o, ledger.Errorf(ledger.CodeInvalidRequest, "quota sync intervals must be positive")
	}
	if o.TopUp.At < 0 || o.TopUp.At >= 24*time.Hour {
		return o, ledger.Errorf(ledger.CodeInvalidRequest, "quota top-up time must be within the day (got %s)", o.TopUp.At)
	}
	return o, nil
}

var zones sync.Map // name → *time.Location

// Location loads the quota day's zone once.
func (o Options) Location() (*time.Location, error) {
	name := o.Timezone
	if name == "" {
		name = DefaultTimezone
	}
	if l, ok := zones.Load(name); ok {
		return l.(*time.Location), nil
	}
	l, err := time.LoadLocation(name)
	if err != nil {
		return nil, ledger.Errorf(ledger.CodeInvalidRequest, "quota timezone %q: %v", name, err)
	}
	zones.Store(name, l)
	return l, nil
}

func (o Options) loc() *time.Location {
	l, err := o.Location()
	if err != nil {
		panic(fmt.Sprintf("quota: options not validated: %v", err))
	}
	return l
}

// Day is the quota day (YYYY-MM-DD) of t in the configured zone.
func (o Options) Day(t time.Time) string { return t.In(o.loc()).Format(time.DateOnly) }

// DayStart is 00:00 local of the quota day containing t.
func (o Options) DayStart(t time.Time) time.Time {
	l := t.In(o.loc())
	return time.Date(l.Year(), l.Month(), l.Day(), 0, 0, 0, 0, l.Location())
}

// NextDayStart is the next local midnight after t (the rollover).
func (o Options) NextDayStart(t time.Time) time.Time {
	s := o.DayStart(t)
	return time.Date(s.Year(), s.Month(), s.Day()+1, 0, 0, 0, 0, s.Location())
}
