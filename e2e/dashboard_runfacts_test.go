package e2e_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestDashboardRetryGroup: an SDK call cut twice — the first attempt and
// its retry (X-Stainless-Retry-Count 1, the same body) — shows in Holds as
// one call's attempts under a header, the retry naming its first attempt,
// each with its door; the Runs table shows the door too.
func TestDashboardRetryGroup(t *testing.T) {
	exe := chromium(t)
	s := openServer(t, dashboardBuilt(t))
	key := s.GeneratedKeys()["local"]
	attempt := func(retry string) string {
		req, _ := http.NewRequest("POST", s.URL()+"/v1/chat/completions",
			strings.NewReader(`{"model":"demo-chat","stream":true,"max_tokens":10,"messages":[{"role":"user","content":"retry me"}]}`))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("X-Demo-Plan", "kind=cut&after=1")
		req.Header.Set("X-Stainless-Retry-Count", retry)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body) // the cut stream ends
		id := resp.Header.Get("X-Run-Id")
		if resp.StatusCode != 200 || id == "" {
			t.Fatalf("attempt %s: %d, run %q", retry, resp.StatusCode, id)
		}
		return id
	}
	first, second := attempt("0"), attempt("1")
	ctx := browser(t, exe)
	err := chromedp.Do(ctx,
		chromedp.Navigate(s.DashboardURL()),
		waitJS(`document.querySelector('[data-testid="conn-status"]')?.dataset.value === 'live'`),
		chromedp.Click(tid("nav-overview")),
		chromedp.WaitVisible(tid("hold-group-"+first)),
		waitJS(`document.querySelector('[data-testid="hold-group-`+first+`"]').textContent.startsWith('One call, 2 attempts held')`),
		waitJS(`document.querySelector('[data-testid="hold-retry-`+first+`"]').textContent === 'first attempt'`),
		waitJS(`document.querySelector('[data-testid="hold-retry-`+second+`"]').textContent.startsWith('retry #1 of run ')`),
		waitJS(`document.querySelector('[data-testid="hold-row-`+first+`"]').nextElementSibling.dataset.testid === 'hold-row-`+second+`'`),
		waitJS(`[...document.querySelectorAll('[data-testid="door-`+second+`"]')].every((e) => e.textContent === 'chat')`),
	)
	if err != nil {
		t.Fatalf("retry group in Holds: %v", err)
	}
}
