package config_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/config"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/period"
)

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

var designEnv = map[string]string{
	"QUOTAGATE_ADMIN_TOKEN": "admin-token-0123456789",
	"TENANT_A_KEY":          "sk-tenant-a-secret",
	"ARK_API_KEY":           "ark-key",
	"VOLC_AK":               "ak",
	"VOLC_SK":               "sk",
}

// The config shape printed in DESIGN.md must load as written.
func TestParseDesignExample(t *testing.T) {
	data, err := os.ReadFile("testdata/design.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := config.Parse(data, env(designEnv))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	ta := c.Tenants[0]
	if ta.ID != "tenant-a" || ta.BudgetUnits != 110 || ta.MaxConcurrent != 1 ||
		ta.RateLimits.PerMinute != 10 || ta.RateLimits.PerHour != 120 {
		t.Errorf("tenant = %+v", ta)
	}
	if ta.Key != "" || len(ta.KeyHashes) != 1 || ta.KeyHashes[0] != ledger.HashKey("sk-tenant-a-secret") {
		t.Errorf("key not hashed and dropped: key=%q hashes=%v", ta.Key, ta.KeyHashes)
	}
	u := c.Upstreams[0]
	if u.Kind != config.KindOpenAI || u.MaxConcurrent != 2 || u.Queue.MaxWaiters != 4 || u.Queue.MaxWait != 8*time.Second {
		t.Errorf("upstream = %+v", u)
	}
	q := u.Quota
	if q == nil || q.DailyCap != 2_000_000 || q.SmallBuffer != 50_000 || q.UsageWall != 1_950_000 ||
		q.BalanceWall != 100_000 || q.SyncEvery != 30*time.Minute || q.SyncEveryLow != 5*time.Minute ||
		q.Lag != 0 || q.Balance.Kind != "volcengine" || q.Balance.AccessKey != "ak" { // lag left out: the quota guard's default
		t.Errorf("quota = %+v", q)
	}
	if c.AdminToken != "admin-token-0123456789" {
		t.Errorf("admin token = %q", c.AdminToken)
	}
	lt := c.LedgerTenants()
	if len(lt) != 1 || !lt[0].MatchesKey("sk-tenant-a-secret") || lt[0].MatchesKey("sk-tenant-a-secreT") {
		t.Errorf("ledger tenants = %+v", lt)
	}
}

func TestDefault(t *testing.T) {
	c := config.Default()
	if c.Addr != "127.0.0.1:8787" || len(c.Tenants) != 1 || c.Tenants[0].ID != "local" {
		t.Fatalf("default = %+v", c)
	}
	u, ok := c.UpstreamFor("demo-chat")
	if !ok || u.Kind != config.KindDemo {
		t.Fatalf("demo-chat served by %+v", u)
	}
}

func TestLoad(t *testing.T) {
	p := filepath.Join(t.TempDir(), "q.yaml")
	if err := os.WriteFile(p, []byte("meter: utf8-bytes-v1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := config.Load(p)
	if err != nil || c.Meter != config.MeterUTF8Bytes || c.Addr != config.DefaultAddr {
		t.Fatalf("Load = %+v, %v", c, err)
	}
	if _, err := config.Load(filepath.Join(t.TempDir(), "absent.yaml")); err == nil {
		t.Fatal("Load of a missing file succeeded")
	}
}

// Each bad input is refused with a message that names the problem.
func TestParseRefuses(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"UnknownKey", "tenants:\n  - id: a\n    budgets: 5\n", "field budgets not found"},
		{"MissingEnv", "admin_token: ${NOPE_NOT_SET}\n", "NOPE_NOT_SET is not set"},
		{"PublicAddr", "addr: 0.0.0.0:8787\n", "loopback only"},
		{"BadAddr", "addr: localhost\n", "want host:port"},
		{"BadMeter", "meter: runes\n", `meter "runes"`},
		{"ShortAdminToken", "admin_token: short\n", "at least 16"},
		{"NegativeBudget", "tenants:\n  - id: a\n    budget_units: -1\n", "must not be negative"},
		{"HugeBudget", "tenants:\n  - id: a\n    budget_units: 9007199254740992\n", "too large"},
		{"FloatBudget", "tenants:\n  - id: a\n    budget_units: 1.5\n", "parse YAML"},
		{"DuplicateTenant", "tenants:\n  - id: a\n  - id: a\n", "listed twice"},
		{"BadTenantID", "tenants:\n  - id: 'a b'\n", "tenants[0].id"},
		{"SharedKey", "tenants:\n  - {id: a, key: kkkkkkkk}\n  - {id: b, key: kkkkkkkk}\n", "shares a key"},
		{"ShortKey", "tenants:\n  - {id: a, key: k}\n", "at least 8"},
		{"BadHash", "tenants:\n  - {id: a, key_hashes: [xyz]}\n", "64 lowercase hex"},
		{"NoModels", "upstreams:\n  - {name: x, base_url: 'http://h'}\n", "at least one model"},
		{"BadBaseURL", "upstreams:\n  - {name: x, base_url: 'ftp://h', models: [m]}\n", "http(s) URL"},
		{"DuplicateModel", "upstreams:\n  - {name: x, kind: demo, models: [m, n, m]}\n", "upstream x: models lists m twice"},
		{"DuplicateRenamedModel", "upstreams:\n  - {name: x, kind: demo, models: [m, {name: m, upstream_model: m2}]}\n", "upstream x: models lists m twice"},
		{"GuardedModelTwoNames", "upstreams:\n  - {name: x, kind: demo, models: [m2, {name: m, upstream_model: m2}], quota: {}}\n",
			"upstream x: models m2 and m both go out as m2, whose free quota is one pool at the provider"},
		{"EmptyModel", "upstreams:\n  - {name: x, kind: demo, models: [m, '']}\n", "upstream x: models[1]: empty model name"},
		{"EmptyModelEntry", "upstreams:\n  - {name: x, kind: demo, models: [{upstream_model: m2}]}\n", "upstream x: models[0]: empty model name"},
		{"ModelWithSpace", "upstreams:\n  - {name: x, kind: demo, models: ['m n']}\n", `upstream x: models[0] "m n"`},
		{"ModelUnknownKey", "upstreams:\n  - {name: x, kind: demo, models: [{name: m, upstream: m2}]}\n", "field upstream not found"},
		{"ModelList", "upstreams:\n  - {name: x, kind: demo, models: [[m]]}\n", "a model is a name or {name, upstream_model}"},
		{"PriorityWord", "upstreams:\n  - {name: x, kind: demo, models: [m], priority: high}\n", `priority "high": a whole number`},
		{"PriorityFloat", "upstreams:\n  - {name: x, kind: demo, models: [m], priority: 1.5}\n", `priority: "1.5": numbers here are whole numbers`},
		{"BadKind", "upstreams:\n  - {name: x, kind: grpc, models: [m]}\n", `kind "grpc"`},
		{"BadZone", "upstreams:\n  - {name: x, kind: demo, models: [m], quota: {timezone: Mars/Base}}\n", "time zone"},
		{"VolcNoKeys", "upstreams:\n  - {name: x, kind: demo, models: [m], quota: {balance: {kind: volcengine}}}\n", "access_key"},
		{"HTTPJSONNoField", "upstreams:\n  - {name: x, kind: demo, models: [m], quota: {balance: {kind: http-json, url: 'http://h/b'}}}\n", "field"},
		{"LagOverTwoHours", "upstreams:\n  - {name: x, kind: demo, models: [m], quota: {lag: 3h}}\n", "min_lag ≤ lag ≤ max_lag ≤ 2h"},
		{"NegativeMaxConcurrent", "upstreams:\n  - {name: x, kind: demo, models: [m], max_concurrent: -1}\n", "max_concurrent must be between 1 and 10000"},
		{"BadMaxWait", "upstreams:\n  - {name: x, kind: demo, models: [m], queue: {max_wait: 1h}}\n", "max_wait"},
		{"UnknownProtocol", "upstreams:\n  - {name: x, kind: demo, models: [m], protocols: [chat, grpc]}\n", `upstream x: protocols[1] "grpc": want chat, responses, messages, gemini, completions, embeddings`},
		{"ProtocolTwice", "upstreams:\n  - {name: x, kind: demo, models: [m], protocols: [chat, chat]}\n", "protocols lists chat twice"},
		{"UnknownReasoningSwitch", "upstreams:\n  - {name: x, kind: demo, models: [m], reasoning_switch: effort}\n", `upstream x: reasoning_switch "effort": want reasoning_effort or thinking`},
		{"TinyBodyLimit", "limits: {request_bytes_max: 10}\n", "request_bytes_max"},
		{"NegativeOutputUnits", "limits: {default_output_units: -1}\n", "limits.default_output_units must not be negative"},
		{"HugeReasoningFloor", "limits: {reasoning_floor_units: 9007199254740992}\n", "limits.reasoning_floor_units"},
		{"NegativeImageUnits", "limits: {image_units: -5}\n", "limits.image_units must not be negative"},
		{"ShortWriteTimeout", "limits: {write_timeout: 500ms}\n", "at least 1s"},
		{"FinishGraceZero", "limits: {finish_grace: 0s}\n", `"0s": write a positive duration such as 5s, or off`},
		{"FinishGraceNegative", "limits: {finish_grace: -1s}\n", `"-1s": write a positive duration`},
		{"FinishGraceBareNumber", "limits: {finish_grace: 5}\n", `"5": write a positive duration`},
		{"FinishGraceWord", "limits: {finish_grace: never}\n", `"never": write a positive duration`},
		{"MoneyBudgetWithoutMoney", "tenants:\n  - id: a\n    budget: 5\n", `tenants[0].budget "5": a money budget needs the gateway's currency`},
		{"PricesWithoutMoney", "upstreams:\n  - {name: x, kind: demo, models: [m], prices: {m: {input: '1', cached_input: '1', cache_write: '1', output: '1'}}}\n", "upstreams[0].prices.m: a price needs the gateway's currency"},
		{"UnknownPeriod", "tenants:\n  - id: a\n  - {id: b, budget_period: monthly}\n", `tenants[1].budget_period: unknown period "monthly"`},
		{"UnknownTenantZone", "tenants:\n  - {id: a, budget_period: day, timezone: Mars/Base}\n", `tenants[0].timezone: unknown time zone "Mars/Base"`},
		{"UnknownWeekday", "tenants:\n  - {id: a, budget_period: week, week_starts: funday}\n", `tenants[0].week_starts: unknown weekday "funday"`},
		{"UnknownGatewayZone", "timezone: Europe/Atlantis\n", `timezone: unknown time zone "Europe/Atlantis"`},
		{"LowerCaseCurrency", "money: {currency: usd}\n", `money.currency "usd": an ISO 4217 code`},
		{"LongCurrency", "money: {currency: USDT, usd_rate: '1'}\n", `money.currency "USDT"`},
		{"NoRate", "money: {currency: CNY}\n", "money.usd_rate is missing"},
		{"ZeroRate", "money: {currency: CNY, usd_rate: '0'}\n", "money.usd_rate: \"0\" is 0"},
		{"FloatRateTooFine", "money: {currency: CNY, usd_rate: 7.1234567}\n", "money.usd_rate: \"7.1234567\" has 7 decimal places"},
		{"NegativeBudgetMoney", "money: {currency: USD}\ntenants:\n  - id: a\n    budget: '-5'\n", "tenants[0].budget: \"-5\" is negative"},
		{"BudgetNotDecimal", "money: {currency: USD}\ntenants:\n  - id: a\n    budget: 5e3\n", "tenants[0].budget: \"5e3\" is not a plain decimal"},
		{"PriceNegative", "money: {currency: USD}\nupstreams:\n  - {name: x, kind: demo, models: [gpt-4o], prices: {gpt-4o: {input: '1', cached_input: '1', cache_write: '1', output: '-8'}}}\n", `upstreams[0].prices.gpt-4o.output: "-8" is negative`},
		{"PriceTooFine", "money: {currency: USD}\nupstreams:\n  - {name: x, kind: demo, models: [gpt-4o], prices: {gpt-4o: {input: 0.0000001, cached_input: '1', cache_write: '1', output: '8'}}}\n", `upstreams[0].prices.gpt-4o.input: "0.0000001" has 7 decimal places`},
		{"PriceMissing", "money: {currency: USD}\nupstreams:\n  - {name: x, kind: demo, models: [m], prices: {m: {input: '1', output: '8'}}}\n", "upstreams[0].prices.m.cached_input is missing"},
		{"PriceUnknownField", "money: {currency: USD}\nupstreams:\n  - {name: x, kind: demo, models: [m], prices: {m: {inptu: '1'}}}\n", "field inptu not found"},
		{"PriceOfAnotherModel", "money: {currency: USD}\nupstreams:\n  - {name: x, kind: demo, models: [m], prices: {n: {input: '1', cached_input: '1', cache_write: '1', output: '1'}}}\n", "upstreams[0].prices.n: upstream x does not serve n"},
		{"FloatElsewhere", "money: {currency: USD}\nlimits: {image_units: 1.5}\n", "numbers here are whole numbers"},
		{"FinishGraceLong", "limits: {finish_grace: 2m}\n", "limits.finish_grace must be off or at most 1m"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := config.Parse([]byte(tt.yaml), env(nil))
			if err == nil {
				t.Fatalf("Parse accepted %q: %+v", tt.yaml, c)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %q does not mention %q", err, tt.want)
			}
		})
	}
}

// TestAliasesOfAnUnguardedModel: two names may go out as one model where
// no quota guards it (the refusal above is the guarded upstream's).
func TestAliasesOfAnUnguardedModel(t *testing.T) {
	c, err := config.Parse([]byte("upstreams:\n  - {name: x, kind: demo, models: [m2, {name: m, upstream_model: m2}]}\n"), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Upstreams[0].UpstreamModel("m"); got != "m2" {
		t.Fatalf("m goes out as %q", got)
	}
}

// money: the currency and its rate, money budgets and prices — written
// quoted or not, read as the decimal text written, never through a float.
func TestMoney(t *testing.T) {
	c, err := config.Parse([]byte(`money: {currency: CNY, usd_rate: 7.1}
tenants:
  - {id: a, budget: 50.00, budget_units: 1000}
  - {id: b, budget: "0.000001"}
  - {id: c}
upstreams:
  - name: x
    kind: demo
    models: [m, n]
    prices:
      m: {input: 2.00, cached_input: "0.50", cache_write: 2.5, output: 8}
`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Money.Currency != "CNY" || c.Money.USDRate != "7.1" || c.Money.Rate() != 7_100_000 {
		t.Errorf("money = %+v, rate %d", c.Money, c.Money.Rate())
	}
	for i, want := range []struct {
		micros int64
		ok     bool
	}{{50_000_000, true}, {1, true}, {0, false}} {
		if m, ok := c.Tenants[i].BudgetMicros(); int64(m) != want.micros || ok != want.ok {
			t.Errorf("tenant %s budget = %d, %v; want %d, %v", c.Tenants[i].ID, m, ok, want.micros, want.ok)
		}
	}
	lt := c.LedgerTenants()
	if !lt[0].HasMoneyBudget || lt[0].BudgetMicros != 50_000_000 || lt[0].BudgetUnits != 1000 ||
		!lt[1].HasMoneyBudget || lt[1].BudgetUnits != ledger.NoUnitsLimit || lt[2].HasMoneyBudget || lt[2].BudgetUnits != 0 {
		t.Errorf("ledger tenants %+v: a money budget alone budgets in money only", lt)
	}
	q, err := c.Upstreams[0].Prices["m"].Quote()
	if err != nil || q.Input != 2_000_000 || q.CachedInput != 500_000 || q.CacheWrite != 2_500_000 || q.Output != 8_000_000 {
		t.Errorf("prices of m = %+v, %v", q, err)
	}
	usd, err := config.Parse([]byte("money: {currency: USD}\n"), env(nil))
	if err != nil || usd.Money.USDRate != "1" {
		t.Errorf("USD without usd_rate = %+v, %v; want the rate 1", usd, err)
	}
	none, err := config.Parse([]byte("meter: tiktoken\n"), env(nil))
	if err != nil || none.Money != nil {
		t.Errorf("a config without money = %+v, %v", none, err)
	}
	if d := config.Default(); d.Money == nil || d.Money.Currency != "USD" || d.Money.Rate() != 1_000_000 {
		t.Errorf("the default's money = %+v", d.Money)
	}
}

// limits.finish_grace: absent is zero (the gateway's default, 5s: the
// server's TestFinishGrace), a duration is kept, and `off` switches the
// grace off.
func TestFinishGrace(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       config.Grace
		spelled    string
	}{
		{"Default", "meter: utf8-bytes-v1\n", 0, ""},
		{"Duration", "limits: {finish_grace: 800ms}\n", config.Grace(800 * time.Millisecond), "800ms"},
		{"Off", "limits: {finish_grace: off}\n", config.GraceOff, "off"},
		{"OffQuoted", "limits:\n  finish_grace: \"off\"\n", config.GraceOff, "off"},
		{"Minute", "limits: {finish_grace: 1m}\n", config.Grace(time.Minute), "1m0s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := config.Parse([]byte(tt.yaml), env(nil))
			if err != nil {
				t.Fatal(err)
			}
			g := c.Limits.FinishGrace
			if g != tt.want || g.String() != tt.spelled {
				t.Fatalf("finish_grace = %v (%q), want %v (%q)", int64(g), g, int64(tt.want), tt.spelled)
			}
		})
	}
}

// protocols defaults to [chat]; the built-in demo speaks every protocol; a
// listed set is kept as written.
func TestProtocols(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       []string
	}{
		{"DefaultChat", "upstreams:\n  - {name: x, base_url: 'http://h', models: [m]}\n", []string{"chat"}},
		{"DemoSpeaksAll", "upstreams:\n  - {name: x, kind: demo, models: [m]}\n", []string{"chat", "responses", "messages", "gemini", "completions", "embeddings"}},
		{"DemoChatOnly", "upstreams:\n  - {name: x, kind: demo, models: [m], protocols: [chat]}\n", []string{"chat"}},
		{"Listed", "upstreams:\n  - {name: x, base_url: 'http://h', models: [m], protocols: [chat, responses]}\n", []string{"chat", "responses"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := config.Parse([]byte(tt.yaml), env(nil))
			if err != nil {
				t.Fatal(err)
			}
			u := c.Upstreams[0]
			if !slices.Equal(u.Protocols, tt.want) {
				t.Fatalf("protocols = %v, want %v", u.Protocols, tt.want)
			}
			for _, p := range config.Protocols {
				if u.Speaks(p) != slices.Contains(tt.want, p) {
					t.Errorf("Speaks(%s) = %v", p, u.Speaks(p))
				}
			}
		})
	}
	if u, _ := config.Default().UpstreamFor("demo-chat"); !u.Speaks(config.ProtocolResponses) || !u.Speaks(config.ProtocolMessages) {
		t.Errorf("the default demo upstream speaks %v", u.Protocols)
	}
}

// A secret containing YAML syntax stays one string and cannot inject keys.
func TestEnvValueIsOneScalar(t *testing.T) {
	c, err := config.Parse([]byte("admin_token: ${T}\n"), env(map[string]string{"T": "abc: def\nmeter: runes #x"}))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if c.AdminToken != "abc: def\nmeter: runes #x" || c.Meter != config.MeterTiktoken {
		t.Fatalf("admin token %q, meter %q", c.AdminToken, c.Meter)
	}
}

// A tenant's calendar: its own zone, else the gateway's timezone, else the
// machine's; weeks from Monday unless week_starts says otherwise; no
// budget_period never renews.
func TestTenantCalendars(t *testing.T) {
	c, err := config.Parse([]byte(`timezone: Pacific/Kiritimati
tenants:
  - {id: a, budget_period: month, timezone: America/New_York}
  - {id: b, budget_period: week, week_starts: Sunday}
  - {id: c}
`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	lt := c.LedgerTenants()
	if cal := lt[0].Calendar; cal.Kind != period.Month || cal.Zone.String() != "America/New_York" || cal.WeekStarts != time.Monday {
		t.Errorf("tenant a's calendar = %+v", cal)
	}
	if cal := lt[1].Calendar; cal.Kind != period.Week || cal.Zone.String() != "Pacific/Kiritimati" || cal.WeekStarts != time.Sunday {
		t.Errorf("tenant b's calendar = %+v", cal)
	}
	if cal := lt[2].Calendar; ledger.Renews(cal) {
		t.Errorf("tenant c without budget_period renews: %+v", cal)
	}
	local, err := config.Parse([]byte("tenants:\n  - {id: a, budget_period: day}\n"), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if z := local.LedgerTenants()[0].Calendar.Zone; z != time.Local {
		t.Errorf("without any timezone the zone is %v, want the machine's", z)
	}
}

// A route: one model listed by two upstreams, once under another name
// upstream, ordered by priority.
func TestRoute(t *testing.T) {
	c, err := config.Parse([]byte(`upstreams:
  - name: ark-free
    kind: demo
    priority: 0
    models: [{name: deepseek-v4-flash, upstream_model: deepseek-v4-flash-ga-260731}, demo-chat]
  - name: ark-paid
    kind: demo
    priority: 1
    models: [deepseek-v4-flash]
`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	free, paid := c.Upstreams[0], c.Upstreams[1]
	if got := strings.Join(free.Models, ","); got != "deepseek-v4-flash,demo-chat" {
		t.Errorf("models %s", got)
	}
	if got := free.UpstreamModel("deepseek-v4-flash"); got != "deepseek-v4-flash-ga-260731" {
		t.Errorf("upstream model %s", got)
	}
	if got := paid.UpstreamModel("deepseek-v4-flash"); got != "deepseek-v4-flash" {
		t.Errorf("paid upstream model %s", got)
	}
	if free.Priority != 0 || paid.Priority != 1 || paid.Renamed() != nil || len(free.Renamed()) != 1 {
		t.Errorf("priorities %d %d, renamed %v %v", free.Priority, paid.Priority, free.Renamed(), paid.Renamed())
	}
}
