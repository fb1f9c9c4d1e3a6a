package config

import (
	"strings"
	"testing"
)

// Bad usage_lookup input is refused at start, naming the field.
func TestUsageLookupRefusals(t *testing.T) {
	ok := func() Upstream {
		return Upstream{UsageLookup: &UsageLookup{Kind: LookupHTTPJSON, URL: "https://p.example/usage/{id}", Input: "data.in", Output: "data.out"}}
	}
	cases := []struct {
		name   string
		change func(u *Upstream)
		meter  string
		want   string
	}{
		{"Fine", func(*Upstream) {}, MeterTiktoken, ""},
		{"OpenRouter", func(u *Upstream) { u.UsageLookup = &UsageLookup{Kind: LookupOpenRouter}; u.AutoReconcile = true }, MeterTiktoken, ""},
		{"NoID", func(u *Upstream) { u.UsageLookup.URL = "https://p.example/usage" }, MeterTiktoken, "upstreams[0].usage_lookup.url \"https://p.example/usage\" has no {id}"},
		{"EmptyInput", func(u *Upstream) { u.UsageLookup.Input = " " }, MeterTiktoken, "upstreams[0].usage_lookup.input is empty"},
		{"EmptyOutput", func(u *Upstream) { u.UsageLookup.Output = "" }, MeterTiktoken, "upstreams[0].usage_lookup.output is empty"},
		{"EmptyPart", func(u *Upstream) { u.UsageLookup.Cached = "data..c" }, MeterTiktoken, "upstreams[0].usage_lookup.cached \"data..c\" has an empty part"},
		{"UnknownKind", func(u *Upstream) { u.UsageLookup.Kind = "ark" }, MeterTiktoken, "upstreams[0].usage_lookup.kind \"ark\""},
		{"AutoWithout", func(u *Upstream) { u.UsageLookup, u.AutoReconcile = nil, true }, MeterTiktoken, "upstreams[0].auto_reconcile: it applies what a usage_lookup finds"},
		{"Bytes", func(*Upstream) {}, MeterUTF8Bytes, "upstreams[0].usage_lookup: a provider reports tokens"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u := ok()
			c.change(&u)
			err := u.validateLookup("upstreams[0]", c.meter)
			if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
}
