package e2e_test

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/quotagate/quotagate/backend/config"
	"github.com/quotagate/quotagate/backend/server"
)

// TestDashboardRoute: a model two upstreams serve shows its route on the
// overview — the upstreams in the order calls try them, the second under
// its own name for the model — and a model one upstream serves a route of one.
func TestDashboardRoute(t *testing.T) {
	exe := chromium(t)
	dist := dashboardBuilt(t)
	cfg, err := config.Parse([]byte(`
upstreams:
  - {name: demo-paid, kind: demo, priority: 1, models: [demo-chat]}
  - {name: demo, kind: demo, models: [demo-chat, {name: demo-reasoner, upstream_model: demo-chat}]}
tenants:
  - {id: local, budget_units: 1000000, max_concurrent: 4}
`), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	s, err := server.Open(context.Background(), server.Options{Config: cfg, DataDir: t.TempDir(), Addr: "127.0.0.1:0", Version: "e2e", Frontend: dist})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx := browser(t, exe)
	err = chromedp.Do(ctx,
		chromedp.Navigate(s.DashboardURL()),
		waitJS(`document.querySelector('[data-testid="conn-status"]')?.dataset.value === 'live'`),
		chromedp.Click(tid("nav-overview")),
		chromedp.WaitVisible(tid("route-row-demo-chat")),
		waitJS(`[...document.querySelectorAll('[data-testid="route-row-demo-chat"] li')].map((e) => e.dataset.testid).join() === 'route-demo-chat-demo,route-demo-chat-demo-paid'`),
		waitJS(`document.querySelector('[data-testid="route-demo-chat-demo-paid"]').textContent.includes('priority 1')`),
		waitJS(`document.querySelector('[data-testid="route-demo-chat-demo"]').dataset.evicted === 'false'`),
		waitJS(`document.querySelector('[data-testid="route-demo-reasoner-demo"]').textContent.includes('(demo-chat)')`),
	)
	if err != nil {
		t.Fatalf("route view: %v", err)
	}
}
