package e2e_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/quotagate/quotagate/backend/config"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/live"
)

// TestMain closes the browser the dashboard tests share, once they are done.
func TestMain(m *testing.M) {
	code := m.Run()
	closeChromium()
	os.Exit(code)
}

// chromiumShared is the one Chromium the package's browser tests share:
// starting one cost ~3 CPU-s, once per test. Each test still gets a fresh
// profile's worth of isolation, a BrowserContext of its own (storage,
// cookies, cache), which ends with the test.
var chromiumShared struct {
	sync.Mutex
	tab   context.Context // the browser's first tab, which keeps it running
	close func()
	err   error
}

func sharedChromium(t *testing.T, execPath string) context.Context {
	t.Helper()
	c := &chromiumShared
	c.Lock()
	defer c.Unlock()
	if c.tab == nil && c.err == nil {
		opts := append(chromedp.DefaultExecAllocatorOptions[:],
			chromedp.ExecPath(execPath), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1280, 900),
			chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-quic", true))
		alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		tab, cancelTab := chromedp.NewContext(alloc)
		c.close = func() { cancelTab(); cancelAlloc() }
		if c.err = chromedp.Do(tab); c.err != nil { // starts the browser
			c.close()
		} else {
			c.tab = tab
		}
	}
	if c.err != nil {
		t.Fatalf("starting chromium: %v", c.err)
	}
	return c.tab
}

func closeChromium() {
	c := &chromiumShared
	c.Lock()
	defer c.Unlock()
	if c.tab != nil {
		c.close()
		c.tab = nil
	}
}

// browser returns a tab of the shared Chromium in a BrowserContext of its
// own, at 1280×900, closed when t ends.
func browser(t *testing.T, execPath string) context.Context {
	t.Helper()
	tab, cancelTab := chromedp.NewContext(sharedChromium(t, execPath), chromedp.WithNewBrowserContext())
	ctx, cancelTimeout := context.WithTimeout(tab, 90*time.Second)
	t.Cleanup(func() { cancelTimeout(); _ = chromedp.Cancel(tab); cancelTab() }) // Cancel waits for the tab to close
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatalf("new tab: %v", err)
	}
	return ctx
}

func tid(id string) chromedp.CSS { return chromedp.CSS(fmt.Sprintf(`[data-testid=%q]`, id)) }

// waitJS polls a JavaScript condition in the page.
func waitJS(cond string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](cond, chromedp.WithPollingTimeout(15*time.Second))
}

// digits is the JS for an element's text with separators removed ("4,242" → "4242").
func digits(id string) string {
	return fmt.Sprintf(`(document.querySelector('[data-testid=%q]')?.textContent ?? '').replace(/[^0-9]/g, '')`, id)
}

// TestDashboardLive loads the dashboard from the printed URL, waits for the
// WebSocket to deliver state, then changes the backend twice after load
// (a budget, then a held run) and sees both without a reload; finally it
// reconciles the hold by clicking through the form and checks the ledger.
func TestDashboardLive(t *testing.T) {
	exe := chromium(t)
	s := openServer(t, dashboardBuilt(t))
	ctx := browser(t, exe)

	err := chromedp.Do(ctx,
		chromedp.Navigate(s.DashboardURL()),
		waitJS(`document.querySelector('[data-testid="conn-status"]')?.dataset.value === 'live'`),
		waitJS(`document.querySelector('[data-testid="version"]')?.textContent.includes('e2e')`),
		chromedp.Click(tid("nav-overview")),
		waitJS(digits("tenant-local-available")+` === '1000000'`),
	)
	if err != nil {
		t.Fatalf("dashboard did not go live: %v", err)
	}
	if hash, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.hash`)); err != nil || hash != "" {
		t.Errorf("token still in the address bar: %q %v", hash, err)
	}

	// Change 1: a new budget, applied after the page loaded.
	cfg := config.Default()
	cfg.Tenants[0].BudgetUnits = 4242
	if err := s.ApplyTenants(context.Background(), cfg.Tenants); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, waitJS(digits("tenant-local-available")+` === '4242'`)); err != nil {
		t.Fatalf("budget change not shown: %v", err)
	}

	// Change 2: a run whose stream was cut keeps its 102-unit hold (seed 000).
	st := s.Store()
	bg := context.Background()
	if _, err := st.Admit(bg, ledger.AdmitRequest{RunID: "run_e2e", TenantID: "local", Upstream: "demo", Model: "demo-chat", ReserveUnits: 102, Actor: ledger.System("e2e")}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.KeepHold(bg, "run_e2e", ledger.RunInterrupted, "stream cut before [DONE]", ledger.System("test")); err != nil {
		t.Fatal(err)
	}
	s.Hub().Publish(live.Change{Kind: live.KindLedger, RunID: "run_e2e", TenantID: "local"})
	err = chromedp.Do(ctx,
		chromedp.WaitVisible(tid("hold-row-run_e2e")),
		waitJS(digits("tenant-local-held")+` === '102'`),
		waitJS(digits("tenant-local-available")+` === '4140'`),
	)
	if err != nil {
		t.Fatalf("hold not shown: %v", err)
	}

	// The operator reconciles it at 15 units from the dashboard.
	err = chromedp.Do(ctx,
		chromedp.Click(tid("reconcile-run_e2e")),
		chromedp.SendKeys(tid("reconcile-units-run_e2e"), "15"),
		chromedp.SendKeys(tid("reconcile-evidence-run_e2e"), "provider console: 15 tokens"),
		chromedp.Click(tid("reconcile-submit-run_e2e")),
		chromedp.WaitNotPresent(tid("hold-row-run_e2e")),
		waitJS(digits("tenant-local-available")+` === '4227'`),
	)
	if err != nil {
		t.Fatalf("reconcile from the dashboard: %v", err)
	}
	run, err := st.Run(bg, "run_e2e")
	if err != nil || run.Usage != ledger.UsageReconciled || run.SpentUnits != 15 || run.Evidence != "provider console: 15 tokens" {
		t.Fatalf("ledger after reconcile: %+v %v", run, err)
	}
}
