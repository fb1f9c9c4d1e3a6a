package e2e_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/live"
	"github.com/quotagate/quotagate/backend/server"
)

func adminPost(t *testing.T, s *server.Server, path, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", s.URL()+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+s.AdminToken())
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestDashboardDeleteTenantByClicking deletes a tenant on the Settings tab:
// while it keeps a hold the refusal shows under its row and the key still
// works; once the hold is reconciled the row goes, the banner says the file
// still has it, and its key is refused.
func TestDashboardDeleteTenantByClicking(t *testing.T) {
	exe := chromium(t)
	s := openServer(t, dashboardBuilt(t))
	key := s.GeneratedKeys()["local"]
	bg := context.Background()
	st := s.Store()
	if _, err := st.Admit(bg, ledger.AdmitRequest{RunID: "run_del", TenantID: "local", Upstream: "demo", Model: "demo-chat", ReserveUnits: 102, Actor: ledger.System("e2e")}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.KeepHold(bg, "run_del", ledger.RunInterrupted, "stream cut before [DONE]", ledger.System("test")); err != nil {
		t.Fatal(err)
	}
	s.Hub().Publish(live.Change{Kind: live.KindLedger, RunID: "run_del", TenantID: "local"})
	balance := func() int {
		req, _ := http.NewRequest("GET", s.URL()+"/v1/balance", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}

	ctx := browser(t, exe)
	err := chromedp.Do(ctx,
		chromedp.Navigate(s.DashboardURL()),
		waitJS(`document.querySelector('[data-testid="conn-status"]')?.dataset.value === 'live'`),
		chromedp.Evaluate[chromedp.Void](`window.confirm = () => true`),
		chromedp.Click(tid("nav-settings")),
		chromedp.Click(tid("delete-local")),
		waitJS(`document.querySelector('[data-testid="delete-error-local"]')?.textContent.includes('102 units are held by 1 run')`),
	)
	if err != nil {
		t.Fatalf("refused delete by clicking: %v", err)
	}
	if balance() != 200 {
		t.Fatal("a refused delete revoked the key")
	}
	if _, err := st.Reconcile(bg, "run_del", 0, "provider console: nothing billed", ledger.ActorAdmin); err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(ctx,
		chromedp.Click(tid("delete-local")),
		chromedp.WaitNotPresent(tid("settings-row-local")),
		waitJS(`document.querySelector('[data-testid="tenant-deleted"]')?.textContent.includes('write back')`),
		waitJS(`document.querySelector('[data-testid="override-banner"]')?.textContent.includes('local.tenant')`),
	)
	if err != nil {
		t.Fatalf("delete by clicking: %v", err)
	}
	if code := balance(); code != http.StatusUnauthorized {
		t.Fatalf("the deleted tenant's key on /v1/balance: %d, want 401", code)
	}
}

// TestDashboardRateUse: the Overview's rate-limit use is the limiter's own
// count — two calls admitted under per_minute 2, the third refused with
// 429 — shown without a reload.
func TestDashboardRateUse(t *testing.T) {
	exe := chromium(t)
	s := openServer(t, dashboardBuilt(t))
	key := s.GeneratedKeys()["local"]
	if resp, b := adminPost(t, s, "/admin/api/tenants", `{"id":"local","budget_units":1000000,"max_concurrent":4,"per_minute":2}`); resp != 200 {
		t.Fatalf("set per_minute: %d %s", resp, b)
	}
	ctx := browser(t, exe)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(s.DashboardURL()),
		waitJS(`document.querySelector('[data-testid="conn-status"]')?.dataset.value === 'live'`),
		chromedp.Click(tid("nav-overview")),
		waitJS(`document.querySelector('[data-testid="tenant-local-rate-minute"]')?.textContent.startsWith('0 / 2')`),
	); err != nil {
		t.Fatalf("rate use before any call: %v", err)
	}
	for i, want := range []int{200, 200, http.StatusTooManyRequests} {
		req, _ := http.NewRequest("POST", s.URL()+"/v1/chat/completions",
			strings.NewReader(`{"model":"demo-chat","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("call %d: %d, want %d", i+1, resp.StatusCode, want)
		}
	}
	if err := chromedp.Do(ctx,
		waitJS(`document.querySelector('[data-testid="tenant-local-rate-minute"]')?.textContent.startsWith('2 / 2')`),
		waitJS(`document.querySelector('[data-testid="tenant-local-rate-refused"]')?.textContent.startsWith('1 ')`),
	); err != nil {
		t.Fatalf("rate use after 2 admitted and 1 refused: %v", err)
	}
}
