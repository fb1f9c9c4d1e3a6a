package quota

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
)

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

// model is one guarded model's runtime state; mu guards every field below it.
type model struct {
	key    modelKey
	opts   Options
	source BalanceSource
	kick   chan struct{} // burst trigger → the sync loop; buffer 1
	syncMu sync.Mutex    // one sync at a time
	dayMu  sync.Mutex    // one rollover refresh at a time

	mu          sync.Mutex
	loaded      bool
	snaps       []ledger.Snapshot // within history, oldest first
	a           Assessment
	usage       ledger.QuotaUsage
	evicted     bool
	reason      string
	expiries    []Expiry // from the last sync of an ExpirySource
	expiriesAt  time.Time
	lastSync    time.Time
	usageAtLast ledger.Units // usage when the last snapshot was taken (burst trigger)
	lastSource  string       // source of the latest snapshot
	syncErr     string
	topUpDay    string
	topUpPlan   ledger.Units
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
		g.models[k] = &model{key: k, opts: o, source: src, kick: make(chan struct{}, 1)}
		g.order = append(g.order, k)
	}
	return g, nil
}

// Guarded reports whether (upstream, model) is guarded.
func (g *Guard) Guarded(upstream, model string) bool {
	_, ok := g.models[modelKey{upstream, model}]
	return ok
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
	return &ledger.QuotaCheck{Day: m.a.Day, LimitUnits: m.a.Limit}, nil
}

func (m *model) stale(day string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return !m.loaded || m.a.Day != day
}

// rollover re-assesses a model whose day changed, once for all the callers
// that noticed it together.
func (g *Guard) rollover(m *model, day string) error {
	m.dayMu.Lock()
	defer m.dayMu.Unlock()
	if !m.stale(day) {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), refreshTimeout)
	defer cancel()
	return g.refresh(ctx, m, true)
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
// a burst sync once usage grew BurstSync since the last snapshot.
func (g *Guard) Observe(ctx context.Context, upstream, model string) error {
	m, ok := g.models[modelKey{upstream, model}]
	if !ok {
		return nil
	}
	if err := g.refresh(ctx, m, false); err != nil {
		return fmt.Errorf("quota observe of %s/%s: %w", upstream, model, err)
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
	return nil
}

// refresh re-reads usage (and, when full or not yet loaded, the snapshots and
// the usage series to re-assess the limit), then evaluates eviction.
func (g *Guard) refresh(ctx context.Context, m *model, full bool) error {
	now := g.now()
	day := m.opts.Day(now)
	m.mu.Lock()
	loaded := m.loaded
	reassess := full || !loaded || m.a.Day != day
	m.mu.Unlock()

	var snaps []ledger.Snapshot
	var err error
	if !loaded {
		snaps, err = g.store.Snapshots(ctx, m.key.upstream, m.key.model, now.Add(-history))
		if err != nil {
			return err
		}
	}
	var a Assessment
	if reassess {
		series, err := g.series(ctx, m, now)
		if err != nil {
			return err
		}
		m.mu.Lock()
		if !loaded && !m.loaded {
			m.snaps, m.loaded = snaps, true
		}
		snaps = append([]ledger.Snapshot(nil), m.snaps...)
		m.mu.Unlock()
		a = Assess(m.opts, now, snaps, series)
		m.mu.Lock()
		a.SetExpiries(m.opts, m.expiries, m.expiriesAt, series)
		m.mu.Unlock()
	}
	u, err := g.store.QuotaUsage(ctx, m.key.upstream, m.key.model, day)
	if err != nil {
		return err
	}
	m.mu.Lock()
	if reassess {
		m.a = a
		if len(snaps) > 0 && m.lastSync.IsZero() {
			last := snaps[len(snaps)-1]
			m.lastSync, m.lastSource = last.At, last.Source
			if last.Day == day {
				m.usageAtLast = last.UsageAtSync
			}
		}
		if m.usage.Day != "" && a.Day != m.usage.Day {
			m.usageAtLast = 0 // a new day: the burst trigger counts from zero
		}
	}
	m.usage = u
	m.a.At(m.opts, now, u.UsageUnits)
	change := m.judge()
	m.mu.Unlock()
	g.announce(ctx, m, change)
	return nil
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
	kind   ledger.AuditKind
	reason string
	usage  ledger.Units
	detail string
}

// judge evaluates eviction and returns the transition, if any; m.mu must be
// held. The first evaluation after start counts from "not evicted", so a
// model that starts evicted is audited as such (seed 002's startup audit).
func (m *model) judge() *transition {
	ev, reason := Verdict(m.opts, m.a, m.usage.UsageUnits)
	was := m.evicted
	m.evicted, m.reason = ev, reason
	if ev == was {
		return nil
	}
	t := &transition{kind: ledger.AuditRestore, reason: "restored", usage: m.usage.UsageUnits}
	if ev {
		t.kind, t.reason = ledger.AuditEvict, reason
	}
	t.detail = fmt.Sprintf("%s/%s day=%s usage=%d limit=%d balance_at_sync=%d b0=%d",
		m.key.upstream, m.key.model, m.a.Day, m.usage.UsageUnits, m.a.Limit, m.a.BalanceAtSync, m.a.B0.Units)
	return t
}

func (g *Guard) announce(ctx context.Context, m *model, t *transition) {
	if t == nil {
		return
	}
	// The audit row is best effort here: the state change already happened in
	// memory and refusing requests must not wait on a failing disk.
	_ = g.store.AppendAudit(ctx, ledger.AuditEntry{At: g.now().UTC(), Kind: t.kind, Actor: "quota",
		Reason: t.reason, Units: t.usage, Detail: t.detail})
	g.publish(PublishKind)
}

// Sync reads the balance from the model's source now and stores a snapshot.
// Errors: CodeModelNotFound (not guarded), CodeInvalidRequest (no automatic
// source), CodeUpstreamError (the provider could not be read).
func (g *Guard) Sync(ctx context.Context, upstream, model string) (ledger.Snapshot, error) {
	m, err := g.get(upstream, model)
	if err != nil {
		return ledger.Snapshot{}, err
	}
	if m.source == nil {
		return ledger.Snapshot{}, ledger.Errorf(ledger.CodeInvalidRequest,
			"model %s on upstream %s has no balance source; enter a balance or B0", model, upstream)
	}
	m.syncMu.Lock()
	defer m.syncMu.Unlock()
	bal, err := m.source.Balance(ctx, model)
	if err != nil {
		m.mu.Lock()
		m.syncErr = err.Error()
		m.mu.Unlock()
		g.publish(PublishKind)
		if code := ledger.ErrorCode(err); code != ledger.CodeInternal {
			return ledger.Snapshot{}, err
		}
		// The provider's answer, never a key: sources do not put secrets in errors.
		return ledger.Snapshot{}, &ledger.Error{Code: ledger.CodeUpstreamError,
			Message: fmt.Sprintf("could not read the balance of %s on %s: %v", model, upstream, err)}
	}
	if err := ledger.CheckUnits("balance", bal); err != nil {
		return ledger.Snapshot{}, fmt.Errorf("sync %s/%s: %w", upstream, model, err)
	}
	if es, ok := m.source.(ExpirySource); ok {
		exp, err := es.Expiries(ctx, model)
		if err != nil {
			m.mu.Lock()
			m.syncErr = err.Error()
			m.mu.Unlock()
			return ledger.Snapshot{}, &ledger.Error{Code: ledger.CodeUpstreamError,
				Message: fmt.Sprintf("could not read the package expiries of %s on %s: %v", model, upstream, err)}
		}
		m.mu.Lock()
		m.expiries, m.expiriesAt = exp, g.now()
		m.mu.Unlock()
	}
	return g.record(ctx, m, bal, 0, sourceKind(m.source))
}

func sourceKind(s BalanceSource) string {
	if k, ok := s.(interface{ Kind() string }); ok {
		return k.Kind()
	}
	return "source"
}

// SetBalance records an operator's balance reading taken now. It is treated
// like an API reading (lagged), which can only make B0 smaller, never larger.
func (g *Guard) SetBalance(ctx context.Context, upstream, model string, balance ledger.Units) (ledger.Snapshot, error) {
	m, err := g.get(upstream, model)
	if err != nil {
		return ledger.Snapshot{}, err
	}
	if err := ledger.CheckUnits("balance", balance); err != nil {
		return ledger.Snapshot{}, err
	}
	m.syncMu.Lock()
	defer m.syncMu.Unlock()
	return g.record(ctx, m, balance, 0, SourceManual)
}

// SetB0 records today's true starting balance from the provider console; it
// takes precedence over every estimate for the rest of the day.
func (g *Guard) SetB0(ctx context.Context, upstream, model string, b0 ledger.Units) (ledger.Snapshot, error) {
	m, err := g.get(upstream, model)
	if err != nil {
		return ledger.Snapshot{}, err
	}
	if err := ledger.CheckUnits("b0", b0); err != nil {
		return ledger.Snapshot{}, err
	}
	m.syncMu.Lock()
	defer m.syncMu.Unlock()
	return g.record(ctx, m, 0, b0, SourceManualB0)
}

// record stores one snapshot with the limit it implies and re-judges the model.
func (g *Guard) record(ctx context.Context, m *model, balance, b0 ledger.Units, source string) (ledger.Snapshot, error) {
	if err := g.refresh(ctx, m, false); err != nil { // loads history on first use
		return ledger.Snapshot{}, fmt.Errorf("sync %s/%s: %w", m.key.upstream, m.key.model, err)
	}
	now := g.now()
	day := m.opts.Day(now)
	u, err := g.store.QuotaUsage(ctx, m.key.upstream, m.key.model, day)
	if err != nil {
		return ledger.Snapshot{}, fmt.Errorf("sync %s/%s: %w", m.key.upstream, m.key.model, err)
	}
	series, err := g.series(ctx, m, now)
	if err != nil {
		return ledger.Snapshot{}, fmt.Errorf("sync %s/%s: %w", m.key.upstream, m.key.model, err)
	}
	s := ledger.Snapshot{Upstream: m.key.upstream, Model: m.key.model, Day: day, At: now.UTC(),
		BalanceUnits: balance, UsageAtSync: u.UsageUnits, Source: source}
	if source == SourceManualB0 {
		s.B0Units = b0
		s.BalanceUnits = clamp(b0 - u.UsageUnits) // the true balance now, by definition of B0
	}
	m.mu.Lock()
	snaps := append(append([]ledger.Snapshot(nil), m.snaps...), s)
	exp, expAt := m.expiries, m.expiriesAt
	m.mu.Unlock()
	a := Assess(m.opts, now, snaps, series)
	a.SetExpiries(m.opts, exp, expAt, series)
	a.At(m.opts, now, u.UsageUnits)
	s.LimitUnits, s.LimitV6Units, s.B0Units, s.LagSeconds = a.Limit, a.LimitV6, a.B0.Units, int64(a.Lag/time.Second)
	if source != SourceManualB0 {
		s.Detail = fmt.Sprintf("v6 − limit: %d; expiring within %s: %d", a.LimitV6-a.Limit, m.opts.ExpiryHorizon, a.ExpiringUnits)
	}
	saved, err := g.store.SaveSnapshot(ctx, s)
	if err != nil {
		return ledger.Snapshot{}, fmt.Errorf("sync %s/%s: %w", m.key.upstream, m.key.model, err)
	}
	m.mu.Lock()
	m.snaps = trim(append(m.snaps, saved), now)
	m.a, m.usage = a, u
	m.lastSync, m.usageAtLast, m.lastSource, m.syncErr = saved.At, u.UsageUnits, source, ""
	change := m.judge()
	m.mu.Unlock()
	g.announce(ctx, m, change)
	g.publish(PublishKind)
	return saved, nil
}

func trim(snaps []ledger.Snapshot, now time.Time) []ledger.Snapshot {
	i := sort.Search(len(snaps), func(i int) bool { return now.Sub(snaps[i].At) <= history })
	return snaps[i:]
}

// Row is one guarded model in the admin state (CONTRACTS.md "quota").
type Row struct {
	Upstream      string       `json:"upstream"`
	Model         string       `json:"model"`
	Day           string       `json:"day"`
	UsageToday    ledger.Units `json:"usage_today"`
	HeldInFlight  ledger.Units `json:"held_in_flight"`
	BalanceAtSync ledger.Units `json:"balance_at_sync"`
	UsageAtSync   ledger.Units `json:"usage_at_sync"`
	SyncedAt      *time.Time   `json:"synced_at"`
	LagSeconds    int64        `json:"lag_seconds"`
	B0Estimate    ledger.Units `json:"b0_estimate"`
	B0Manual      bool         `json:"b0_manual"`
	Limit         ledger.Units `json:"limit"`
	LimitV6       ledger.Units `json:"limit_v6"`
	Evicted       bool         `json:"evicted"`
	EvictedReason string       `json:"evicted_reason"`
	Source        string       `json:"source,omitempty"`
	SyncError     string       `json:"sync_error,omitempty"`
	DailyCap      ledger.Units `json:"daily_cap"`
	UsageWall     ledger.Units `json:"usage_wall"`
	BalanceWall   ledger.Units `json:"balance_wall"`
	SmallBuffer   ledger.Units `json:"small_buffer"`
	TopUpPlan     ledger.Units `json:"topup_plan,omitempty"`
	ExpiringUnits ledger.Units `json:"expiring_units"` // left out of limit: packages expiring within the horizon
	CanSync       bool         `json:"can_sync"`       // an automatic balance source is configured (Sync works)
}

// State returns one row per guarded model, in configuration order, with
// today's usage and holds re-read from the store.
func (g *Guard) State(ctx context.Context) ([]Row, error) {
	rows := make([]Row, 0, len(g.order))
	for _, k := range g.order {
		m := g.models[k]
		if err := g.refresh(ctx, m, false); err != nil {
			return nil, fmt.Errorf("quota state of %s/%s: %w", k.upstream, k.model, err)
		}
		m.mu.Lock()
		r := Row{Upstream: k.upstream, Model: k.model, Day: m.a.Day, UsageToday: m.usage.UsageUnits,
			HeldInFlight: m.usage.HeldInFlight, BalanceAtSync: m.a.BalanceAtSync, UsageAtSync: m.a.UsageAtSync,
			LagSeconds: int64(m.a.Lag / time.Second), B0Estimate: m.a.B0.Units, B0Manual: m.a.B0.Manual,
			Limit: m.a.Limit, LimitV6: m.a.LimitV6, Evicted: m.evicted, EvictedReason: m.reason,
			Source: m.lastSource, SyncError: m.syncErr, DailyCap: m.opts.DailyCap, UsageWall: m.opts.UsageWall,
			BalanceWall: m.opts.BalanceWall, SmallBuffer: m.opts.SmallBuffer, ExpiringUnits: m.a.ExpiringUnits,
			CanSync: m.source != nil}
		if m.topUpDay == m.a.Day {
			r.TopUpPlan = m.topUpPlan
		}
		if m.a.Synced {
			at := m.a.SyncedAt.UTC()
			r.SyncedAt = &at
		}
		m.mu.Unlock()
		rows = append(rows, r)
	}
	return rows, nil
}

// Run syncs every model with an automatic source at start, then every
// SyncEvery (SyncEveryLow when the balance or the headroom is below
// LowBalance), on a burst, and re-judges at each local midnight. It returns
// when ctx is done. Sync errors are kept for State and retried next tick.
func (g *Guard) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for _, k := range g.order {
		m := g.models[k]
		wg.Add(1)
		go func() {
			defer wg.Done()
			g.loop(ctx, m)
		}()
	}
	wg.Wait()
}

func (g *Guard) loop(ctx context.Context, m *model) {
	auto := m.source != nil
	if auto {
		_, _ = g.Sync(ctx, m.key.upstream, m.key.model)
	} else {
		_ = g.refresh(ctx, m, true)
	}
	for {
		now := g.now()
		wait := m.opts.NextDayStart(now).Sub(now)
		if auto {
			wait = min(wait, g.interval(m))
		}
		t := time.NewTimer(max(wait, time.Second))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-m.kick:
			t.Stop()
		case <-t.C:
		}
		if ctx.Err() != nil {
			return
		}
		if auto {
			_, _ = g.Sync(ctx, m.key.upstream, m.key.model)
		} else {
			_ = g.refresh(ctx, m, true)
		}
		g.publish(PublishKind)
	}
}

func (g *Guard) interval(m *model) time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.a.BalanceAtSync < m.opts.LowBalance || m.a.Limit-m.usage.UsageUnits < m.opts.LowBalance {
		return m.opts.SyncEveryLow
	}
	return m.opts.SyncEvery
}

// PlanTopUp returns today's top-up plan for a model now (dry run).
func (g *Guard) PlanTopUp(upstream, model string) (ledger.Units, error) {
	m, err := g.get(upstream, model)
	if err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.a.B0.Known {
		return 0, ledger.Errorf(ledger.CodeQuotaGuard, "no balance reading for %s/%s yet", upstream, model)
	}
	return PlanTopUp(m.opts, m.usage.UsageUnits, m.a.B0.Units), nil
}
