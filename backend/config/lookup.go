package config

import (
	"fmt"
	"net/url"
	"strings"
	"time"
)

// UsageLookup is an upstream's usage_lookup: `{kind: openrouter}` (GET
// {base_url}/generation?id={id} with its key) or `{kind: http-json, url:
// "…{id}…", input: FIELD, output: FIELD}` with optional cached, reasoning,
// cost and id fields (dotted paths into the answer), and when to ask.
type UsageLookup struct {
	Kind      string `yaml:"kind"`
	URL       string `yaml:"url"`
	Input     string `yaml:"input"`
	Output    string `yaml:"output"`
	Cached    string `yaml:"cached"`
	Reasoning string `yaml:"reasoning"`
	Cost      string `yaml:"cost"`
	ID        string `yaml:"id"`
	// Delay before the first lookup of a held run (default 10s); Window
	// how long it is retried with backoff (default 1h).
	Delay  time.Duration `yaml:"delay"`
	Window time.Duration `yaml:"window"`
	// MaxInFlight and PerMinute bound the upstream's lookups (default 2
	// at once, 60 a minute).
	MaxInFlight int `yaml:"max_in_flight"`
	PerMinute   int `yaml:"per_minute"`
}

// Lookup kinds.
const (
	LookupOpenRouter = "openrouter"
	LookupHTTPJSON   = "http-json"
)

// validateLookup checks usage_lookup and auto_reconcile, naming the field.
// A provider's figure is tokens, so it settles a ledger that counts
// tokens (meter tiktoken) only.
func (u *Upstream) validateLookup(where, meter string) error {
	l := u.UsageLookup
	if l == nil {
		if u.AutoReconcile {
			return fmt.Errorf("%s.auto_reconcile: it applies what a usage_lookup finds; give the upstream a usage_lookup", where)
		}
		return nil
	}
	where += ".usage_lookup"
	switch l.Kind {
	case LookupOpenRouter:
	case LookupHTTPJSON:
		if err := l.validateHTTPJSON(where); err != nil {
			return err
		}
	default:
		return fmt.Errorf("%s.kind %q: want %s or %s", where, l.Kind, LookupOpenRouter, LookupHTTPJSON)
	}
	if meter != MeterTiktoken {
		return fmt.Errorf("%s: a provider reports tokens, and the meter %s counts bytes; a usage lookup needs meter: %s", where, meter, MeterTiktoken)
	}
	if l.Delay < 0 || l.Window < 0 || l.MaxInFlight < 0 || l.PerMinute < 0 {
		return fmt.Errorf("%s: delay, window, max_in_flight and per_minute cannot be negative", where)
	}
	if l.Window > 0 && l.Delay > l.Window {
		return fmt.Errorf("%s.delay %s is longer than its window %s", where, l.Delay, l.Window)
	}
	return nil
}

func (l *UsageLookup) validateHTTPJSON(where string) error {
	u, err := url.Parse(strings.ReplaceAll(l.URL, "{id}", "x"))
	switch {
	case !strings.Contains(l.URL, "{id}"):
		return fmt.Errorf("%s.url %q has no {id}: the lookup could not name the call", where, l.URL)
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return fmt.Errorf("%s.url %q: want an http(s) URL", where, l.URL)
	}
	for _, f := range []struct{ name, path string }{{"input", l.Input}, {"output", l.Output}} {
		if strings.TrimSpace(f.path) == "" {
			return fmt.Errorf("%s.%s is empty: name the answer's field of the %s tokens (e.g. data.%s_tokens)", where, f.name, f.name, f.name)
		}
	}
	for _, f := range []struct{ name, path string }{{"input", l.Input}, {"output", l.Output}, {"cached", l.Cached},
		{"reasoning", l.Reasoning}, {"cost", l.Cost}, {"id", l.ID}} {
		if f.path != "" && strings.Contains("."+f.path+".", "..") {
			return fmt.Errorf("%s.%s %q has an empty part", where, f.name, f.path)
		}
	}
	return nil
}
