package quota

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
)

// The guard in rooms by job: this file is admission (Check) and observation
// (Observe, and the refresh both share); sync.go holds the balance readings
// and the loop; state.go the read-only view for the dashboard; topup.go the
// nightly executor, which sees the guard only through topUpGuard.

// BalanceSource reads a provider's free balance for one model
// (backend/upstream/balance implements it).
type BalanceSource interface {
	Balance(ctx context.Context, model string) (ledger.Units, error)
}

// ExpirySource is an optional BalanceSource that also lists when its free
// packages expire; the guard then leaves soon-expiring units out of the limit.
type ExpirySource interface {
	Expiries(ctx context.Context, model string) ([]Expiry, error)
}

// PublishKind is what the guard passes to publish after a change.
const PublishKind = "quota"

// history is how much snapshot and usage history the guard keeps in memory:
// the lag fit and the B0 estimate look back at most lagWindow.
const history = lagWindow + time.Hour

// refreshTimeout bounds the store reads a Check may do at the day's rollover.
const refreshTimeout = 5 * time.Second

type modelKey struct{ upstream, model string }

// model is one guarded model's runtime state. Two locks: work serialises
// what reads the store to re-assess or record (a refresh, a snapshot), so
// that an older reading never overwrites a newer assessment; mu guards the
// fields below it and is never held across I/O. The commit hook never waits
// on work (its holder may be waiting for that very hook to return from a
// store write): an Observe that finds work held leaves a note (pending,
// reload) that the holder acts on before it lets go (unlockWork).
type model struct {
	key    modelKey
	opts   Options
	source BalanceSource
	kick   chan struct{} // burst trigger → the sync loop; buffer 1
	work   sync.Mutex

	mu          sync.Mutex
	pending     bool // an Observe came while work was held: refresh before letting go
	reload      bool // … for a committed snapshot: re-read the snapshots too
	saving      bool // record is writing this guard's own snapshot
	loaded      bool
	snaps       []ledger.Snapshot // within history, oldest first
	a           Assessment
	usage       ledger.QuotaUsage
	evicted     bool
	reason      string
	audited     bool     // whether evicted (not reason) is what the last audit row says
	expiries    []Expiry // from the last sync of an ExpirySource
	expiriesAt  time.Time
	lastSync    time.Time
	usageAtLast ledger.Units // usage when the last snapshot was taken (burst trigger)
	lastSource  string       // source of the latest snapshot
	syncErr     string
	topUpDay    string
	topUpPlan   ledger.Units
	carry       Carry                     // yesterday's runs drawing on today's pool, as of the last refresh
	yUsage      ledger.Units              // yesterday's quota-day usage, as of the last refresh (RefundFloor)
	overrun     Overrun                   // learned from settled runs; its MaxMilli is kept in snapshots and audit rows
	admitted    map[ledger.RunID]admitted // this model's runs admitted and not yet settled, as the audit rows tell
	auditSeq    int64                     // the last audit row the overrun learning has read
}

// Guard is the runtime quota guard: per guarded model it keeps the limit
// from the latest snapshots, answers the gateway's Check before any token
// counting, evicts and restores, and syncs balances on a timer and on bursts.
type Guard struct {
	store   ledger.Store
	now     func() time.Time
	publish func(kind string)
	models  map[modelKey]*model
	order   []modelKey
	poller  Poller // nil: this gateway polls every source (SharePolling)
}

// NewGuard builds a guard for models. sources maps an upstream name to its
// balance source (absent, nil or one whose Manual() is true: readings come
// only from SetBalance/SetB0).
// clock and publish may be nil (time.Now, no publishing).
func NewGuard(store ledger.Store, models []ModelOptions, sources map[string]BalanceSource,
	clock func() time.Time, publish func(kind string)) (*Guard, error) {
	if store == nil {
		return nil, fmt.Errorf("quota guard: no store")
	}
	if clock == nil {
		clock = time.Now
	}
	if publish == nil {
		publish = func(string) {}
	}
	g := &Guard{store: store, now: clock, publish: publish, models: map[modelKey]*model{}}
	for _, mo := range models {
		k := modelKey{mo.Upstream, mo.Model}
		if k.upstream == "" || k.model == "" {
			return nil, ledger.Errorf(ledger.CodeInvalidRequest, "a guarded model needs an upstream and a model")
		}
		if _, dup := g.models[k]; dup {
			return nil, ledger.Errorf(ledger.CodeInvalidRequest, "model %s/%s is guarded twice", k.upstream, k.model)
		}
		o, err := mo.Options.Validate()
		if err != nil {
			return nil, fmt.Errorf("quota options of %s/%s: %w", k.upstream, k.model, err)
		}
		src := sources[k.upstream]
		if man, ok := src.(interface{ Manual() bool }); ok && man.Manual() {
			src = nil // readings come from SetBalance/SetB0 only; never polled
		}
		g.models[k] = &model{key: k, opts: o, source: src, kick: make(chan struct{}, 1), overrun: NewOverrun(o)}
		g.order = append(g.order, k)
	}
	return g, nil
}

// Guarded reports whether (upstream, model) is guarded.
func (g *Guard) Guarded(upstream, model string) bool {
	_, ok := g.models[modelKey{upstream, model}]
	return ok
}

// Models lists the guarded models with their validated options, in
// configuration order.
func (g *Guard) Models() []ModelOptions {
	out := make([]ModelOptions, 0, len(g.order))
	for _, k := range g.order {
		out = append(out, ModelOptions{Upstream: k.upstream, Model: k.model, Options: g.models[k].opts})
	}
	return out
}

func (g *Guard) get(upstream, model string) (*model, error) {
	m, ok := g.models[modelKey{upstream, model}]
	if !ok {
		return nil, ledger.Errorf(ledger.CodeModelNotFound, "model %s on upstream %s is not quota-guarded", model, upstream)
	}
	return m, nil
}

// Check is the gateway's question before token counting: nil, nil for a
// model that is not guarded; a *ledger.Error with CodeQuotaGuard and a
// Retry-After for an evicted one; otherwise the QuotaCheck that Admit must
// enforce atomically. At the day's rollover it re-reads the store once.
func (g *Guard) Check(upstream, model string) (*ledger.QuotaCheck, error) {
	m, ok := g.models[modelKey{upstream, model}]
	if !ok {
		return nil, nil
	}
	now := g.now()
	day := m.opts.Day(now)
	if m.stale(day) {
		if err := g.rollover(m, day); err != nil {
			return nil, fmt.Errorf("quota check of %s/%s: %w", upstream, model, err)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.a.At(m.opts, now, m.usage.UsageUnits) // packages may have come within the expiry horizon since the sync
	if m.evicted {
		return nil, &ledger.Error{Code: ledger.CodeQuotaGuard, RetryAfter: m.retryAfter(now),
			Message: fmt.Sprintf("model %s on upstream %s is paused by its quota guard (%s)", model, upstream, m.reason)}
	}
	return &ledger.QuotaCheck{Day: m.a.Day, LimitUnits: m.a.AdmitLimit(m.usage.UsageUnits)}, nil
}

func (m *model) stale(day string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return !m.loaded || m.a.Day != day
}

// rollover re-assesses a model whose day changed, once for all the callers
// that noticed it together.
func (g *Guard) rollover(m *model, day string) error {
	ctx, cancel := context.WithTimeout(context.Background(), refreshTimeout)
	defer cancel()
	m.work.Lock()
	defer g.unlockWork(ctx, m)
	if !m.stale(day) {
		return nil
	}
	return g.refreshLocked(ctx, m, true)
}

// retryAfter: a usage-wall eviction ends at the next local midnight; the
// others at the next sync that can change the reading.
func (m *model) retryAfter(now time.Time) time.Duration {
	var d time.Duration
	if strings.HasPrefix(m.reason, ReasonUsageWall) {
		d = m.opts.NextDayStart(now).Sub(now)
	} else {
		d = m.opts.SyncEveryLow
	}
	return max(d.Round(time.Second), time.Second)
}

// Observe is called after a guarded model's run settles (or is reconciled):
// it re-reads today's usage, evicts at the walls, and asks the sync loop for
// a burst sync once usage grew BurstSync since the last snapshot. It never
// waits for another refresh or sync of the model: that one's holder does
// the re-read before it ends (so Observe may run inside the commit hook).
func (g *Guard) Observe(ctx context.Context, upstream, model string) error {
	return g.observe(ctx, upstream, model, false)
}

// ObserveSync is Observe for a committed balance snapshot: the guard also
// re-reads the model's snapshots (another gateway's sync on a shared
// ledger). A snapshot this guard is writing itself is skipped: record
// judges it.
func (g *Guard) ObserveSync(ctx context.Context, upstream, model string) error {
	return g.observe(ctx, upstream, model, true)
}

func (g *Guard) observe(ctx context.Context, upstream, model string, snapshot bool) error {
	m, ok := g.models[modelKey{upstream, model}]
	if !ok {
		return nil
	}
	// Observe runs in the ledger's commit hook. A sync or b0 holding the
	// model's work lock may be waiting for this very hook (a store answers
	// a write once the hook has seen it, and the hook sees commits in order,
	// another gateway's too): waiting for the lock here would deadlock. So
	// it leaves a note, and the holder refreshes once more before it lets go.
	m.mu.Lock()
	if snapshot && m.saving {
		m.mu.Unlock()
		return nil
	}
	m.pending, m.reload = true, m.reload || snapshot
	m.mu.Unlock()
	if !m.work.TryLock() {
		return nil // the holder sees the note before it lets go
	}
	if err := g.unlockWork(ctx, m); err != nil {
		return fmt.Errorf("quota observe of %s/%s: %w", upstream, model, err)
	}
	return nil
}

// unlockWork releases m.work once the notes Observe left are acted on: a
// refresh (with the snapshots re-read for a committed snapshot), then a
// burst sync asked for when usage grew BurstSync since the last snapshot.
// It returns the first refresh error; the refresh that failed stays due
// (announce keeps an unwritten transition), so the next one retries.
func (g *Guard) unlockWork(ctx context.Context, m *model) error {
	var first error
	for {
		m.mu.Lock()
		pending, reload := m.pending, m.reload
		m.pending, m.reload = false, false
		if reload {
			m.loaded = false
		}
		m.mu.Unlock()
		if pending {
			if err := g.refreshLocked(ctx, m, false); err != nil && first == nil {
				first = err
			}
			m.mu.Lock()
			burst := m.usage.UsageUnits-m.usageAtLast >= m.opts.BurstSync
			m.mu.Unlock()
			if burst {
				select {
				case m.kick <- struct{}{}:
				default:
				}
			}
			continue
		}
		m.work.Unlock()
		m.mu.Lock()
		again := m.pending // an Observe that found work held just before the unlock
		m.mu.Unlock()
		if !again || !m.work.TryLock() {
			return first
		}
	}
}

func (g *Guard) refresh(ctx context.Context, m *model, full bool) error {
	m.work.Lock()
	err := g.refreshLocked(ctx, m, full)
	if uerr := g.unlockWork(ctx, m); err == nil {
		err = uerr
	}
	return err
}

// refreshLocked re-reads usage (and, when full or not yet loaded, the
// snapshots and the usage series to re-assess the limit), then evaluates
// eviction; m.work must be held.
func (g *Guard) refreshLocked(ctx context.Context, m *model, full bool) error {
	now := g.now()
	day := m.opts.Day(now)
	m.mu.Lock()
	loaded := m.loaded
	reassess := full || !loaded || m.a.Day != day
	m.mu.Unlock()

	if !loaded {
		snaps, err := g.store.Snapshots(ctx, m.key.upstream, m.key.model, now.Add(-history))
		if err != nil {
			return err
		}
		m.mu.Lock()
		m.snaps, m.loaded = snaps, true
		m.overrun.MaxMilli = max(m.overrun.MaxMilli, overrunOf(snaps))
		m.mu.Unlock()
	}
	if err := g.learnOverrun(ctx, m, now); err != nil {
		return err
	}
	u, err := g.store.QuotaUsage(ctx, m.key.upstream, m.key.model, day)
	if err != nil {
		return err
	}
	carry, yUsage, err := g.carry(ctx, m, now, u) // after u: a settlement in between counts twice, never not at all
	if err != nil {
		return err
	}
	m.mu.Lock()
	m.carry, m.yUsage = carry, yUsage
	m.mu.Unlock()
	var a Assessment
	if reassess {
		if a, err = g.assess(ctx, m, now, nil); err != nil {
			return err
		}
	}
	m.mu.Lock()
	if reassess {
		m.a = a
		if n := len(m.snaps); n > 0 && m.snaps[n-1].At.After(m.lastSync) { // at load, or another gateway's sync
			last := m.snaps[n-1]
			m.lastSync, m.lastSource = last.At, last.Source
			if last.Day == day {
				m.usageAtLast = last.UsageAtSync
			}
		}
		if m.usage.Day != "" && a.Day != m.usage.Day {
			m.usageAtLast = 0 // a new day: the burst trigger counts from zero
		}
	}
	m.usage, m.carry = u, carry
	m.a.Carry = carry
	m.a.OverrunMilli, m.a.OverrunTail = m.overrun.Bound()
	m.a.OverrunKnown = m.overrun.Known()
	m.a.At(m.opts, now, u.UsageUnits)
	change := m.judge()
	m.mu.Unlock()
	return g.announce(ctx, m, change)
}

// carry reads what yesterday's runs draw from today's pool: the units
// settled since 00:00 beyond today's own usage u (the series counts by
// settlement time, the quota day by admission), and yesterday's holds.
// Yesterday's holds include runs that ended with usage unknown, which can
// no longer draw on today: counting them is conservative, for one day.
func (g *Guard) carry(ctx context.Context, m *model, now time.Time, u ledger.QuotaUsage) (Carry, ledger.Units, error) {
	start := m.opts.DayStart(now)
	y, err := g.store.QuotaUsage(ctx, m.key.upstream, m.key.model, m.opts.Day(start.Add(-time.Minute)))
	if err != nil {
		return Carry{}, 0, err
	}
	pts, err := g.store.UsageSeries(ctx, m.key.upstream, m.key.model, start, now.Add(time.Minute))
	if err != nil {
		return Carry{}, 0, err
	}
	var since ledger.Units
	for _, p := range pts {
		since += p.Units
	}
	return Carry{Settled: max(0, since-u.UsageUnits), Held: y.HeldInFlight}, y.UsageUnits, nil
}

// assess derives m's assessment at now from the snapshots in memory (plus
// extra, not yet stored) and the usage series read from the store. It
// changes nothing.
func (g *Guard) assess(ctx context.Context, m *model, now time.Time, extra *ledger.Snapshot) (Assessment, error) {
	series, err := g.series(ctx, m, now)
	if err != nil {
		return Assessment{}, err
	}
	m.mu.Lock()
	snaps := append([]ledger.Snapshot(nil), m.snaps...)
	exp, expAt := m.expiries, m.expiriesAt
	floor := RefundFloor(m.opts, m.yUsage, m.carry, series, now)
	m.mu.Unlock()
	if extra != nil {
		snaps = append(snaps, *extra)
	}
	a := AssessWith(m.opts, now, snaps, series, floor)
	a.SetExpiries(m.opts, exp, expAt, series)
	m.mu.Lock()
	a.Carry = m.carry
	a.OverrunMilli, a.OverrunTail = m.overrun.Bound()
	a.OverrunKnown = m.overrun.Known()
	m.mu.Unlock()
	return a, nil
}

func (g *Guard) series(ctx context.Context, m *model, now time.Time) (*Series, error) {
	pts, err := g.store.UsageSeries(ctx, m.key.upstream, m.key.model, now.Add(-history), now.Add(time.Minute))
	if err != nil {
		return nil, err
	}
	return NewSeries(pts), nil
}

// transition is an eviction state change to audit and publish.
type transition struct {
	kind    ledger.AuditKind
	reason  string
	usage   ledger.Units
	detail  string
	evicted bool
}

// judge evaluates eviction and returns the transition to audit, if any; m.mu
// must be held. The first evaluation after start counts from "not evicted",
// so a model that starts evicted is audited as such (seed 002's startup
// audit). The in-memory state changes at once — refusing must not wait on
// the disk — and the transition stays due until its audit row is written.
func (m *model) judge() *transition {
	ev, reason := Verdict(m.opts, m.a, m.usage.UsageUnits)
	m.evicted, m.reason = ev, reason
	if m.audited == ev {
		return nil
	}
	t := &transition{kind: ledger.AuditRestore, reason: "restored", usage: m.usage.UsageUnits, evicted: ev}
	if ev {
		t.kind, t.reason = ledger.AuditEvict, reason
	}
	t.detail = fmt.Sprintf("%s/%s day=%s usage=%d limit=%d balance_at_sync=%d b0=%d",
		m.key.upstream, m.key.model, m.a.Day, m.usage.UsageUnits, m.a.Limit, m.a.BalanceAtSync, m.a.B0.Units)
	return t
}

// announce audits and publishes t. A failed audit row is returned and the
// transition stays due, so the next refresh writes it.
func (g *Guard) announce(ctx context.Context, m *model, t *transition) error {
	if t == nil {
		return nil
	}
	// The audit row's commit reaches the hub through the commit hook; only
	// an unwritten row is published here (the state changed all the same).
	if err := g.store.AppendAudit(ctx, ledger.AuditEntry{At: g.now().UTC(), Kind: t.kind, Actor: ledger.ActorQuotaGuard,
		Reason: t.reason, Units: t.usage, Detail: t.detail}); err != nil {
		g.publish(PublishKind)
		return fmt.Errorf("audit %s of %s/%s: %w", t.kind, m.key.upstream, m.key.model, err)
	}
	m.mu.Lock()
	m.audited = t.evicted
	m.mu.Unlock()
	return nil
}
