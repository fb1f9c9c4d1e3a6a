// Package config loads quotagate's YAML configuration: ${ENV} expansion,
// the config's own defaults, and Validate, which refuses bad input with a
// sentence a person can act on. Plaintext tenant keys are hashed on load and
// dropped from memory.
//
// The config is data: it imports nothing of ours but ledger, and price
// (the stdlib-only leaf that parses money as the ledger keeps it). A key left out
// stays zero, which every package reads as "my default" and fills in its
// own constructor (gateway.New, gate, meter.ReservePolicy.WithDefaults,
// quota.Options.Validate, postgres leases); backend/server translates the
// config into those options. Only the keys no other package owns (addr,
// meter, ledger.driver, an upstream's kind and protocols, a tenant's
// max_concurrent, the top-up prompt) are filled here.
package config

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"
	_ "time/tzdata" // quota time zones must load on machines without a zoneinfo database

	"gopkg.in/yaml.v3"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/price"
)

// Meter names.
const (
	MeterTiktoken  = "tiktoken"
	MeterUTF8Bytes = "utf8-bytes-v1"
)

// Upstream kinds.
const (
	KindOpenAI = "openai"
	KindDemo   = "demo"
)

// Protocols an upstream can speak natively (DESIGN "Front doors"): a request
// at a door whose protocol its upstream speaks is relayed as it came; any
// other is translated to chat completions and back.
const (
	ProtocolChat      = "chat"      // POST /chat/completions
	ProtocolResponses = "responses" // POST /responses (OpenAI Responses API)
	ProtocolMessages  = "messages"  // POST /messages (Anthropic Messages API)
	ProtocolGemini    = "gemini"    // POST /models/{model}:generateContent (Gemini API; base_url ends in /v1beta)
	// Completions and embeddings are never translated: an upstream that
	// does not list them is refused at their doors.
	ProtocolCompletions = "completions" // POST /completions (legacy completions, fill-in-the-middle)
	ProtocolEmbeddings  = "embeddings"  // POST /embeddings
)

// Protocols lists every protocol name, in the order messages name them.
var Protocols = []string{ProtocolChat, ProtocolResponses, ProtocolMessages, ProtocolGemini, ProtocolCompletions, ProtocolEmbeddings}

// DefaultAddr is the default of the config's own key addr. The defaults of
// the keys that are another package's options are stated once, in that
// package (gateway, gate, meter, quota, ledger), and applied there.
const DefaultAddr = "127.0.0.1:8787"

// Config is the whole configuration file.
type Config struct {
	Addr       string     `yaml:"addr"`
	Meter      string     `yaml:"meter"`
	AdminToken string     `yaml:"admin_token"`
	Tenants    []Tenant   `yaml:"tenants"`
	Upstreams  []Upstream `yaml:"upstreams"`
	Limits     Limits     `yaml:"limits"`
	Ledger     Ledger     `yaml:"ledger"`
	// Money is the gateway's currency; nil (no money key) keeps the books
	// in units only, and then no budget or price in money may be written.
	Money *Money `yaml:"money"`
	// Alerts: thresholds of a tenant's budget and a webhook; nil: none.
	Alerts *Alerts `yaml:"alerts"`
	// Timezone is the gateway's zone (IANA) for budget periods of tenants
	// that name none; empty: the machine's.
	Timezone string `yaml:"timezone"`
}

// Money is the currency every cost, price and money budget is in.
type Money struct {
	Currency string `yaml:"currency"` // ISO 4217: three upper-case letters
	// USDRate is how much of Currency one US dollar buys, as a decimal
	// string: it converts the embedded price table, which is in dollars.
	USDRate string `yaml:"usd_rate"`
}

// Rate is usd_rate as the price package reads it (checked by Validate).
func (m *Money) Rate() price.Rate {
	r, _ := price.ParseRate(m.USDRate)
	return r
}

// Tenant is one tenant as configured. Key and Keys are plaintext in the file;
// Load moves them into KeyHashes and clears them.
type Tenant struct {
	ID          string       `yaml:"id"`
	Key         string       `yaml:"key"`
	Keys        []string     `yaml:"keys"`
	KeyHashes   []string     `yaml:"key_hashes"` // hex SHA-256, for configs that never held the key
	BudgetUnits ledger.Units `yaml:"budget_units"`
	// Budget is a money budget in the gateway's currency, a decimal string
	// ("50.00"); empty: none, only budget_units limits the tenant.
	Budget        string     `yaml:"budget"`
	MaxConcurrent int        `yaml:"max_concurrent"`
	RateLimits    RateLimits `yaml:"rate_limits"`
	AllowedModels []string   `yaml:"allowed_models"`
	// BudgetPeriod renews the budget every day, week or month ("none" or
	// empty: never), in Timezone (IANA; empty: the gateway's timezone,
	// else the machine's), weeks starting on WeekStarts (empty: monday).
	BudgetPeriod string `yaml:"budget_period"`
	Timezone     string `yaml:"timezone"`
	WeekStarts   string `yaml:"week_starts"`
}

// RateLimits are a tenant's two request windows; 0 turns a window off.
type RateLimits struct {
	PerMinute int `yaml:"per_minute"`
	PerHour   int `yaml:"per_hour"`
}

// Upstream is one OpenAI-compatible provider (or the built-in demo).
type Upstream struct {
	Name    string `yaml:"name"`
	Kind    string `yaml:"kind"`
	BaseURL string `yaml:"base_url"`
	APIKey  string `yaml:"api_key"`
	// Listed is the models as the file lists them; Models their names, the
	// names clients call them by (filled by Parse).
	Listed          []Model  `yaml:"models"`
	Models          []string `yaml:"-"`
	ReasoningModels []string `yaml:"reasoning_models"`
	// Priority orders the upstreams that list one model: lower first, equal
	// priorities take turns (DESIGN "Routes"); default 0.
	Priority      Priority `yaml:"priority"`
	MaxConcurrent int      `yaml:"max_concurrent"`
	Queue         Queue    `yaml:"queue"`
	Quota         *Quota   `yaml:"quota"`
	// Protocols it speaks natively; default [chat], and every protocol for
	// the built-in demo.
	Protocols []string `yaml:"protocols"`
	// ReasoningSwitch names the upstream's chat-completions switch for
	// thinking, onto which a translated Messages request's `thinking` is
	// mapped: "reasoning_effort" (OpenAI), "thinking" (Volcengine Ark,
	// DeepSeek: {"type":"enabled"}), or empty (none: thinking is dropped).
	ReasoningSwitch string `yaml:"reasoning_switch"`
	// Prices override the price table for this upstream's models, per 1M
	// tokens in the gateway's currency (not converted by usd_rate).
	Prices map[string]price.QuoteText `yaml:"prices"`
	// APIKeys is a key pool used in turn, instead of APIKey; a key the
	// provider refuses rests for KeyCooldown (zero: upstream's default),
	// in this gateway's memory only.
	APIKeys     []string      `yaml:"api_keys"`
	KeyCooldown time.Duration `yaml:"key_cooldown"`
	// UsageLookup says how to ask the provider what one call cost, after
	// the fact, for a held run (nil: it cannot be asked); AutoReconcile
	// applies a figure found at once instead of waiting for a click.
	UsageLookup   *UsageLookup `yaml:"usage_lookup"`
	AutoReconcile bool         `yaml:"auto_reconcile"`
}

// UpstreamModel is the name the upstream knows model by: its
// upstream_model when listed under another name, else model itself.
func (u *Upstream) UpstreamModel(model string) string {
	for _, m := range u.Listed {
		if m.Name == model && m.UpstreamModel != "" {
			return m.UpstreamModel
		}
	}
	return model
}

// Renamed maps each model listed under another name upstream to that name;
// nil when none is.
func (u *Upstream) Renamed() map[string]string {
	var out map[string]string
	for _, m := range u.Listed {
		if m.UpstreamModel != "" && m.UpstreamModel != m.Name {
			if out == nil {
				out = map[string]string{}
			}
			out[m.Name] = m.UpstreamModel
		}
	}
	return out
}

// BudgetMicros is the tenant's money budget (checked by Validate), and
// whether it has one.
func (t Tenant) BudgetMicros() (price.Micros, bool) {
	if t.Budget == "" {
		return 0, false
	}
	m, err := price.ParseMicros(t.Budget)
	return m, err == nil
}

// Speaks reports whether the upstream speaks protocol natively.
func (u *Upstream) Speaks(protocol string) bool {
	return slices.Contains(u.Protocols, protocol)
}

// Model is one model an upstream lists: the name clients call it by, and
// the name the upstream knows it by when that differs (a provider's dated
// model id behind a stable name).
type Model struct {
	Name          string `yaml:"name"`
	UpstreamModel string `yaml:"upstream_model"`
}

// UnmarshalYAML reads a model written as its name (`deepseek-v4-flash`) or
// as a mapping (`{name: deepseek-v4-flash, upstream_model: …}`).
func (m *Model) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		m.Name = n.Value
		return nil
	case yaml.MappingNode:
		type plain Model // without this method
		var p plain
		if err := decodeStrict(n, &p); err != nil {
			return err
		}
		*m = Model(p)
		return nil
	}
	return fmt.Errorf("line %d: a model is a name or {name, upstream_model}", n.Line)
}

// decodeStrict decodes n into v, refusing unknown keys as Parse does: a
// node's own Decode would let a typo through.
func decodeStrict(n *yaml.Node, v any) error {
	b, err := yaml.Marshal(n)
	if err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	return nil
}

// Priority is an upstream's place among the upstreams that list one model.
type Priority int

// UnmarshalYAML reads a whole number, and names the key when it is not one
// (yaml's own message would not).
func (p *Priority) UnmarshalYAML(n *yaml.Node) error {
	var i int
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || n.Decode(&i) != nil {
		return fmt.Errorf("line %d: priority %q: a whole number (lower is tried first)", n.Line, n.Value)
	}
	*p = Priority(i)
	return nil
}

// Queue bounds the wait in front of an upstream's gate (seed 003).
type Queue struct {
	MaxWaiters int           `yaml:"max_waiters"`
	MaxWait    time.Duration `yaml:"max_wait"`
}

// Quota guards a provider's free daily quota per model (seed 002).
type Quota struct {
	DailyCap     ledger.Units  `yaml:"daily_cap"`
	SmallBuffer  ledger.Units  `yaml:"small_buffer"`
	UsageWall    ledger.Units  `yaml:"usage_wall"`
	BalanceWall  ledger.Units  `yaml:"balance_wall"`
	Timezone     string        `yaml:"timezone"`
	SyncEvery    time.Duration `yaml:"sync_every"`
	SyncEveryLow time.Duration `yaml:"sync_every_low"`
	BurstSync    ledger.Units  `yaml:"burst_sync"`
	LowBalance   ledger.Units  `yaml:"low_balance"` // below it, sync every sync_every_low
	Lag          time.Duration `yaml:"lag"`         // the balance API's lag until history tells
	MinLag       time.Duration `yaml:"min_lag"`     // bounds of the online lag estimate
	MaxLag       time.Duration `yaml:"max_lag"`
	// ExpiryHorizon: free units of packages expiring within it no longer count.
	ExpiryHorizon time.Duration `yaml:"expiry_horizon"`
	TopUp         TopUp         `yaml:"top_up"`
	Balance       Balance       `yaml:"balance"`
}

// TopUp is the optional nightly top-up job of seed 002 (off by default): at
// At, it spends what is left of the day's free quota with filler calls, so
// that free packages do not expire unused. DryRun only audits the plan.
type TopUp struct {
	Enabled bool   `yaml:"enabled"`
	At      string `yaml:"at"` // HH:MM local; empty: quota.DefaultTopUpAt
	DryRun  bool   `yaml:"dry_run"`
	Prompt  string `yaml:"prompt"` // the filler call's user message
}

// DefaultTopUpPrompt asks for long output, which is what the top-up spends.
const DefaultTopUpPrompt = "Write a long, detailed essay on the history of arithmetic. Keep writing until you are stopped."

// Balance names where a guarded model's provider balance is read.
type Balance struct {
	Kind         string `yaml:"kind"` // volcengine, http-json, manual (empty: manual)
	AccessKey    string `yaml:"access_key"`
	SecretKey    string `yaml:"secret_key"`
	BaseURL      string `yaml:"base_url"`
	Region       string `yaml:"region"`
	Product      string `yaml:"product"`       // volcengine package product filter
	ResourceType string `yaml:"resource_type"` // volcengine, default Package
	ModelField   string `yaml:"model_field"`   // volcengine package field naming the model
	URL          string `yaml:"url"`           // http-json; may contain {model}
	Field        string `yaml:"field"`         // http-json dotted path, e.g. data.available
	Token        string `yaml:"token"`         // http-json optional bearer token
}

// Limits are gateway-wide bounds; zero is the gateway's (or, for the
// three reserve figures, the meter's) default.
type Limits struct {
	RequestBytesMax     int64         `yaml:"request_bytes_max"`
	DefaultOutputUnits  ledger.Units  `yaml:"default_output_units"`
	ReasoningFloorUnits ledger.Units  `yaml:"reasoning_floor_units"`
	ImageUnits          ledger.Units  `yaml:"image_units"`
	StreamQueueEvents   int           `yaml:"stream_queue_events"`
	WriteTimeout        time.Duration `yaml:"write_timeout"`
	UpstreamTimeout     time.Duration `yaml:"upstream_timeout"` // longest upstream silence mid-stream
	BodyTimeout         time.Duration `yaml:"body_timeout"`     // longest wait for a request body to arrive
	FinishGrace         Grace         `yaml:"finish_grace"`     // after finish_reason, how long a stream whose client left is still read for usage; `off`: not at all
}

// Grace is a duration that can be switched off, as limits.finish_grace is:
// a positive duration ("5s") or `off`; zero is absent (the gateway's
// default). An explicit 0s is refused rather than guessed at: absent means
// the default, and no grace is spelled `off`.
type Grace time.Duration

// GraceOff is `off`: a client that leaves after the finish reason cancels
// the upstream at once, and its run keeps its hold. The server hands it to
// the gateway as gateway.Off.
const GraceOff Grace = -1

// UnmarshalYAML reads `off` or a positive duration.
func (g *Grace) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode && n.Value == "off" {
		*g = GraceOff
		return nil
	}
	var d time.Duration
	if err := n.Decode(&d); err != nil || d <= 0 {
		return fmt.Errorf("line %d: %q: write a positive duration such as 5s, or off to switch the grace off", n.Line, n.Value)
	}
	*g = Grace(d)
	return nil
}

// String is g as the config file spells it ("" when absent).
func (g Grace) String() string {
	switch g {
	case GraceOff:
		return "off"
	case 0:
		return ""
	}
	return time.Duration(g).String()
}

//go:embed default.yaml
var defaultYAML []byte

// Default returns the embedded default: one `local` tenant and the built-in
// demo upstream. The local tenant has no key; the server generates one.
func Default() *Config {
	c, err := Parse(defaultYAML, func(string) (string, bool) { return "", false })
	if err != nil {
		panic("embedded default config: " + err.Error())
	}
	return c
}

// Load reads and validates the file at path, expanding ${ENV} from the process
// environment.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	c, err := Parse(data, os.LookupEnv)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return c, nil
}

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// Parse expands ${VAR} references with lookup, decodes strictly (unknown keys
// are errors, so a typo never silently disables a limit), fills the config's
// own defaults and validates.
func Parse(data []byte, lookup func(string) (string, bool)) (*Config, error) {
	var missing []string
	expanded := envRef.ReplaceAllFunc(data, func(m []byte) []byte {
		name := string(envRef.FindSubmatch(m)[1])
		v, ok := lookup(name)
		if !ok {
			missing = append(missing, name)
		}
		return yamlScalar(v)
	})
	if len(missing) > 0 {
		return nil, fmt.Errorf("environment variable %s is not set", strings.Join(missing, ", "))
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(expanded, &doc); err != nil {
		return nil, fmt.Errorf("parse YAML: %w", err)
	}
	if err := refuseFloats(&doc); err != nil {
		return nil, err
	}
	var c Config
	dec := yaml.NewDecoder(bytes.NewReader(expanded))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) { // an empty file means all defaults
		return nil, fmt.Errorf("parse YAML: %w", err)
	}
	c.fillDefaults()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	c.hashKeys()
	return &c, nil
}

// refuseFloats rejects any non-integer number: yaml.v3 silently truncates
// 1.5 into an int64 field, and every number in this file is a count of units,
// requests or seconds — but for money (decimalKeys), which is read as the
// text written ("0.50" unquoted stays "0.50") and parsed exactly, never as
// a float.
func refuseFloats(n *yaml.Node) error {
	return refuseFloatsAt(n, "")
}

// refuseFloatsAt is refuseFloats of n, the value of key ("" when n is no
// mapping's value); the message names the key.
func refuseFloatsAt(n *yaml.Node, key string) error {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!float" {
		if key != "" {
			key += ": "
		}
		return fmt.Errorf("parse YAML: line %d: %s%q: numbers here are whole numbers (money and prices are decimal strings, e.g. \"2.50\")", n.Line, key, n.Value)
	}
	for i, c := range n.Content {
		key := ""
		if n.Kind == yaml.MappingNode && i%2 == 1 {
			key = n.Content[i-1].Value
		}
		if key != "" && decimalKeys[key] && c.Kind == yaml.ScalarNode {
			continue
		}
		if err := refuseFloatsAt(c, key); err != nil {
			return err
		}
	}
	return nil
}

// decimalKeys are the keys whose values are money: a tenant's budget,
// money.usd_rate and the four prices of a model.
var decimalKeys = map[string]bool{"budget": true, "usd_rate": true,
	"input": true, "cached_input": true, "cache_write": true, "output": true}

// yamlScalar quotes an expanded value so that a secret containing YAML syntax
// stays one string.
func yamlScalar(v string) []byte {
	out, _ := yaml.Marshal(v)
	out = bytes.TrimRight(out, "\n")
	if strings.ContainsAny(v, ",[]{}:#") && len(out) > 0 && out[0] != '"' && out[0] != '\'' {
		// Plain is not safe inside a flow mapping ({dsn: ${DSN}}): a DSN
		// URL's ':' and ',' would split it.
		out, _ = yaml.Marshal(&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Style: yaml.DoubleQuotedStyle, Value: v})
		out = bytes.TrimRight(out, "\n")
	}
	return out
}

// fillDefaults fills the keys that are the config's own; every other key
// left out stays zero for its package to fill.
func (c *Config) fillDefaults() {
	orDefault(&c.Addr, DefaultAddr)
	orDefault(&c.Meter, MeterTiktoken)
	orDefault(&c.Ledger.Driver, DriverSQLite)
	for i := range c.Tenants {
		orDefault(&c.Tenants[i].MaxConcurrent, 1)
	}
	for i := range c.Upstreams {
		u := &c.Upstreams[i]
		u.Models = u.Models[:0]
		for _, m := range u.Listed {
			u.Models = append(u.Models, m.Name)
		}
		if u.Kind == "" {
			u.Kind = KindOpenAI
			if u.Name == KindDemo {
				u.Kind = KindDemo
			}
		}
		if len(u.Protocols) == 0 {
			u.Protocols = []string{ProtocolChat}
			if u.Kind == KindDemo {
				u.Protocols = slices.Clone(Protocols)
			}
		}
		if q := u.Quota; q != nil {
			orDefault(&q.TopUp.Prompt, DefaultTopUpPrompt)
		}
	}
	if m := c.Money; m != nil && m.Currency == price.TableCurrency {
		orDefault(&m.USDRate, "1") // dollars need no conversion
	}
}

// orDefault sets *v to def when it is the zero value (not given in the file).
func orDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}

// hashKeys moves plaintext keys into KeyHashes so they are never stored.
func (c *Config) hashKeys() {
	for i := range c.Tenants {
		t := &c.Tenants[i]
		if t.Key != "" {
			t.KeyHashes = append(t.KeyHashes, ledger.HashKey(t.Key))
		}
		for _, k := range t.Keys {
			t.KeyHashes = append(t.KeyHashes, ledger.HashKey(k))
		}
		t.Key, t.Keys = "", nil
	}
}

// LedgerTenants converts the configured tenants for ledger.Store.ApplyTenants.
// A tenant with a money budget and no budget_units budgets in money only.
func (c *Config) LedgerTenants() []ledger.Tenant {
	out := make([]ledger.Tenant, 0, len(c.Tenants))
	calendars := c.calendars()
	for i, t := range c.Tenants {
		units := t.BudgetUnits
		money, hasMoney := t.BudgetMicros()
		if hasMoney && units == 0 {
			units = ledger.NoUnitsLimit // budget: "50.00" alone budgets in money only
		}
		out = append(out, ledger.Tenant{
			ID:             t.ID,
			KeyHashes:      append([]string(nil), t.KeyHashes...),
			BudgetUnits:    units,
			BudgetMicros:   money,
			HasMoneyBudget: hasMoney,
			MaxConcurrent:  t.MaxConcurrent,
			AllowedModels:  append([]string(nil), t.AllowedModels...),
			PerMinute:      t.RateLimits.PerMinute,
			PerHour:        t.RateLimits.PerHour,
			Calendar:       calendars[i],
		})
	}
	return out
}

// UpstreamFor returns the first upstream that lists model, if any (the
// route's first in config order; see gateway's route table for the order
// calls take).
func (c *Config) UpstreamFor(model string) (*Upstream, bool) {
	for i := range c.Upstreams {
		for _, m := range c.Upstreams[i].Models {
			if m == model {
				return &c.Upstreams[i], true
			}
		}
	}
	return nil, false
}
