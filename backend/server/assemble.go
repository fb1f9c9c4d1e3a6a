package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/quotagate/quotagate/backend/admin"
	"github.com/quotagate/quotagate/backend/config"
	"github.com/quotagate/quotagate/backend/gate"
	"github.com/quotagate/quotagate/backend/gateway"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/live"
	"github.com/quotagate/quotagate/backend/meter"
	"github.com/quotagate/quotagate/backend/metrics"
	"github.com/quotagate/quotagate/backend/quota"
	"github.com/quotagate/quotagate/backend/ratelimit"
	"github.com/quotagate/quotagate/backend/scrub"
	"github.com/quotagate/quotagate/backend/upstream"
	"github.com/quotagate/quotagate/backend/upstream/balance"
	"github.com/quotagate/quotagate/backend/upstream/demo"
)

// assembly is the default wiring of the /v1 gateway: meter, upstreams (the
// demo upstream on its own loopback listener), rate limits, gates, quota
// guards, and their hooks into the live hub, the admin API and /metrics.
type assembly struct {
	store   ledger.Store
	gateway *gateway.Gateway
	limiter *ratelimit.Limiter
	guard   *quota.Guard            // nil when no model is guarded
	demos   map[string]*demo.Server // by upstream name
	pools   []*upstream.Client      // the upstreams with a key pool, for the state
	stop    context.CancelFunc
}

// assemble builds the default gateway from p. Its background work (quota
// syncs) runs until close.
func assemble(p parts) (_ *assembly, err error) {
	cfg := p.Config
	a := &assembly{store: p.Store, demos: map[string]*demo.Server{}, stop: func() {}}
	defer func() {
		if err != nil {
			a.close()
		}
	}()
	m, err := meter.New(cfg.Meter)
	if err != nil {
		return nil, err
	}
	reserve := reservePolicy(cfg)
	ups, forward, err := a.upstreams(cfg, m, p.Now)
	if err != nil {
		return nil, err
	}
	a.limiter = ratelimit.New(ratelimit.Options{Now: p.Now})
	a.limiter.Replace(rateLimits(cfg.Tenants))
	if err := metrics.Register(p.Registry, p.Gates, a.limiter); err != nil {
		return nil, fmt.Errorf("register metrics: %w", err)
	}
	if err := p.Registry.Register(metrics.NewSpendCollector(spends(p.Store), p.Money.Currency)); err != nil {
		return nil, fmt.Errorf("register metrics: %w", err)
	}
	guard, err := a.startGuard(p, m, reserve)
	if err != nil {
		return nil, err
	}
	a.gateway = gateway.New(gatewayLimits(gateway.Options{
		Store:          p.Fence.wrap(p.Store),
		Meter:          m,
		Reserve:        reserve,
		Upstreams:      ups,
		Routes:         gatewayRoutes(cfg),
		Money:          p.Money,
		ForwardHeaders: forward,
		RateLimiter:    a.limiter,
		Gate:           gateway.FromGates(p.Gates),
		Retry:          gate.DefaultRetryPolicy,
		Quota:          guard,
		Elsewhere:      elsewhere(p.Store),
		KeepProviderID: keepProviderID(cfg),
		Logger:         p.Logger,
		Scrub:          p.Scrub,
		Now:            p.Now,
	}, cfg.Limits))
	return a, nil
}

// keepProviderIDAfter is how long a stream on an upstream with a
// usage_lookup runs after its answer named the call before the id is kept
// on the run: most calls end sooner and keep it with their end.
const keepProviderIDAfter = 2 * time.Second

// keepProviderID names the upstreams whose streams keep their provider id
// before they end: those with a usage_lookup, which asks by it.
func keepProviderID(cfg *config.Config) gateway.KeepProviderID {
	k := gateway.KeepProviderID{After: keepProviderIDAfter, Upstreams: map[string]bool{}}
	for _, u := range cfg.Upstreams {
		if u.UsageLookup != nil {
			k.Upstreams[u.Name] = true
		}
	}
	return k
}

// upstreams are the clients of the configured upstreams, in config order,
// with the built-in demo started on its own loopback listener; forward
// names the request headers the gateway passes on (the demo's fault plan).
func (a *assembly) upstreams(cfg *config.Config, m meter.Meter, now func() time.Time) (ups []gateway.Upstream, forward []string, err error) {
	for _, u := range cfg.Upstreams {
		baseURL := u.BaseURL
		if u.Kind == config.KindDemo {
			d, err := demo.Start(demoOptions(u, m))
			if err != nil {
				return nil, nil, fmt.Errorf("start demo upstream %s: %w", u.Name, err)
			}
			a.demos[u.Name] = d
			baseURL = d.URL()
			forward = []string{demo.PlanHeader} // lets a caller script the demo's faults
		}
		c, err := upstream.New(upstream.Options{Name: u.Name, BaseURL: baseURL, APIKey: u.APIKey, Models: u.Models, Protocols: u.Protocols, ReasoningSwitch: u.ReasoningSwitch,
			// a non-streaming reasoning call sends its headers only when done
			ResponseHeaderTimeout: upstreamTimeout(cfg.Limits),
			APIKeys:               u.APIKeys, KeyCooldown: u.KeyCooldown, Now: now})
		if err != nil {
			return nil, nil, fmt.Errorf("upstream %s: %w", u.Name, err)
		}
		if len(u.APIKeys) > 0 {
			a.pools = append(a.pools, c)
		}
		ups = append(ups, c)
	}
	return ups, forward, nil
}

// startGuard builds the quota guard and its nightly top-up and starts both,
// until close; nil (no guard) when no model is guarded.
func (a *assembly) startGuard(p parts, m meter.Meter, reserve meter.ReservePolicy) (gateway.QuotaGuard, error) {
	g, err := newGuard(p)
	if err != nil || g == nil {
		return nil, err
	}
	a.guard = g
	top, err := newTopUp(p, g, m, reserve)
	if err != nil {
		return nil, err
	}
	ctx, stop := context.WithCancel(context.Background())
	a.stop = stop
	go g.Run(ctx)
	go top.Run(ctx)
	return g, nil
}

// spends reads every tenant's spend from the ledger, for /metrics.
func spends(store ledger.Store) func() ([]metrics.Spend, error) {
	return func() ([]metrics.Spend, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		bs, err := store.Balances(ctx)
		if err != nil {
			return nil, fmt.Errorf("read balances: %w", err)
		}
		out := make([]metrics.Spend, 0, len(bs))
		for _, b := range bs {
			out = append(out, metrics.Spend{Tenant: b.TenantID, Units: int64(b.SpentUnits), Micros: int64(b.SpentMicros)})
		}
		return out, nil
	}
}

// demoOptions makes the demo report usage in the configured meter's own
// units, so that its answers settle as trusted under either meter.
func demoOptions(u config.Upstream, m meter.Meter) demo.Options {
	o := demo.Options{}
	for _, m := range u.Models { // the demo answers under the upstream's names
		o.Models = append(o.Models, u.UpstreamModel(m))
	}
	if m.Name() == config.MeterUTF8Bytes {
		return o // the demo's default usage is UTF-8 bytes
	}
	o.PromptUnits = func(body []byte) int64 { return int64(gateway.ChatInputUnits(m, body)) }
	o.ResponsesPromptUnits = func(body []byte) int64 { return int64(gateway.ResponsesInputUnits(m, body)) }
	o.MessagesPromptUnits = func(body []byte) int64 { return int64(gateway.MessagesInputUnits(m, body)) }
	o.CompletionsPromptUnits = func(body []byte) int64 { return int64(gateway.CompletionsInputUnits(m, body)) }
	o.EmbeddingsPromptUnits = func(body []byte) int64 { return int64(gateway.EmbeddingsInputUnits(m, body)) }
	o.GeminiPromptUnits = func(model string, body []byte) int64 { return int64(gateway.GeminiInputUnits(m, model, body)) }
	o.CompletionUnits = func(model, text string) int64 { return int64(m.Count(model, text)) }
	return o
}

func rateLimits(ts []config.Tenant) map[string]ratelimit.Limits {
	out := make(map[string]ratelimit.Limits, len(ts))
	for _, t := range ts {
		out[t.ID] = ratelimit.Limits{PerMinute: t.RateLimits.PerMinute, PerHour: t.RateLimits.PerHour}
	}
	return out
}

// newGuard builds the quota guard of every upstream model with a quota
// section, or returns nil when there is none.
func newGuard(p parts) (*quota.Guard, error) {
	var models []quota.ModelOptions
	sources := map[string]quota.BalanceSource{}
	for _, u := range p.Config.Upstreams {
		q := u.Quota
		if q == nil {
			continue
		}
		o := guardOptions(q)
		reasoning := meter.ReservePolicy{ReasoningModels: u.ReasoningModels}
		for _, m := range u.Models {
			o.Reasoning = reasoning.IsReasoning(m) // starts from the reasoning prior overrun
			models = append(models, quota.ModelOptions{Upstream: u.Name, Model: m, Options: o})
		}
		src, err := balance.New(balanceConfig(q.Balance), nil)
		if err != nil {
			return nil, fmt.Errorf("balance source of upstream %s: %w", u.Name, err)
		}
		sources[u.Name] = scrubbedSource(src, p.Scrub)
	}
	if len(models) == 0 {
		return nil, nil
	}
	hub := p.Hub
	g, err := quota.NewGuard(p.Store, models, sources, p.Now, func(string) { hub.Publish(live.Change{Kind: live.KindQuota}) })
	if err != nil {
		return nil, fmt.Errorf("quota guard: %w", err)
	}
	if poller, ok := p.Store.(quota.Poller); ok { // a shared ledger: one gateway polls each balance
		g.SharePolling(poller)
	}
	return g, nil
}

// newTopUp builds the nightly top-up executor of the guarded models whose
// config enables it; it does nothing for the others. Models with dry_run
// only audit their plan.
func newTopUp(p parts, g *quota.Guard, m meter.Meter, reserve meter.ReservePolicy) (*quota.TopUp, error) {
	spend := map[string]bool{}
	prompts := map[string]string{}
	for _, u := range p.Config.Upstreams {
		if q := u.Quota; q != nil && q.TopUp.Enabled {
			spend[u.Name] = !q.TopUp.DryRun
			prompts[u.Name] = q.TopUp.Prompt
		}
	}
	var caller quota.Caller
	if p.TopUpKey != "" {
		var err error
		if caller, err = newFillerCaller(p, m, reserve, prompts); err != nil {
			return nil, err
		}
	}
	top, err := quota.NewTopUp(g, caller, quota.TopUpRunOptions{Spend: spend})
	if err != nil {
		return nil, fmt.Errorf("quota top-up: %w", err)
	}
	return top, nil
}

// Cancel is the operator's cancel from the dashboard (admin.Canceller).
func (a *assembly) Cancel(ctx context.Context, id ledger.RunID, actor ledger.Actor) (ledger.Run, error) {
	if err := a.gateway.Cancel(ctx, id, actor); err != nil {
		return ledger.Run{}, err
	}
	return a.store.Run(ctx, id)
}

// quotaAdmin adapts the guard to the admin API's quota actions.
type quotaAdmin struct{ g *quota.Guard }

func (q quotaAdmin) Sync(ctx context.Context, upstream, model string) (ledger.Snapshot, error) {
	return q.g.Sync(ctx, upstream, model)
}

// RecordBalance applies a reading the admin API has already checked: exactly
// one of balance and b0 is set.
func (q quotaAdmin) RecordBalance(ctx context.Context, upstream, model string, r admin.BalanceReading) (ledger.Snapshot, error) {
	if r.B0 != nil {
		return q.g.SetB0(ctx, upstream, model, *r.B0)
	}
	return q.g.SetBalance(ctx, upstream, model, *r.Balance)
}

// unguarded is the admin API's quota actions when no model is guarded.
type unguarded struct{}

func (unguarded) Sync(_ context.Context, upstream, model string) (ledger.Snapshot, error) {
	return ledger.Snapshot{}, ledger.Errorf(ledger.CodeModelNotFound, "%s/%s is not guarded (no model has a quota guard)", upstream, model)
}

func (u unguarded) RecordBalance(ctx context.Context, upstream, model string, _ admin.BalanceReading) (ledger.Snapshot, error) {
	return u.Sync(ctx, upstream, model)
}

func (a *assembly) close() {
	a.stop()
	for _, d := range a.demos {
		_ = d.Close()
	}
}

// scrubbedSource masks secrets in a balance source's errors: the guard shows
// them in /admin/api/state, and a provider's error may echo a key.
func scrubbedSource(src quota.BalanceSource, s *scrub.Scrubber) quota.BalanceSource {
	b := scrubBalance{src: src, s: s}
	if e, ok := src.(quota.ExpirySource); ok {
		return scrubExpiry{b, e}
	}
	return b
}

type scrubBalance struct {
	src quota.BalanceSource
	s   *scrub.Scrubber
}

func (b scrubBalance) Balance(ctx context.Context, model string) (ledger.Units, error) {
	u, err := b.src.Balance(ctx, model)
	return u, b.scrubbed(err)
}

func (b scrubBalance) scrubbed(err error) error {
	if err == nil {
		return nil
	}
	if msg := b.s.String(err.Error()); msg != err.Error() {
		return errors.New(msg)
	}
	return err
}

type scrubExpiry struct {
	scrubBalance
	e quota.ExpirySource
}

func (x scrubExpiry) Expiries(ctx context.Context, model string) ([]quota.Expiry, error) {
	ex, err := x.e.Expiries(ctx, model)
	return ex, x.scrubbed(err)
}

// keys are the key pools by upstream name, nil when no upstream has one.
func (a *assembly) keys() map[string][]admin.KeyState {
	if len(a.pools) == 0 {
		return nil
	}
	out := make(map[string][]admin.KeyState, len(a.pools))
	for _, c := range a.pools {
		out[c.Name()] = c.Keys()
	}
	return out
}
