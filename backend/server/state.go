package server

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/quotagate/quotagate/backend/admin"
	"github.com/quotagate/quotagate/backend/config"
	"github.com/quotagate/quotagate/backend/gateway"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/live"
	"github.com/quotagate/quotagate/backend/postgres"
)

// ensureTenantKeys gives every keyless tenant a key kept in the data dir, so
// the embedded default's `local` tenant works with no config at all.
func (s *Server) ensureTenantKeys() error {
	for i := range s.tenants {
		t := &s.tenants[i]
		if len(t.KeyHashes) > 0 {
			continue
		}
		key, err := loadOrCreateSecret(filepath.Join(s.opts.DataDir, keysDir, t.ID+".key"), tenantKey(t.ID))
		if err != nil {
			return fmt.Errorf("key for tenant %s: %w", t.ID, err)
		}
		t.KeyHashes = []string{ledger.HashKey(key)}
		s.keys[t.ID] = key
	}
	return nil
}

func tenantsForLedger(ts []config.Tenant) []ledger.Tenant {
	c := config.Config{Tenants: ts}
	return c.LedgerTenants()
}

// ApplyTenants applies a new tenant policy (budgets, limits, keys) — a config
// reload — and tells the dashboards. Keyless tenants keep their generated key.
func (s *Server) ApplyTenants(ctx context.Context, tenants []config.Tenant) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.applyTenantsLocked(ctx, tenants, ledger.ActorConfig)
}

// applyTenantsLocked is ApplyTenants with s.mu held, audited as actor
// (the dashboard's tenant edits are the operator's, tenants.go).
func (s *Server) applyTenantsLocked(ctx context.Context, tenants []config.Tenant, actor ledger.Actor) error {
	next := append([]config.Tenant(nil), tenants...)
	for i := range next {
		if len(next[i].KeyHashes) == 0 {
			for _, old := range s.tenants {
				if old.ID == next[i].ID {
					next[i].KeyHashes = old.KeyHashes
				}
			}
		}
	}
	if err := s.store.ApplyTenants(ctx, tenantsForLedger(next), actor); err != nil {
		return fmt.Errorf("apply tenants: %w", err)
	}
	// A revoked key must stop working now, not at the gateway's next
	// tenant refresh; new request limits apply to the next call.
	s.assembly.gateway.InvalidateTenants()
	s.assembly.limiter.Replace(rateLimits(next))
	s.tenants = next
	if s.fence != nil {
		ids := make([]string, len(next))
		for i, t := range next {
			ids[i] = t.ID
		}
		s.fence.reopen(ids)
	}
	s.hub.Publish(live.Change{Kind: live.KindConfig})
	return nil
}

// State builds the admin snapshot: balances from the ledger, recent runs and
// holds, gates, quota guards and balance snapshots.
func (s *Server) State(ctx context.Context) (admin.State, error) {
	now := s.opts.Clock.Now()
	st := admin.State{
		Version:       s.opts.Version,
		StartedAt:     s.started,
		UptimeSeconds: int64(now.Sub(s.started) / time.Second),
		DataDir:       s.opts.DataDir,
		Addr:          strings.TrimPrefix(s.URL(), "http://"),
		Meter:         s.cfg.Meter,
		Currency:      s.money.Currency,
		Clock:         admin.ClockState{Offset: s.opts.Clock.Offset().String(), Now: now.UTC()},
	}
	for _, u := range s.cfg.Upstreams {
		st.Demo = st.Demo || u.Kind == config.KindDemo
	}
	var books admin.State
	if err := s.ledgerState(ctx, &books, now); err != nil {
		if !s.ledgerUnreachable(ctx, err) {
			return st, err
		}
		// The dashboard keeps answering while a shared ledger is away (a
		// database restarting): it says so, and shows the ledger's figures
		// as last read rather than none at all.
		s.log.Warn("admin state: the ledger is unreachable", "err", err)
		st.Degraded = "ledger unreachable: " + err.Error()
		s.mu.Lock()
		books = s.lastBooks
		s.mu.Unlock()
	} else {
		s.mu.Lock()
		s.lastBooks = books
		s.mu.Unlock()
	}
	st.Tenants, st.Periods, st.Runs, st.Holds = books.Tenants, books.Periods, books.Runs, books.Holds
	st.Evidence, st.Snapshots, st.Alerts, st.Quota = books.Evidence, books.Snapshots, books.Alerts, books.Quota
	st.Gates = s.gates.State()
	st.Keys = s.assembly.keys()
	st.Routes = routeStates(s.assembly.gateway.Routes(), st.Quota, st.Gates)
	st.Normalize()
	return st, nil
}

// ledgerState fills st with what the ledger holds.
func (s *Server) ledgerState(ctx context.Context, st *admin.State, now time.Time) error {
	var err error
	if st.Tenants, err = s.tenantStates(ctx); err != nil {
		return err
	}
	if st.Periods, err = s.periodHistories(ctx, st.Tenants); err != nil {
		return err
	}
	if st.Runs, err = s.store.Runs(ctx, ledger.RunFilter{Limit: admin.MaxRuns}); err != nil {
		return fmt.Errorf("list runs: %w", err)
	}
	if st.Holds, err = s.store.Runs(ctx, ledger.RunFilter{HoldingOnly: true, Limit: 500}); err != nil {
		return fmt.Errorf("list holds: %w", err)
	}
	st.Evidence = s.holdFindings(st.Holds)
	if st.Snapshots, err = s.snapshots(ctx, now); err != nil {
		return err
	}
	if st.Alerts, err = s.alertsState(ctx); err != nil {
		return err
	}
	if g := s.assembly.guard; g != nil {
		if st.Quota, err = g.State(ctx); err != nil {
			return fmt.Errorf("quota state: %w", err)
		}
	}
	return nil
}

// ledgerUnreachable says err came from a shared ledger that is away (as
// opposed to one that answered with an error).
func (s *Server) ledgerUnreachable(ctx context.Context, err error) bool {
	st, ok := s.store.(*postgres.Store)
	return ok && (postgres.Unreachable(err) || st.Ping(ctx) != nil)
}

func (s *Server) tenantStates(ctx context.Context) ([]admin.TenantState, error) {
	s.mu.Lock()
	policy := map[string]config.Tenant{}
	var order []string
	for _, t := range s.tenants {
		policy[t.ID] = t
		order = append(order, t.ID)
	}
	s.mu.Unlock()

	balances := map[string]ledger.Balance{}
	bs, err := s.store.Balances(ctx)
	if err != nil {
		return nil, fmt.Errorf("read balances: %w", err)
	}
	for _, b := range bs {
		balances[b.TenantID] = b
		if _, ok := policy[b.TenantID]; !ok { // no longer configured; its history still shows
			order = append(order, b.TenantID)
		}
	}
	rates := map[string]*admin.RateUse{}
	for _, r := range s.assembly.limiter.State() {
		rates[r.Tenant] = &admin.RateUse{LastMinute: r.LastMinute, LastHour: r.LastHour, Refused: r.Refused}
	}
	queued := s.assembly.gateway.Queued()
	out := make([]admin.TenantState, 0, len(order))
	for _, id := range order {
		t, configured := policy[id]
		b := balances[id]
		b.TenantID = id // a configured tenant's row may not be written yet
		out = append(out, admin.TenantState{Balance: b, TenantLimits: admin.TenantLimits{
			Queued: queued[id], MaxConcurrent: t.MaxConcurrent, PerMinute: t.RateLimits.PerMinute,
			PerHour: t.RateLimits.PerHour, Rate: rates[id], Removed: !configured,
		}})
	}
	return out, nil
}

// periodHistories returns the last periods' spend of each tenant whose
// budget renews (nil when none does).
func (s *Server) periodHistories(ctx context.Context, tenants []admin.TenantState) (map[string][]ledger.PeriodSpend, error) {
	var out map[string][]ledger.PeriodSpend
	for _, t := range tenants {
		if t.Period == "" {
			continue
		}
		h, err := s.store.PeriodHistory(ctx, t.TenantID, ledger.PeriodHistoryLength)
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = map[string][]ledger.PeriodSpend{}
		}
		out[t.TenantID] = h
	}
	return out, nil
}

// snapshots returns the latest balance syncs of every guarded model.
func (s *Server) snapshots(ctx context.Context, now time.Time) ([]ledger.Snapshot, error) {
	var out []ledger.Snapshot
	for _, u := range s.cfg.Upstreams {
		if u.Quota == nil {
			continue
		}
		for _, m := range u.Models {
			snaps, err := s.store.Snapshots(ctx, u.Name, m, now.Add(-48*time.Hour))
			if err != nil {
				return nil, fmt.Errorf("snapshots of %s/%s: %w", u.Name, m, err)
			}
			out = append(out, snaps...)
		}
	}
	slices.SortFunc(out, func(a, b ledger.Snapshot) int { return b.At.Compare(a.At) })
	if len(out) > admin.MaxSnapshots {
		out = out[:admin.MaxSnapshots]
	}
	return out, nil
}

// routeStates are the gateway's routes with what each target can take now:
// its guard's eviction of the model, its gate's free slots.
func routeStates(routes []gateway.RouteView, quota []admin.QuotaState, gates []admin.GateState) []admin.RouteState {
	evicted := map[[2]string]bool{}
	for _, q := range quota {
		evicted[[2]string{q.Upstream, q.Model}] = q.Evicted
	}
	full := map[string]bool{}
	for _, g := range gates {
		full[g.Upstream] = g.MaxConcurrent > 0 && g.InFlight >= g.MaxConcurrent
	}
	out := make([]admin.RouteState, 0, len(routes))
	for _, r := range routes {
		rs := admin.RouteState{Model: r.Model, Targets: make([]admin.RouteTarget, 0, len(r.Targets))}
		for _, t := range r.Targets {
			rs.Targets = append(rs.Targets, admin.RouteTarget{Upstream: t.Upstream, UpstreamModel: t.UpstreamModel,
				Priority: t.Priority, Evicted: evicted[[2]string{t.Upstream, r.Model}], Full: full[t.Upstream], Keys: t.Keys})
		}
		out = append(out, rs)
	}
	return out
}
