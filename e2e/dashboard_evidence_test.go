package e2e_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/quotagate/quotagate/backend/config"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/server"
	"github.com/quotagate/quotagate/backend/upstream/demo"
)

// Without auto_reconcile the provider's figure waits on the hold for a click.
const applyConfig = `
meter: tiktoken
tenants: [{id: a, key: ` + evidenceKey + `, budget_units: 100000, max_concurrent: 4}]
upstreams:
  - name: demo
    kind: demo
    models: [demo-chat]
    usage_lookup: {kind: openrouter, delay: 1s, window: 1m}
`

// TestDashboardApplyProviderFigure: a stream the demo cuts, on an upstream
// with usage_lookup and no auto_reconcile, stays held; the provider's
// figure appears on the hold in the dashboard with Apply, and one click
// settles the run at exactly that figure, verify clean.
func TestDashboardApplyProviderFigure(t *testing.T) {
	exe := chromium(t)
	dist := dashboardBuilt(t)
	cfg, err := config.Parse([]byte(applyConfig), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	s, err := server.Open(context.Background(), server.Options{Config: cfg, DataDir: filepath.Join(t.TempDir(), "data"),
		Addr: "127.0.0.1:0", Version: "e2e", Frontend: dist})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	id := cutStream(t, s)

	ctx := browser(t, exe)
	err = chromedp.Do(ctx,
		chromedp.Navigate(s.DashboardURL()),
		waitJS(`document.querySelector('[data-testid="conn-status"]')?.dataset.value === 'live'`),
		chromedp.Click(tid("nav-overview")),
		chromedp.WaitVisible(tid("finding-apply-"+string(id))),
	)
	if err != nil {
		t.Fatalf("no Apply on hold %s: %v", id, err)
	}
	text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-testid="finding-text-`+string(id)+`"]').textContent`))
	figure := providerFigure(t, s, id)
	if !strings.HasPrefix(text, "the provider reports ") || !strings.Contains(text, " output tokens") {
		t.Fatalf("finding says %q", text)
	}
	err = chromedp.Do(ctx,
		chromedp.Click(tid("finding-apply-"+string(id))),
		chromedp.WaitVisible(tid("applied-"+string(id))),
	)
	if err != nil {
		t.Fatalf("Apply on %s: %v", id, err)
	}
	run, err := s.Store().Run(context.Background(), id)
	if err != nil || run.Usage != ledger.UsageReconciled || run.HeldUnits != 0 || run.SpentUnits+run.OverrunUnits != figure {
		t.Fatalf("after Apply run %+v (%v), want settled at the provider's %d units", run, err, figure)
	}
	if diffs, err := s.Store().Verify(context.Background()); err != nil || len(diffs) > 0 {
		t.Fatalf("verify: %v %v", diffs, err)
	}
}

// cutStream makes a streamed call the demo cuts mid-answer and returns its run.
func cutStream(t *testing.T, s *server.Server) ledger.RunID {
	t.Helper()
	req, _ := http.NewRequest("POST", s.URL()+"/v1/chat/completions",
		strings.NewReader(`{"model":"demo-chat","stream":true,"max_tokens":50,"messages":[{"role":"user","content":"hello"}]}`))
	req.Header.Set("Authorization", "Bearer "+evidenceKey)
	req.Header.Set(demo.PlanHeader, "kind=cut&after=1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "upstream_interrupted") {
		t.Fatalf("the stream was not cut: %s", body)
	}
	return ledger.RunID(resp.Header.Get("X-Run-Id"))
}

// providerFigure is the units of the provider's figure on run's hold, as
// the admin state has it.
func providerFigure(t *testing.T, s *server.Server, id ledger.RunID) ledger.Units {
	t.Helper()
	req, _ := http.NewRequest("GET", s.URL()+"/admin/api/state", nil)
	req.Header.Set("Authorization", "Bearer "+s.AdminToken())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct {
		Evidence map[ledger.RunID]struct {
			State  string `json:"state"`
			Input  int64  `json:"input_tokens"`
			Output int64  `json:"output_tokens"`
		} `json:"evidence"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	f, ok := st.Evidence[id]
	if !ok || f.State != "found" || f.Input+f.Output == 0 {
		t.Fatalf("no provider figure for %s in the state: %+v", id, st.Evidence)
	}
	return ledger.Units(f.Input + f.Output)
}
