package e2e_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/quotagate/quotagate/backend/config"
	"github.com/quotagate/quotagate/backend/server"
)

// setInput types v into the input with data-testid id as a person would
// (value, then the input event Preact listens to).
func setInput(id, v string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const e = document.querySelector('[data-testid=%q]');
		e.value = %q; e.dispatchEvent(new Event('input', {bubbles: true})); })()`, id, v))
}

// TestSettingsCreateAndRotateByClicking creates a tenant on the Settings tab
// and rotates its key by clicking; the key shown once opens /v1, the
// ledger has the tenant with its budget, and the override banner names it.
func TestSettingsCreateAndRotateByClicking(t *testing.T) {
	exe := chromium(t)
	s := openServer(t, dashboardBuilt(t))
	ctx := browser(t, exe)
	err := chromedp.Do(ctx,
		chromedp.Navigate(s.DashboardURL()),
		waitJS(`document.querySelector('[data-testid="conn-status"]')?.dataset.value === 'live'`),
		chromedp.Evaluate[chromedp.Void](`window.confirm = () => true`),
		chromedp.Click(tid("nav-settings")),
		chromedp.Click(tid("new-tenant")),
		chromedp.WaitVisible(tid("tenant-dialog")),
		setInput("tenant-id", "e2e-bot"),
		setInput("tenant-budget", "5000"),
		setInput("tenant-conc", "2"),
		chromedp.Click(tid("tenant-save")),
		chromedp.WaitVisible(tid("settings-row-e2e-bot")),
		waitJS(`document.querySelector('[data-testid="override-banner"]')?.textContent.includes('e2e-bot')`),
		chromedp.Click(tid("rotate-e2e-bot")),
		chromedp.WaitVisible(tid("new-key")),
	)
	if err != nil {
		t.Fatalf("create and rotate by clicking: %v", err)
	}
	key, err := chromedp.Run(ctx, chromedp.Text(tid("new-key")))
	if err != nil || !strings.HasPrefix(key, "sk-qg-e2e-bot-") {
		t.Fatalf("the key shown once: %q %v", key, err)
	}
	b, err := s.Store().Balance(context.Background(), "e2e-bot")
	if err != nil || b.BudgetUnits != 5000 {
		t.Fatalf("ledger balance of e2e-bot: %+v %v", b, err)
	}
	req, _ := http.NewRequest("GET", s.URL()+"/v1/balance", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("the rotated key on /v1/balance: %d", resp.StatusCode)
	}
}

// TestSettingsWriteBackByClicking edits a budget, sees the override banner,
// and writes it back to the config file the server was started with; the
// file then says the new budget and keeps its comment.
func TestSettingsWriteBackByClicking(t *testing.T) {
	exe := chromium(t)
	dist := dashboardBuilt(t)
	path := filepath.Join(t.TempDir(), "quotagate.yaml")
	yml := "# my quotagate\ntenants:\n  - id: local # the laptop\n    budget_units: 1000\nupstreams: [{name: demo, kind: demo, models: [demo-chat]}]\n"
	if err := os.WriteFile(path, []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := server.Open(context.Background(), server.Options{Config: cfg, ConfigPath: path,
		DataDir: t.TempDir(), Addr: "127.0.0.1:0", Version: "e2e", Frontend: dist})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx := browser(t, exe)
	err = chromedp.Do(ctx,
		chromedp.Navigate(s.DashboardURL()),
		waitJS(`document.querySelector('[data-testid="conn-status"]')?.dataset.value === 'live'`),
		chromedp.Evaluate[chromedp.Void](`window.confirm = () => true`),
		chromedp.Click(tid("nav-settings")),
		chromedp.Click(tid("edit-local")),
		chromedp.WaitVisible(tid("tenant-dialog")),
		setInput("tenant-budget", "4242"),
		chromedp.Click(tid("tenant-save")),
		waitJS(`document.querySelector('[data-testid="override-banner"]')?.textContent.includes('4242')`),
		chromedp.Click(tid("write-back")),
		waitJS(`document.querySelector('[data-testid="written-back"]')?.textContent.includes('quotagate.yaml')`),
		waitJS(`document.querySelector('[data-testid="override-banner"]') === null`),
	)
	if err != nil {
		t.Fatalf("write back by clicking: %v", err)
	}
	data, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(data), "budget_units: 4242") || !strings.Contains(string(data), "# the laptop") {
		t.Fatalf("the file after write-back (%v):\n%s", err, data)
	}
}
