package server

import (
	"cmp"
	"time"

	"github.com/quotagate/quotagate/backend/config"
	"github.com/quotagate/quotagate/backend/gate"
	"github.com/quotagate/quotagate/backend/gateway"
	"github.com/quotagate/quotagate/backend/meter"
	"github.com/quotagate/quotagate/backend/price"
	"github.com/quotagate/quotagate/backend/quota"
	"github.com/quotagate/quotagate/backend/upstream/balance"
)

// The config is data: these turn its sections into each package's options.
// A key the file left out stays zero here, and the package fills its own
// default (gateway.New, gate, meter.ReservePolicy.WithDefaults,
// quota.Options.Validate, postgres.Store.TakeLease).

// reservePolicy is the gateway's reserve policy: the configured figures,
// the meter's defaults for those left out, and every upstream's reasoning
// models.
func reservePolicy(cfg *config.Config) meter.ReservePolicy {
	p := meter.ReservePolicy{
		DefaultOutputUnits:  cfg.Limits.DefaultOutputUnits,
		ReasoningFloorUnits: cfg.Limits.ReasoningFloorUnits,
		ImageUnits:          cfg.Limits.ImageUnits,
	}
	for _, u := range cfg.Upstreams {
		p.ReasoningModels = append(p.ReasoningModels, u.ReasoningModels...)
	}
	return p.WithDefaults()
}

// gatewayLimits sets the gateway's bounds from limits; the rest of o is
// the assembly's.
func gatewayLimits(o gateway.Options, l config.Limits) gateway.Options {
	o.RequestBytesMax = l.RequestBytesMax
	o.StreamQueueEvents = l.StreamQueueEvents
	o.WriteTimeout = l.WriteTimeout
	o.UpstreamTimeout = l.UpstreamTimeout
	o.BodyTimeout = l.BodyTimeout
	o.FinishGrace = finishGrace(l.FinishGrace)
	return o
}

// finishGrace is limits.finish_grace as the gateway reads it: absent is
// zero (its default), `off` is gateway.Off.
func finishGrace(g config.Grace) time.Duration {
	if g == config.GraceOff {
		return gateway.Off
	}
	return time.Duration(g)
}

// upstreamTimeout is limits.upstream_timeout, or the gateway's default: the
// upstream clients wait as long for a non-streaming answer's headers.
func upstreamTimeout(l config.Limits) time.Duration {
	return cmp.Or(l.UpstreamTimeout, gateway.DefaultUpstreamTimeout)
}

// gateOptions are an upstream's gate: max_concurrent and its queue.
func gateOptions(u config.Upstream) gate.Options {
	return gate.Options{MaxConcurrent: u.MaxConcurrent, MaxWaiters: u.Queue.MaxWaiters, MaxWait: u.Queue.MaxWait}
}

// guardOptions are the quota guard's options of one model.
func guardOptions(q *config.Quota) quota.Options {
	var at time.Duration
	if t, err := time.Parse("15:04", q.TopUp.At); err == nil { // validated by config.Validate; empty: the default
		at = time.Duration(t.Hour())*time.Hour + time.Duration(t.Minute())*time.Minute
	}
	return quota.Options{
		DailyCap: q.DailyCap, SmallBuffer: q.SmallBuffer, UsageWall: q.UsageWall, BalanceWall: q.BalanceWall,
		Timezone: q.Timezone, SyncEvery: q.SyncEvery, SyncEveryLow: q.SyncEveryLow, LowBalance: q.LowBalance,
		BurstSync: q.BurstSync, DefaultLag: q.Lag, MinLag: q.MinLag, MaxLag: q.MaxLag,
		ExpiryHorizon: q.ExpiryHorizon,
		TopUp:         quota.TopUpOptions{Enabled: q.TopUp.Enabled, At: at},
	}
}

// balanceConfig is where a guarded model's provider balance is read.
func balanceConfig(b config.Balance) balance.Config {
	return balance.Config{Kind: b.Kind, AccessKey: b.AccessKey, SecretKey: b.SecretKey,
		BaseURL: b.BaseURL, Region: b.Region, Product: b.Product, ResourceType: b.ResourceType,
		ModelField: b.ModelField, URL: b.URL, Field: b.Field, Token: b.Token}
}

// gatewayMoney is the gateway's currency and each upstream model's price in
// it: the upstream's configured price as written (it is in the currency
// already), else the table's for the upstream's name of the model (then
// for the name clients call it by), in US dollars, converted by usd_rate.
// A model in neither has no price. Prices are per upstream (At): a model
// several upstreams serve costs what each charges; Prices keeps each
// model's first price. Without a money section, no money at all.
func gatewayMoney(cfg *config.Config, table price.Table) gateway.Money {
	if cfg.Money == nil {
		return gateway.Money{}
	}
	m := gateway.Money{Currency: cfg.Money.Currency, Prices: map[string]price.Price{}, At: map[string]map[string]price.Price{}}
	rate := cfg.Money.Rate()
	for _, u := range cfg.Upstreams {
		for _, model := range u.Models {
			p, ok := upstreamPrice(u, model, table, rate)
			if !ok {
				continue
			}
			if m.At[u.Name] == nil {
				m.At[u.Name] = map[string]price.Price{}
			}
			m.At[u.Name][model] = p
			if _, seen := m.Prices[model]; !seen {
				m.Prices[model] = p
			}
		}
	}
	return m
}

// upstreamPrice is model's price at upstream u (see gatewayMoney).
func upstreamPrice(u config.Upstream, model string, table price.Table, rate price.Rate) (price.Price, bool) {
	if text, ok := u.Prices[model]; ok {
		q, _ := text.Quote() // checked by config.Validate
		return q.Price(), true
	}
	for _, name := range []string{u.UpstreamModel(model), model} {
		if q, ok := table.Quote(name); ok {
			return q.In(rate), true
		}
	}
	return price.Price{}, false
}

// gatewayRoutes are the routes' order and the upstreams' names for their
// models, as the config lists them.
func gatewayRoutes(cfg *config.Config) gateway.Routes {
	r := gateway.Routes{Priority: map[string]int{}, Renamed: map[string]map[string]string{}}
	for i := range cfg.Upstreams {
		u := &cfg.Upstreams[i]
		r.Priority[u.Name] = int(u.Priority)
		if m := u.Renamed(); m != nil {
			r.Renamed[u.Name] = m
		}
	}
	return r
}
