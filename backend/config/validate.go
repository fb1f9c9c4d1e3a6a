package config

import (
	"cmp"
	"fmt"
	"maps"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/price"
)

// namedUnits keeps validation order (and so its first message) stable.
type namedUnits struct {
	name  string
	units ledger.Units
}

var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// Validate refuses a configuration that could not be enforced as written.
// Every message names the field and says what would be accepted. It checks
// what the file says: a key left out (zero) is its package's default, and
// a rule between a written value and a default is that package's to check
// when the server builds it (quota.Options.Validate, for one).
func (c *Config) Validate() error {
	host, port, err := net.SplitHostPort(c.Addr)
	if err != nil {
		return fmt.Errorf("addr %q: want host:port, e.g. 127.0.0.1:8787", c.Addr)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("addr %q: quotagate listens on loopback only (127.0.0.1, ::1 or localhost)", c.Addr)
	}
	if port == "" {
		return fmt.Errorf("addr %q: missing port", c.Addr)
	}
	if c.Meter != MeterTiktoken && c.Meter != MeterUTF8Bytes {
		return fmt.Errorf("meter %q: want %s or %s", c.Meter, MeterTiktoken, MeterUTF8Bytes)
	}
	if c.AdminToken != "" && len(c.AdminToken) < 16 {
		return fmt.Errorf("admin_token: at least 16 characters, or leave it empty to have one generated")
	}
	if err := c.validateTenants(); err != nil {
		return err
	}
	if err := c.validateUpstreams(); err != nil {
		return err
	}
	if err := c.validateMoney(); err != nil {
		return err
	}
	if err := c.validatePeriods(); err != nil {
		return err
	}
	if err := c.Ledger.validate(); err != nil {
		return err
	}
	if err := c.Alerts.validate(); err != nil {
		return err
	}
	return c.Limits.validate()
}

// maxTenantConcurrent bounds a tenant's max_concurrent.
const maxTenantConcurrent = 10_000

func (c *Config) validateTenants() error {
	seen := map[string]bool{}
	keys := map[string]string{}
	for i, t := range c.Tenants {
		where := fmt.Sprintf("tenants[%d]", i)
		id := map[string]any{"tenant": t.ID}
		if !idPattern.MatchString(t.ID) {
			return refused(ledger.ReasonTenantIDInvalid, id, "%s.id %q: 1–64 letters, digits, '.', '_' or '-'", where, t.ID)
		}
		where = fmt.Sprintf("tenant %s", t.ID)
		if seen[t.ID] {
			return fmt.Errorf("%s: listed twice", where)
		}
		seen[t.ID] = true
		if err := ledger.CheckUnits(where+" budget_units", t.BudgetUnits); err != nil {
			reason, params := ledger.ErrorReason(err)
			return refused(reason, params, "%s", ledger.ErrorMessage(err))
		}
		if t.MaxConcurrent < 1 || t.MaxConcurrent > maxTenantConcurrent {
			return refused(ledger.ReasonMaxConcurrentRange, map[string]any{"tenant": t.ID, "got": t.MaxConcurrent, "min": 1, "max": maxTenantConcurrent},
				"%s: max_concurrent must be between 1 and %d (got %d)", where, maxTenantConcurrent, t.MaxConcurrent)
		}
		if t.RateLimits.PerMinute < 0 || t.RateLimits.PerHour < 0 {
			return refused(ledger.ReasonRateLimitsNegative, id, "%s: rate_limits must not be negative", where)
		}
		for _, k := range append([]string{t.Key}, t.Keys...) {
			if k == "" {
				continue
			}
			if len(k) < 8 {
				return fmt.Errorf("%s: a key must be at least 8 characters", where)
			}
			if other, dup := keys[k]; dup {
				return fmt.Errorf("%s: shares a key with tenant %s; every key must name one tenant", where, other)
			}
			keys[k] = t.ID
		}
		for _, h := range t.KeyHashes {
			if len(h) != 64 || strings.Trim(h, "0123456789abcdef") != "" {
				return fmt.Errorf("%s: key_hashes entries are 64 lowercase hex characters (SHA-256)", where)
			}
		}
	}
	return nil
}

// Refusal is a validation failure that also names its reason
// (ledger/reason.go) and parameters, for the dashboard to say it in the
// operator's language; its text is what the command line prints.
type Refusal struct {
	Msg    string
	Reason string
	Params map[string]any
}

func (r *Refusal) Error() string { return r.Msg }

func refused(reason string, params map[string]any, format string, args ...any) error {
	return &Refusal{Msg: fmt.Sprintf(format, args...), Reason: reason, Params: params}
}

func (c *Config) validateUpstreams() error {
	seen := map[string]bool{}
	for i, u := range c.Upstreams {
		where := fmt.Sprintf("upstreams[%d]", i)
		if !idPattern.MatchString(u.Name) {
			return fmt.Errorf("%s.name %q: 1–64 letters, digits, '.', '_' or '-'", where, u.Name)
		}
		where = "upstream " + u.Name
		if seen[u.Name] {
			return fmt.Errorf("%s: listed twice", where)
		}
		seen[u.Name] = true
		switch u.Kind {
		case KindDemo:
		case KindOpenAI:
			p, err := url.Parse(u.BaseURL)
			if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
				return fmt.Errorf("%s: base_url %q must be an http(s) URL", where, u.BaseURL)
			}
		default:
			return fmt.Errorf("%s: kind %q: want %s or %s", where, u.Kind, KindOpenAI, KindDemo)
		}
		for j, proto := range u.Protocols {
			if !slices.Contains(Protocols, proto) {
				return fmt.Errorf("%s: protocols[%d] %q: want %s", where, j, proto, strings.Join(Protocols, ", "))
			}
			if slices.Index(u.Protocols, proto) != j {
				return fmt.Errorf("%s: protocols lists %s twice", where, proto)
			}
		}
		if err := u.validateKeys(where); err != nil {
			return err
		}
		if err := u.validateLookup(where, c.Meter); err != nil {
			return err
		}
		switch u.ReasoningSwitch {
		case "", "reasoning_effort", "thinking":
		default:
			return fmt.Errorf("%s: reasoning_switch %q: want reasoning_effort or thinking (or leave it out)", where, u.ReasoningSwitch)
		}
		if err := u.validateModels(where); err != nil {
			return err
		}
		if u.MaxConcurrent < 0 || u.MaxConcurrent > 10_000 { // 0: gate.DefaultMaxConcurrent
			return fmt.Errorf("%s: max_concurrent must be between 1 and 10000", where)
		}
		if u.Queue.MaxWaiters < 0 || u.Queue.MaxWaiters > 100_000 {
			return fmt.Errorf("%s: queue.max_waiters must be between 0 and 100000", where)
		}
		if u.Queue.MaxWait < 0 || u.Queue.MaxWait > 10*time.Minute {
			return fmt.Errorf("%s: queue.max_wait must be between 0 and 10m", where)
		}
		if u.Quota != nil {
			if err := u.Quota.validate(where); err != nil {
				return err
			}
		}
	}
	return nil
}

// validateModels checks an upstream's model list. A model may be listed by
// several upstreams (its route), but once by each: a second listing on one
// upstream would leave it unclear which upstream_model a call goes out as.
// On an upstream with a quota, two names may not go out as one model: the
// provider's free quota is one pool, and the guard, which keeps a day per
// name, would give each name the whole of it.
func (u *Upstream) validateModels(where string) error {
	if len(u.Listed) == 0 {
		return fmt.Errorf("%s: list at least one model", where)
	}
	names := map[string]bool{}
	sentAs := map[string]string{} // upstream model → the name that goes out as it
	for j, m := range u.Listed {
		switch {
		case m.Name == "":
			return fmt.Errorf("%s: models[%d]: empty model name (write a name, or {name: NAME, upstream_model: NAME})", where, j)
		case !modelPattern.MatchString(m.Name):
			return fmt.Errorf("%s: models[%d] %q: a model name has no spaces or control characters and at most 200 characters", where, j, m.Name)
		case m.UpstreamModel != "" && !modelPattern.MatchString(m.UpstreamModel):
			return fmt.Errorf("%s: models[%d].upstream_model %q: a model name has no spaces or control characters and at most 200 characters", where, j, m.UpstreamModel)
		case names[m.Name]:
			return fmt.Errorf("%s: models lists %s twice; list a model once per upstream", where, m.Name)
		}
		names[m.Name] = true
		out := cmp.Or(m.UpstreamModel, m.Name)
		if first, ok := sentAs[out]; ok && u.Quota != nil {
			return fmt.Errorf("%s: models %s and %s both go out as %s, whose free quota is one pool at the provider: the quota guard would allow each of them all of it; list it under one name", where, first, m.Name, out)
		}
		sentAs[out] = m.Name
	}
	return nil
}

// modelPattern is a model name as providers spell them
// ("deepseek-v4-flash-ga-260731", "models/gemini-2.5-pro", "org/model:tag").
var modelPattern = regexp.MustCompile(`^[^\s\x00-\x1f\x7f]{1,200}$`)

func (q *Quota) validate(where string) error {
	for _, f := range []namedUnits{{"daily_cap", q.DailyCap}, {"small_buffer", q.SmallBuffer},
		{"usage_wall", q.UsageWall}, {"balance_wall", q.BalanceWall}, {"burst_sync", q.BurstSync},
		{"low_balance", q.LowBalance}} {
		if err := ledger.CheckUnits(where+" quota."+f.name, f.units); err != nil {
			return fmt.Errorf("%s", ledger.ErrorMessage(err))
		}
	}
	if _, err := time.LoadLocation(q.Timezone); err != nil {
		return fmt.Errorf("%s: quota.timezone %q is not a known time zone", where, q.Timezone)
	}
	if (q.SyncEvery != 0 && q.SyncEvery < time.Minute) || (q.SyncEveryLow != 0 && q.SyncEveryLow < time.Minute) {
		return fmt.Errorf("%s: quota sync intervals must be at least 1m", where)
	}
	// Their order with the defaults of those left out is quota.Options.Validate's.
	for _, lag := range []time.Duration{q.MinLag, q.Lag, q.MaxLag} {
		if lag < 0 || lag > 2*time.Hour {
			return fmt.Errorf("%s: quota lags must satisfy 0 ≤ min_lag ≤ lag ≤ max_lag ≤ 2h (got %s, %s, %s)",
				where, q.MinLag, q.Lag, q.MaxLag)
		}
	}
	if q.ExpiryHorizon < 0 || q.ExpiryHorizon > 24*time.Hour {
		return fmt.Errorf("%s: quota.expiry_horizon must be between 0 and 24h", where)
	}
	if _, err := time.Parse("15:04", q.TopUp.At); q.TopUp.At != "" && err != nil {
		return fmt.Errorf("%s: quota.top_up.at %q: want HH:MM", where, q.TopUp.At)
	}
	b := q.Balance
	switch b.Kind {
	case "", "manual":
	case "volcengine":
		if b.AccessKey == "" || b.SecretKey == "" {
			return fmt.Errorf("%s: quota.balance kind volcengine needs access_key and secret_key", where)
		}
	case "http-json":
		p, err := url.Parse(b.URL)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return fmt.Errorf("%s: quota.balance.url %q must be an http(s) URL", where, b.URL)
		}
		if b.Field == "" {
			return fmt.Errorf("%s: quota.balance.field names the number to read, e.g. data.available", where)
		}
	default:
		return fmt.Errorf("%s: quota.balance.kind %q: want volcengine, http-json or manual", where, b.Kind)
	}
	return nil
}

var currencyPattern = regexp.MustCompile(`^[A-Z]{3}$`)

// validateMoney checks the currency and every amount of money: a money
// budget or a price needs the currency it is in, so a config without
// money refuses them rather than guessing one.
func (c *Config) validateMoney() error {
	if m := c.Money; m != nil {
		if !currencyPattern.MatchString(m.Currency) {
			return fmt.Errorf("money.currency %q: an ISO 4217 code, three upper-case letters such as USD, EUR or CNY", m.Currency)
		}
		if m.USDRate == "" {
			return fmt.Errorf("money.usd_rate is missing: how much %s one US dollar buys (e.g. \"7.1\"), which converts the price table", m.Currency)
		}
		if _, err := price.ParseRate(m.USDRate); err != nil {
			return fmt.Errorf("money.usd_rate: %w", err)
		}
	}
	for i, t := range c.Tenants {
		if t.Budget == "" {
			continue
		}
		where := fmt.Sprintf("tenants[%d].budget", i)
		if c.Money == nil {
			return fmt.Errorf("%s %q: a money budget needs the gateway's currency: add money: {currency: USD, usd_rate: \"1\"}", where, t.Budget)
		}
		if _, err := price.ParseMicros(t.Budget); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
	}
	for i, u := range c.Upstreams {
		for _, model := range slices.Sorted(maps.Keys(u.Prices)) {
			where := fmt.Sprintf("upstreams[%d].prices.%s", i, model)
			if c.Money == nil {
				return fmt.Errorf("%s: a price needs the gateway's currency: add money: {currency: USD, usd_rate: \"1\"}", where)
			}
			if !slices.Contains(u.Models, model) {
				return fmt.Errorf("%s: upstream %s does not serve %s (its models: %s)", where, u.Name, model, strings.Join(u.Models, ", "))
			}
			if _, err := u.Prices[model].Quote(); err != nil {
				return fmt.Errorf("%s.%w", where, firstError(err))
			}
		}
	}
	return nil
}

// firstError is the first of errors.Join's errors: one field at a time,
// as every other message here names one.
func firstError(err error) error {
	if j, ok := err.(interface{ Unwrap() []error }); ok && len(j.Unwrap()) > 0 {
		return j.Unwrap()[0]
	}
	return err
}

// validate checks the limits written; zero is the gateway's or the meter's
// default.
func (l Limits) validate() error {
	if l.RequestBytesMax != 0 && (l.RequestBytesMax < 1024 || l.RequestBytesMax > 1<<30) {
		return fmt.Errorf("limits.request_bytes_max must be between 1024 and 1073741824")
	}
	for _, f := range []namedUnits{{"default_output_units", l.DefaultOutputUnits},
		{"reasoning_floor_units", l.ReasoningFloorUnits}, {"image_units", l.ImageUnits}} {
		if err := ledger.CheckUnits("limits."+f.name, f.units); err != nil {
			return fmt.Errorf("%s", ledger.ErrorMessage(err))
		}
	}
	if l.StreamQueueEvents < 0 || l.StreamQueueEvents > 4096 {
		return fmt.Errorf("limits.stream_queue_events must be between 1 and 4096")
	}
	if underSecond(l.WriteTimeout) || underSecond(l.UpstreamTimeout) {
		return fmt.Errorf("limits.write_timeout and limits.upstream_timeout must be at least 1s")
	}
	if underSecond(l.BodyTimeout) {
		return fmt.Errorf("limits.body_timeout must be at least 1s")
	}
	if l.FinishGrace != GraceOff && (l.FinishGrace < 0 || l.FinishGrace > Grace(time.Minute)) {
		return fmt.Errorf("limits.finish_grace must be off or at most 1m")
	}
	return nil
}

// underSecond reports a timeout written below 1s (0 is the default).
func underSecond(d time.Duration) bool { return d != 0 && d < time.Second }
