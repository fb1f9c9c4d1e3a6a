package e2e_test

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/quotagate/quotagate/backend/config"
	"github.com/quotagate/quotagate/backend/server"
)

// TestDashboardRunCost: with `money` configured, a completed call's cost
// shows on the Runs table in the page's language and the gateway's
// currency — yuan in zh-CN for CNY (usd_rate 7.1), dollars in en for USD.
func TestDashboardRunCost(t *testing.T) {
	exe := chromium(t)
	dist := dashboardBuilt(t)
	for _, c := range []struct{ currency, rate, lang, pattern string }{
		{"CNY", "7.1", "zh-CN", `^¥\d[\d,]*\.\d{2}$`},
		{"USD", "1", "en", `^\$\d[\d,]*\.\d{2}$`},
	} {
		t.Run(c.currency, func(t *testing.T) {
			cfg := config.Default()
			cfg.Money = &config.Money{Currency: c.currency, USDRate: c.rate}
			s, err := server.Open(context.Background(), server.Options{Config: cfg, DataDir: t.TempDir(), Addr: "127.0.0.1:0", Version: "e2e", Frontend: dist})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			req, _ := http.NewRequest("POST", s.URL()+"/v1/chat/completions",
				strings.NewReader(`{"model":"demo-chat","max_tokens":200,"messages":[{"role":"user","content":"what does this cost?"}]}`))
			req.Header.Set("Authorization", "Bearer "+s.GeneratedKeys()["local"])
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			id := resp.Header.Get("X-Run-Id")
			if resp.StatusCode != 200 || id == "" {
				t.Fatalf("call: %d, run %q", resp.StatusCode, id)
			}
			cell := `document.querySelector('[data-testid="run-cost-` + id + `"]')`
			ctx := browser(t, exe)
			err = chromedp.Do(ctx,
				chromedp.Navigate(s.DashboardURL()),
				waitJS(`document.querySelector('[data-testid="conn-status"]')?.dataset.value === 'live'`),
				setField("lang-switch", c.lang, "change"),
				waitJS(`document.documentElement.lang === '`+c.lang+`'`),
				chromedp.Click(tid("nav-overview")),
				chromedp.WaitVisible(tid("run-cost-"+id)),
				waitJS(`new RegExp(`+strconv.Quote(c.pattern)+`).test((`+cell+`.textContent || '').replace(/[\u00a0\u202f]/g, ' ').trim())`),
				// the exact decimal string as the tooltip, and more than nothing
				waitJS(`/^\d+(\.\d+)?$/.test(`+cell+`.title) && Number(`+cell+`.title) > 0`),
			)
			if err != nil {
				got, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`String(`+cell+`?.textContent)`))
				t.Fatalf("run %s cost in %s: %v (cell %q)", id, c.lang, err, got)
			}
		})
	}
}
