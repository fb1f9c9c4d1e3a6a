package server_test

import (
	"io"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestMetricsTenantLabels: /metrics without the admin token names no
// tenant; with it — the scheme in any case — it does.
func TestMetricsTenantLabels(t *testing.T) {
	s := openYAML(t, `
tenants:
  - {id: secret-tenant-name, key: sk-metrics-test-key-0123456789, budget_units: 1000, rate_limits: {per_minute: 5}}
upstreams:
  - {name: demo, kind: demo, models: [demo-chat]}
`)
	body := func(tok string) string {
		b, _ := io.ReadAll(get(t, s, "/metrics", tok).Body)
		return string(b)
	}
	if b := body(""); strings.Contains(b, "secret-tenant-name") || strings.Contains(b, `tenant="`) || !strings.Contains(b, "quotagate_build_info") {
		t.Errorf("/metrics without the token names a tenant, or lost the rest:\n%s", b)
	}
	if b := body("wrong-token"); strings.Contains(b, "secret-tenant-name") {
		t.Errorf("/metrics with a wrong token names a tenant")
	}
	if b := body(s.AdminToken()); !strings.Contains(b, `tenant="secret-tenant-name"`) {
		t.Errorf("/metrics with the admin token lacks the tenant series:\n%s", b)
	}
}

// TestMetricsDocumented: the metrics table of docs/api.md names every
// quotagate_ metric a gateway serves the admin token, with its type, and
// none it does not serve (a gateway with every part that has metrics: a
// rate-limited tenant, an upstream's gate, a currency, the SQLite ledger).
func TestMetricsDocumented(t *testing.T) {
	s := openYAML(t, `
money: {currency: USD}
tenants:
  - {id: team, key: sk-metrics-docs-key-0123456789, budget_units: 1000, budget: '5', rate_limits: {per_minute: 5, per_hour: 50}}
upstreams:
  - {name: demo, kind: demo, models: [demo-chat], prices: {demo-chat: {input: '1', cached_input: '1', cache_write: '1', output: '1'}}}
`)
	get(t, s, "/healthz", "").Body.Close() // an HTTP request counted
	b, _ := io.ReadAll(get(t, s, "/metrics", s.AdminToken()).Body)
	served := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^# TYPE (quotagate_\w+) (\w+)$`).FindAllStringSubmatch(string(b), -1) {
		served[m[1]] = m[2]
	}
	doc, err := os.ReadFile("../../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]string{}
	for _, m := range regexp.MustCompile("(?m)^\\| `(quotagate_\\w+)` \\| (\\w+) \\|").FindAllStringSubmatch(string(doc), -1) {
		documented[m[1]] = m[2]
	}
	if len(served) == 0 || !maps.Equal(served, documented) {
		t.Fatalf("served %v\ndocumented %v", sorted(served), sorted(documented))
	}
}

func sorted(m map[string]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, k+" "+v)
	}
	slices.Sort(out)
	return out
}
