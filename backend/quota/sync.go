package quota

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
)

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
	// The provider is read outside m.work: a slow provider must not hold up
	// a Check at the rollover or an Observe.
	bal, err := m.source.Balance(ctx, model)
	if err != nil {
		g.syncFailed(m, err)
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
	var exp []Expiry
	es, listed := m.source.(ExpirySource)
	if listed {
		if exp, err = es.Expiries(ctx, model); err != nil {
			g.syncFailed(m, err)
			return ledger.Snapshot{}, &ledger.Error{Code: ledger.CodeUpstreamError,
				Message: fmt.Sprintf("could not read the package expiries of %s on %s: %v", model, upstream, err)}
		}
	}
	m.work.Lock()
	defer g.unlockWork(ctx, m)
	if listed {
		m.mu.Lock()
		m.expiries, m.expiriesAt = exp, g.now()
		m.mu.Unlock()
	}
	return g.record(ctx, m, bal, 0, sourceKind(m.source))
}

func (g *Guard) syncFailed(m *model, err error) {
	m.mu.Lock()
	m.syncErr = err.Error()
	m.mu.Unlock()
	g.publish(PublishKind)
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
	return g.recordManual(ctx, upstream, model, "balance", balance, SourceManual)
}

// SetB0 records today's true starting balance from the provider console; it
// takes precedence over every estimate for the rest of the day.
func (g *Guard) SetB0(ctx context.Context, upstream, model string, b0 ledger.Units) (ledger.Snapshot, error) {
	return g.recordManual(ctx, upstream, model, "b0", b0, SourceManualB0)
}

// recordManual records an operator's reading of one model, named what in a
// refusal: a balance, or (SourceManualB0) today's starting balance.
func (g *Guard) recordManual(ctx context.Context, upstream, model, what string, v ledger.Units, source string) (ledger.Snapshot, error) {
	m, err := g.get(upstream, model)
	if err != nil {
		return ledger.Snapshot{}, err
	}
	if err := ledger.CheckUnits(what, v); err != nil {
		return ledger.Snapshot{}, err
	}
	m.work.Lock()
	defer g.unlockWork(ctx, m)
	if source == SourceManualB0 {
		return g.record(ctx, m, 0, v, source)
	}
	return g.record(ctx, m, v, 0, source)
}

// record stores one snapshot with the limit it implies and re-judges the
// model; m.work must be held.
func (g *Guard) record(ctx context.Context, m *model, balance, b0 ledger.Units, source string) (ledger.Snapshot, error) {
	if err := g.refreshLocked(ctx, m, false); err != nil { // loads history on first use
		return ledger.Snapshot{}, fmt.Errorf("sync %s/%s: %w", m.key.upstream, m.key.model, err)
	}
	now := g.now()
	day := m.opts.Day(now)
	u, err := g.store.QuotaUsage(ctx, m.key.upstream, m.key.model, day)
	if err != nil {
		return ledger.Snapshot{}, fmt.Errorf("sync %s/%s: %w", m.key.upstream, m.key.model, err)
	}
	s := ledger.Snapshot{Upstream: m.key.upstream, Model: m.key.model, Day: day, At: now.UTC(),
		BalanceUnits: balance, UsageAtSync: u.UsageUnits, Source: source}
	if source == SourceManualB0 {
		s.B0Units = b0
		s.BalanceUnits = clamp(b0 - u.UsageUnits) // the true balance now, by definition of B0
	}
	a, err := g.assess(ctx, m, now, &s)
	if err != nil {
		return ledger.Snapshot{}, fmt.Errorf("sync %s/%s: %w", m.key.upstream, m.key.model, err)
	}
	a.At(m.opts, now, u.UsageUnits)
	s.LimitUnits, s.LimitV6Units, s.B0Units, s.LagSeconds = a.Limit, a.LimitV6, a.B0.Units, int64(a.Lag/time.Second)
	if source != SourceManualB0 {
		s.Detail = fmt.Sprintf("v6 − limit: %d; expiring within %s: %d", a.LimitV6-a.Limit, m.opts.ExpiryHorizon, a.ExpiringUnits)
	} else if x := a.B0.ManualExcess(); x > 0 {
		s.Detail = fmt.Sprintf("manual B0 %d is %d above what the readings support (%d): B0 %d", b0, x, a.B0.Readings, a.B0.Units)
	}
	m.mu.Lock()
	s.Detail = joinDetail(s.Detail, overrunDetail(m.overrun.MaxMilli))
	m.mu.Unlock()
	m.mu.Lock()
	m.saving = true // its commit reaches ObserveSync before SaveSnapshot returns
	m.mu.Unlock()
	saved, err := g.store.SaveSnapshot(ctx, s)
	m.mu.Lock()
	m.saving = false
	m.mu.Unlock()
	if err != nil {
		return ledger.Snapshot{}, fmt.Errorf("sync %s/%s: %w", m.key.upstream, m.key.model, err)
	}
	m.mu.Lock()
	m.snaps = trim(append(m.snaps, saved), now)
	m.a, m.usage = a, u
	m.lastSync, m.usageAtLast, m.lastSource, m.syncErr = saved.At, u.UsageUnits, source, ""
	change := m.judge()
	m.mu.Unlock()
	err = g.announce(ctx, m, change)
	if change == nil {
		// The snapshot's commit reached the hub before the model took it in;
		// a transition's audit row (announce) tells the hub after it.
		g.publish(PublishKind)
	}
	if err != nil {
		return saved, fmt.Errorf("sync %s/%s: %w", m.key.upstream, m.key.model, err)
	}
	return saved, nil
}

func trim(snaps []ledger.Snapshot, now time.Time) []ledger.Snapshot {
	i := sort.Search(len(snaps), func(i int) bool { return now.Sub(snaps[i].At) <= history })
	return snaps[i:]
}

// Run syncs every model with an automatic source at start, then every
// SyncEvery (SyncEveryLow when the balance or the headroom is below
// LowBalance, and until the day's refund has shown: Assessment.SyncEvery),
// on a burst, and re-judges at each local midnight. It returns
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
	tick := func() {
		if auto && g.polls(ctx, m) {
			_, _ = g.Sync(ctx, m.key.upstream, m.key.model) // kept in syncErr for State
		} else {
			_ = g.refresh(ctx, m, true) // an unwritten audit row stays due: the next refresh retries it
		}
	}
	tick()
	for {
		now := g.now()
		wait := m.opts.NextDayStart(now).Sub(now)
		if auto {
			wait = min(wait, g.interval(m))
		}
		if !pause(ctx, wait, m.kick) || ctx.Err() != nil {
			return
		}
		tick()
		g.publish(PublishKind)
	}
}

// pause waits wait (a second at the least, so that a clock at the edge of a
// day cannot spin a loop) or until kick; false when ctx ended first. A nil
// kick never fires.
func pause(ctx context.Context, wait time.Duration, kick <-chan struct{}) bool {
	t := time.NewTimer(max(wait, time.Second))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-kick:
	case <-t.C:
	}
	return true
}

func (g *Guard) interval(m *model) time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.a.SyncEvery(m.opts, g.now(), m.usage.UsageUnits)
}
