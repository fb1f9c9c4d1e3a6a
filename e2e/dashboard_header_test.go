package e2e_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/chromedp/chromedp"
)

// headerLabels is the JS that measures every label of the header: the
// brand, the tabs, the connection, the status line's labels and its short
// values (the data dir alone may be shortened; its tooltip has it all). A
// label is clipped when its text is wider than its box or breaks onto a
// second line ("运行时" / "长").
const headerLabels = `(() => {
  const els = [...document.querySelectorAll('.top .brand > *, .top .tab, .top [data-testid="conn-status"], .top dt, .top dd:not(.path)')];
  const clipped = [];
  for (const el of els) {
    const r = document.createRange();
    r.selectNodeContents(el);
    const lines = new Set([...r.getClientRects()].filter((x) => x.width > 0).map((x) => Math.round(x.top))).size;
    if (el.clientWidth === 0 || el.scrollWidth > el.clientWidth || lines > 1) {
      clipped.push(el.textContent + ' (' + el.scrollWidth + ' > ' + el.clientWidth + ', ' + lines + ' lines)');
    }
  }
  const top = document.querySelector('.top');
  if (top.scrollWidth > top.clientWidth) clipped.push('the header itself (' + top.scrollWidth + ' > ' + top.clientWidth + ')');
  return JSON.stringify({ labels: els.length, clipped });
})()`

// TestDashboardHeader: at 1280×800 and 1920×1080, in Chinese and English,
// every label of the header is whole (its text fits its box on one line);
// a screenshot of each is kept under build/e2e/.
func TestDashboardHeader(t *testing.T) {
	exe := chromium(t)
	s := openServer(t, dashboardBuilt(t))
	ctx := browser(t, exe)
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "build", "e2e")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	err := chromedp.Do(ctx,
		chromedp.Navigate(s.DashboardURL()),
		waitJS(`document.querySelector('[data-testid="conn-status"]')?.dataset.value === 'live'`),
		waitJS(`document.querySelector('[data-testid="uptime"]')?.textContent !== '—'`),
	)
	if err != nil {
		t.Fatalf("dashboard did not go live: %v", err)
	}
	for _, size := range [][2]int64{{1280, 800}, {1920, 1080}} {
		for _, lang := range []string{"zh-CN", "en"} {
			name := fmt.Sprintf("header-%s-%dx%d", lang, size[0], size[1])
			err := chromedp.Do(ctx,
				chromedp.EmulateViewport(size[0], size[1]),
				setField("lang-switch", lang, "change"),
				waitJS(fmt.Sprintf(`document.documentElement.lang === %q`, lang)),
			)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			var got struct {
				Labels  int
				Clipped []string
			}
			if err := json.Unmarshal([]byte(js(ctx, t, headerLabels)), &got); err != nil {
				t.Fatal(err)
			}
			// brand (3, with the demo badge), 5 tabs, the connection, 4 labels and 3 values
			if got.Labels < 15 {
				t.Errorf("%s: measured %d header labels, want at least 15", name, got.Labels)
			}
			for _, c := range got.Clipped {
				t.Errorf("%s: clipped: %s", name, c)
			}
			shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name+".png"), shot, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}
