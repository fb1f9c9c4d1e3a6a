package quota

import (
	"context"
	"fmt"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
)

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
	// B0ManualExcess is how far the day's manual B0 stands above what the
	// readings support (it was cut down to B0Readings); 0 when it does not.
	B0ManualExcess ledger.Units `json:"b0_manual_excess"`
	B0Readings     ledger.Units `json:"b0_readings"`
	// CarrySettled and CarryHeld are what yesterday's runs draw from today's
	// pool (settled since 00:00, still held); AdmitLimit is the limit the
	// ledger enforces on today's runs after them and the learned overrun.
	CarrySettled ledger.Units `json:"carry_settled"`
	CarryHeld    ledger.Units `json:"carry_held"`
	AdmitLimit   ledger.Units `json:"admit_limit"`
	// Overrun is the learned ratio of trusted usage to reserve (1: none);
	// OverrunTail the units held back once beyond it for the one call that
	// may overrun further (Overrun.Bound; 0 until OverrunMinSamples calls).
	Overrun     float64      `json:"overrun"`
	OverrunTail ledger.Units `json:"overrun_tail"`
	// Headroom is where today's margin goes: how far below the estimated
	// pool today's calls are admitted, term by term.
	Headroom Headroom `json:"headroom"`
}

// State returns one row per guarded model, in configuration order, with
// today's usage and holds re-read from the store. It is a read: it changes
// neither the guard nor the ledger. A model not yet assessed for today is
// shown as the next Check would find it; eviction is otherwise shown as the
// guard enforces it (Observe and the sync loop move it).
func (g *Guard) State(ctx context.Context) ([]Row, error) {
	rows := make([]Row, 0, len(g.order))
	for _, k := range g.order {
		r, err := g.row(ctx, g.models[k])
		if err != nil {
			return nil, fmt.Errorf("quota state of %s/%s: %w", k.upstream, k.model, err)
		}
		rows = append(rows, r)
	}
	return rows, nil
}

func (g *Guard) row(ctx context.Context, m *model) (Row, error) {
	now := g.now()
	day := m.opts.Day(now)
	u, err := g.store.QuotaUsage(ctx, m.key.upstream, m.key.model, day)
	if err != nil {
		return Row{}, err
	}
	m.mu.Lock()
	current := m.loaded && m.a.Day == day
	a, evicted, reason := m.a, m.evicted, m.reason
	r := Row{Upstream: m.key.upstream, Model: m.key.model, Source: m.lastSource, SyncError: m.syncErr, CanSync: m.source != nil}
	if m.topUpDay == day {
		r.TopUpPlan = m.topUpPlan
	}
	m.mu.Unlock()
	if !current {
		if a, err = g.unloadedAssessment(ctx, m, now); err != nil {
			return Row{}, err
		}
		if a.Carry, _, err = g.carry(ctx, m, now, u); err != nil {
			return Row{}, err
		}
		evicted, reason = Verdict(m.opts, a, u.UsageUnits)
	}
	a.At(m.opts, now, u.UsageUnits)
	r.B0ManualExcess, r.B0Readings = a.B0.ManualExcess(), a.B0.Readings
	r.CarrySettled, r.CarryHeld, r.AdmitLimit = a.Carry.Settled, a.Carry.Held, a.AdmitLimit(u.UsageUnits)
	r.Overrun, r.OverrunTail = float64(max(a.OverrunMilli, noOverrun))/noOverrun, a.OverrunTail
	r.Headroom = a.Headroom(m.opts, u.UsageUnits)
	r.Day, r.UsageToday, r.HeldInFlight = a.Day, u.UsageUnits, u.HeldInFlight
	r.BalanceAtSync, r.UsageAtSync, r.LagSeconds = a.BalanceAtSync, a.UsageAtSync, int64(a.Lag/time.Second)
	r.B0Estimate, r.B0Manual, r.Limit, r.LimitV6 = a.B0.Units, a.B0.Manual, a.Limit, a.LimitV6
	r.Evicted, r.EvictedReason, r.ExpiringUnits = evicted, reason, a.ExpiringUnits
	r.DailyCap, r.UsageWall, r.BalanceWall, r.SmallBuffer = m.opts.DailyCap, m.opts.UsageWall, m.opts.BalanceWall, m.opts.SmallBuffer
	if a.Synced {
		at := a.SyncedAt.UTC()
		r.SyncedAt = &at
	}
	return r, nil
}

// unloadedAssessment is m's assessment at now from the store, for a model
// whose history the guard has not loaded (or not re-assessed today) yet.
func (g *Guard) unloadedAssessment(ctx context.Context, m *model, now time.Time) (Assessment, error) {
	m.mu.Lock()
	loaded := m.loaded
	m.mu.Unlock()
	if loaded {
		return g.assess(ctx, m, now, nil)
	}
	snaps, err := g.store.Snapshots(ctx, m.key.upstream, m.key.model, now.Add(-history))
	if err != nil {
		return Assessment{}, err
	}
	series, err := g.series(ctx, m, now)
	if err != nil {
		return Assessment{}, err
	}
	return Assess(m.opts, now, snaps, series), nil
}

// Position is a guarded model's position now, re-read from the store: what
// the top-up's clamps need.
type Position struct {
	Day     string
	Usage   ledger.Units
	Held    ledger.Units
	B0      B0Estimate
	Limit   ledger.Units // what the ledger admits today's runs up to (AdmitLimit)
	Evicted bool
	Reason  string
}

// Position re-reads today's usage and holds, re-judges eviction (auditing a
// change, as Observe does) and re-applies the expiry horizon, as Check does.
func (g *Guard) Position(ctx context.Context, upstream, model string) (Position, error) {
	m, err := g.get(upstream, model)
	if err != nil {
		return Position{}, err
	}
	if err := g.refresh(ctx, m, false); err != nil {
		return Position{}, err
	}
	now := g.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.a.At(m.opts, now, m.usage.UsageUnits)
	return Position{Day: m.a.Day, Usage: m.usage.UsageUnits, Held: m.usage.HeldInFlight, B0: m.a.B0,
		Limit: m.a.AdmitLimit(m.usage.UsageUnits), Evicted: m.evicted, Reason: m.reason}, nil
}

// HasSource reports whether a guarded model's balance is read automatically.
func (g *Guard) HasSource(upstream, model string) bool {
	m, ok := g.models[modelKey{upstream, model}]
	return ok && m.source != nil
}

// ShowTopUpPlan keeps the top-up's plan for day, for State.
func (g *Guard) ShowTopUpPlan(upstream, model, day string, plan ledger.Units) {
	if m, ok := g.models[modelKey{upstream, model}]; ok {
		m.mu.Lock()
		m.topUpDay, m.topUpPlan = day, plan
		m.mu.Unlock()
	}
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
