package server

import (
	"strings"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/config"
	"github.com/quotagate/quotagate/backend/gateway"
	"github.com/quotagate/quotagate/backend/meter"
	"github.com/quotagate/quotagate/backend/price"
	"github.com/quotagate/quotagate/backend/quota"
)

func parse(t *testing.T, yaml string) *config.Config {
	t.Helper()
	c, err := config.Parse([]byte(yaml), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// limits.finish_grace reaches the gateway as it reads it: absent is its
// default (5s), `off` is gateway.Off.
func TestFinishGrace(t *testing.T) {
	for yaml, want := range map[string]time.Duration{
		"meter: utf8-bytes-v1\n":             0,
		"limits: {finish_grace: 800ms}\n":    800 * time.Millisecond,
		"limits: {finish_grace: off}\n":      gateway.Off,
		"limits:\n  finish_grace: \"off\"\n": gateway.Off,
	} {
		if got := finishGrace(parse(t, yaml).Limits.FinishGrace); got != want {
			t.Errorf("%q: finish grace %v, want %v", yaml, got, want)
		}
	}
	if gateway.DefaultFinishGrace != 5*time.Second {
		t.Errorf("the gateway's default finish grace is %v, the README says 5s", gateway.DefaultFinishGrace)
	}
}

// The limits left out are the packages' defaults, applied by them.
func TestLimitsLeftOut(t *testing.T) {
	c := parse(t, "upstreams:\n  - {name: x, kind: demo, models: [m], reasoning_models: [m]}\n")
	p := reservePolicy(c)
	if p.DefaultOutputUnits != meter.DefaultOutputUnits || p.ReasoningFloorUnits != meter.DefaultReasoningFloorUnits ||
		p.ImageUnits != meter.DefaultImageUnits || !p.IsReasoning("m") {
		t.Errorf("reserve policy = %+v", p)
	}
	if upstreamTimeout(c.Limits) != gateway.DefaultUpstreamTimeout {
		t.Errorf("upstream timeout = %v", upstreamTimeout(c.Limits))
	}
	o := gateOptions(c.Upstreams[0])
	if o.MaxConcurrent != 0 || o.MaxWaiters != 0 || o.MaxWait != 0 {
		t.Errorf("gate options = %+v, want zero for the gate's defaults", o)
	}
	q, err := guardOptions(&config.Quota{}).Validate()
	if err != nil || q.DefaultLag != quota.DefaultLag || q.TopUp.At != quota.DefaultTopUpAt {
		t.Errorf("quota options = %+v, %v", q, err)
	}
}

// A quota section the config accepts as written can still disagree with the
// guard's defaults or itself; the guard refuses it when the server builds it.
func TestGuardOptionsRefuse(t *testing.T) {
	tests := []struct{ name, quota, want string }{
		{"BufferOverCap", "{daily_cap: 10, small_buffer: 10}", "below daily_cap"},
		{"BufferOverDefaultCap", "{small_buffer: 3000000}", "below daily_cap (2000000)"},
		{"LagOutsideBounds", "{lag: 50m, max_lag: 45m}", "min"},
		{"LagOverDefaultMax", "{lag: 50m}", "min"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := parse(t, "upstreams:\n  - {name: x, kind: demo, models: [m], quota: "+tt.quota+"}\n")
			_, err := guardOptions(c.Upstreams[0].Quota).Validate()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// top_up.at reaches the guard as the time of day; absent is its default.
func TestTopUpAt(t *testing.T) {
	o := guardOptions(&config.Quota{TopUp: config.TopUp{Enabled: true, At: "06:30"}})
	if !o.TopUp.Enabled || o.TopUp.At != 6*time.Hour+30*time.Minute {
		t.Errorf("top-up = %+v", o.TopUp)
	}
}

// The fingerprint counts a gate or quota key left out as its default: the
// same digest as the file with every default written out, which is what
// builds that filled the config before hashing it recorded.
func TestFingerprintOfDefaults(t *testing.T) {
	const tenants = "tenants: [{id: a, key: key-one-1, budget_units: 100}]\n"
	short := parse(t, tenants+"upstreams:\n  - {name: p, kind: demo, models: [m], quota: {}}\n")
	long := parse(t, tenants+`upstreams:
  - name: p
    kind: demo
    models: [m]
    max_concurrent: 2
    queue: {max_waiters: 4, max_wait: 8s}
    quota: {daily_cap: 2000000, small_buffer: 50000, usage_wall: 1950000, balance_wall: 100000,
      timezone: Asia/Shanghai, sync_every: 30m, sync_every_low: 5m, burst_sync: 100000, low_balance: 300000,
      lag: 15m, min_lag: 1m, max_lag: 45m, expiry_horizon: 15m, top_up: {at: "23:20"}, balance: {kind: manual}}
`)
	if a, b := fingerprint(short), fingerprint(long); a != b || a != long.Fingerprint() {
		t.Errorf("fingerprint %s with the keys left out, %s written out (%s as written)", a, b, long.Fingerprint())
	}
	// What the build before config stopped filling defaults recorded.
	if got := fingerprint(short); got != "08adbc7fa9fb10a3" {
		t.Errorf("fingerprint = %s, want 08adbc7fa9fb10a3 as recorded in shared ledgers", got)
	}
	if fingerprint(parse(t, tenants+"upstreams:\n  - {name: p, kind: demo, models: [m], max_concurrent: 3, quota: {}}\n")) == fingerprint(short) {
		t.Error("the fingerprint ignores a gate's max_concurrent")
	}
}

// Each model's price in the gateway's currency: an upstream's configured
// price as written, else the table's converted by usd_rate exactly
// (decimal, never float); a model in neither has none; a config without
// money prices nothing.
func TestGatewayMoney(t *testing.T) {
	table := price.Table{Models: map[string]price.Entry{
		"t":  {Quote: price.Quote{Input: 1_000_000, CachedInput: 250_000, CacheWrite: 1_250_000, Output: 4_000_000}},
		"o":  {Quote: price.Quote{Input: 9_000_000, CachedInput: 9_000_000, CacheWrite: 9_000_000, Output: 9_000_000}},
		"x3": {Quote: price.Quote{Input: 3, CachedInput: 1, CacheWrite: 7, Output: 333_333}}, // 0.000003 … 0.333333
	}}
	c := parse(t, `money: {currency: CNY, usd_rate: "7.123457"}
upstreams:
  - name: u
    kind: demo
    models: [t, o, x3, none]
    prices: {o: {input: "2.00", cached_input: "0.5", cache_write: "2.5", output: "8"}}
`)
	m := gatewayMoney(c, table)
	if m.Currency != "CNY" || len(m.Prices) != 3 {
		t.Fatalf("money = %+v", m)
	}
	for model, want := range map[string][4]string{
		"t":  {"7.123457", "1.78086425", "8.90432125", "28.493828"},
		"o":  {"2.00", "0.50", "2.50", "8.00"}, // as written: already in CNY
		"x3": {"0.000021370371", "0.000007123457", "0.000049864199", "2.374483292181"},
	} {
		p := m.Prices[model]
		got := [4]string{p.Input.String(), p.CachedInput.String(), p.CacheWrite.String(), p.Output.String()}
		if got != want {
			t.Errorf("%s: prices %v, want %v", model, got, want)
		}
	}
	if _, ok := m.Prices["none"]; ok {
		t.Error("a model in neither the table nor the config has a price")
	}
	if m := gatewayMoney(parse(t, "upstreams:\n  - {name: u, kind: demo, models: [t]}\n"), table); m.Currency != "" || m.Prices != nil {
		t.Errorf("without money: %+v", m)
	}
	d := gatewayMoney(config.Default(), price.Embedded())
	for _, model := range config.Default().Upstreams[0].Models {
		if _, ok := d.Prices[model]; !ok || d.Currency != "USD" {
			t.Errorf("the embedded default leaves the demo model %s without a price (%+v)", model, d)
		}
	}
}

// A model two upstreams serve costs what each charges: the free endpoint's
// configured price, the paid one's table price under its upstream_model.
func TestGatewayMoneyPerUpstream(t *testing.T) {
	table := price.Table{Models: map[string]price.Entry{
		"flash-ga": {Quote: price.Quote{Input: 2_000_000, CachedInput: 2_000_000, CacheWrite: 2_000_000, Output: 8_000_000}},
	}}
	c := parse(t, `money: {currency: USD, usd_rate: "1"}
upstreams:
  - name: free
    kind: demo
    models: [flash]
    prices: {flash: {input: "0", cached_input: "0", cache_write: "0", output: "0"}}
  - name: paid
    kind: demo
    priority: 1
    models: [{name: flash, upstream_model: flash-ga}]
`)
	m := gatewayMoney(c, table)
	if free, paid := m.At["free"]["flash"], m.At["paid"]["flash"]; free.Output.String() != "0.00" || paid.Output.String() != "8.00" {
		t.Fatalf("free %+v, paid %+v", free, paid)
	}
	if p := m.Prices["flash"]; p.Output.String() != "0.00" {
		t.Errorf("the model's first price %+v, want the first upstream's", p)
	}
	r := gatewayRoutes(c)
	if r.Priority["paid"] != 1 || r.Priority["free"] != 0 || r.Renamed["paid"]["flash"] != "flash-ga" || r.Renamed["free"] != nil {
		t.Errorf("routes %+v", r)
	}
}
