package e2e_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/quotagate/quotagate/backend/clock"
	"github.com/quotagate/quotagate/backend/config"
	"github.com/quotagate/quotagate/backend/server"
)

// periodsZone is far from UTC, so that the tenant's month is not the
// machine's: Pago Pago is UTC-11 all year.
const periodsZone = "Pacific/Pago_Pago"

// openPeriods starts a gateway on dataDir whose tenant local has a $5.00
// budget renewing monthly in periodsZone, its clock shifted by offset.
func openPeriods(t *testing.T, dist fs.FS, dataDir string, offset time.Duration) *server.Server {
	t.Helper()
	cfg := config.Default()
	cfg.Money = &config.Money{Currency: "USD", USDRate: "1"}
	cfg.Tenants[0].Budget = "5.00"
	cfg.Tenants[0].BudgetPeriod = "month"
	cfg.Tenants[0].Timezone = periodsZone
	s, err := server.Open(context.Background(), server.Options{Config: cfg, DataDir: dataDir, Addr: "127.0.0.1:0", Version: "e2e",
		Frontend: dist, Clock: clock.New(offset)})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// spend makes one demo call as local (content "/demo kind=cut&after=2"
// cuts its stream: the run keeps a hold) and returns its run id.
func spend(t *testing.T, s *server.Server, content string) string {
	t.Helper()
	r := doURL(t, s.URL(), "POST", "/v1/chat/completions", s.GeneratedKeys()["local"], chatBody(content, true, 200))
	if r.status != 200 || r.runID() == "" {
		t.Fatalf("call %q: %d, run %q", content, r.status, r.runID())
	}
	return string(r.runID())
}

// balanceOf is local's balance as /v1/balance answers it.
func balanceOf(t *testing.T, s *server.Server) (label string, end time.Time) {
	t.Helper()
	req, _ := http.NewRequest("GET", s.URL()+"/v1/balance", nil)
	req.Header.Set("Authorization", "Bearer "+s.GeneratedKeys()["local"])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b struct {
		Period    string    `json:"period"`
		PeriodEnd time.Time `json:"period_end"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&b); err != nil || b.Period == "" {
		t.Fatalf("balance: %v (period %q)", err, b.Period)
	}
	return b.Period, b.PeriodEnd
}

// TestDashboardPeriods: a tenant whose $5.00 budget renews monthly in a far
// zone, on a gateway whose clock runs 72h ahead (QUOTAGATE_CLOCK_OFFSET's
// Options twin), after a first life 40 days earlier that spent and left a
// hold. The Overview names the current month and counts down to its end by
// the shifted clock, the history shows both months' spend, the header says
// "clock +72h" without clipping a label, and the reconcile dialog says the
// old hold belongs to its closed month.
func TestDashboardPeriods(t *testing.T) {
	exe := chromium(t)
	dist := dashboardBuilt(t)
	data := t.TempDir()
	const offset = 72 * time.Hour

	// The first life: 40 days earlier is always an earlier month. It spends,
	// and leaves a hold (a cut stream) that the second life sees.
	old := openPeriods(t, dist, data, offset-40*24*time.Hour)
	spend(t, old, "a month of work")
	held := spend(t, old, "/demo kind=cut&after=2")
	oldLabel, _ := balanceOf(t, old)
	old.Close()

	s := openPeriods(t, dist, data, offset)
	t.Cleanup(func() { s.Close() })
	spend(t, s, "the next month's work")
	label, end := balanceOf(t, s)
	if label == oldLabel {
		t.Fatalf("both lives in period %s", label)
	}
	want := clock.New(offset).Now().In(mustZone(t, periodsZone)).Format("2006-01")
	if label != want {
		t.Fatalf("balance period %s, want %s", label, want)
	}
	// the days left by the shifted clock, as the page should count them
	days := int(time.Until(end.Add(-offset)) / (24 * time.Hour))

	ctx := browser(t, exe)
	period := `document.querySelector('[data-testid="tenant-local-period"]')`
	left := `(document.querySelector('[data-testid="tenant-local-time-left"]')?.textContent ?? '')`
	err := chromedp.Do(ctx,
		chromedp.Navigate(s.DashboardURL()),
		waitJS(`document.querySelector('[data-testid="conn-status"]')?.dataset.value === 'live'`),
		setField("lang-switch", "en", "change"),
		chromedp.Click(tid("nav-overview")),
		waitJS(period+`?.dataset.period === `+strconv.Quote(label)),
		waitJS(`/^\d+d \d{2}h left$|^\d+h \d{2}m left$/.test(`+left+`)`),
		waitJS(`Math.abs(parseInt(`+left+`, 10) - `+strconv.Itoa(days)+`) <= 1 || !`+left+`.includes('d ')`),
		waitJS(`document.querySelector('[data-testid="clock-offset"]')?.textContent === '+72h'`),
		waitJS(`!!document.querySelector('[data-testid="history-local"]')`),
		waitJS(`/\$\d/.test(document.querySelector('[data-testid="history-local-`+label+`"]')?.textContent ?? '')`),
		waitJS(`/\$\d/.test(document.querySelector('[data-testid="history-local-`+oldLabel+`"]')?.textContent ?? '')`),
		// the bars are drawn
		waitJS(`!!document.querySelector('[data-testid="history-local"] canvas')`),
	)
	if err != nil {
		got, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify({period: `+period+`?.dataset.period, left: `+left+
			`, clock: document.querySelector('[data-testid="clock-offset"]')?.textContent, history: document.querySelector('[data-testid="history-local"]')?.textContent})`))
		t.Fatalf("period on the overview: %v (%s)", err, got)
	}

	shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "build", "e2e")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "periods-en-1280.png"), shot, 0o644); err != nil {
		t.Fatal(err)
	}

	// The old month's hold: its dialog says where the reconcile lands.
	note := `(document.querySelector('[data-testid="reconcile-period-` + held + `"]')?.textContent ?? '')`
	err = chromedp.Do(ctx,
		chromedp.Click(tid("reconcile-"+held)),
		waitJS(note+`.includes('belongs to `+oldLabel+`') && `+note+`.includes('already closed')`),
	)
	if err != nil {
		got, _ := chromedp.Run(ctx, chromedp.Evaluate[string](note))
		t.Fatalf("reconcile dialog's period: %v (%q)", err, got)
	}

	// The header keeps every label whole with the badge, in both languages at 1280.
	for _, lang := range []string{"zh-CN", "en"} {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800), setField("lang-switch", lang, "change"),
			waitJS(`document.documentElement.lang === '`+lang+`'`)); err != nil {
			t.Fatal(err)
		}
		var got struct{ Clipped []string }
		if err := json.Unmarshal([]byte(js(ctx, t, headerLabels)), &got); err != nil {
			t.Fatal(err)
		}
		for _, c := range got.Clipped {
			t.Errorf("%s header with the clock badge: clipped: %s", lang, c)
		}
	}
}

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	z, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return z
}
