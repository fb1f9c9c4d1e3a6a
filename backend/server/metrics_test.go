package server_test

import (
	"io"
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
