package e2e_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/quotagate/quotagate/backend/audit"
	"github.com/quotagate/quotagate/backend/config"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/server"
	"github.com/quotagate/quotagate/backend/upstream/demo"
	"github.com/quotagate/quotagate/e2e/clients"
)

const deskConfig = `
meter: utf8-bytes-v1
tenants:
  - {id: local, budget_units: 1000000, max_concurrent: 4}
upstreams:
  - {name: demo, kind: openai, base_url: %q, api_key: sk-upstream-e2e, models: [demo-chat], protocols: [chat, completions, embeddings], max_concurrent: 4, queue: {max_waiters: 4, max_wait: 8s}}
`

// deskQuota guards demo-chat with a manual balance and a usage wall of 80
// units, so one answered call (about 84 bytes) evicts it.
const deskQuota = `, quota: {daily_cap: 100000, small_buffer: 100, usage_wall: 80, balance_wall: 10, timezone: UTC, balance: {kind: manual}}`

// openDesk starts quotagate in front of a demo upstream the test can watch,
// with a keyless local tenant (its key is generated, as with `serve`);
// extra is added to the upstream's line (deskQuota).
func openDesk(t *testing.T, extra ...string) (*server.Server, *demo.Server) {
	t.Helper()
	dist := dashboardBuilt(t)
	d, err := demo.Start(demo.Options{APIKey: "sk-upstream-e2e"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	yaml := fmt.Sprintf(deskConfig, d.URL())
	if len(extra) > 0 {
		yaml = strings.Replace(yaml, "max_wait: 8s}}", "max_wait: 8s}"+strings.Join(extra, "")+"}", 1)
	}
	cfg, err := config.Parse([]byte(yaml), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	s, err := server.Open(context.Background(), server.Options{Config: cfg, DataDir: t.TempDir(), Addr: "127.0.0.1:0", Version: "e2e", Frontend: dist})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, d
}

func js(ctx context.Context, t *testing.T, expr string) string {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// TestDashboardDesk drives the operations desk as an operator would: the
// Connect panel's curl works in a shell, a cut stream shows as a hold with
// its reason at once, a bad reconcile is refused beside its field, a good
// one moves the numbers and the ledger, Cancel reaches the upstream, and
// the audit view's CSV is the ledger's rows for its filter.
func TestDashboardDesk(t *testing.T) {
	exe := chromium(t)
	s, d := openDesk(t)
	ctx := browser(t, exe)
	st := s.Store()
	bg := context.Background()
	key := s.GeneratedKeys()["local"]
	if key == "" {
		t.Fatal("no generated key for local")
	}

	// A new user lands on Connect; its curl snippet, run in a shell, works.
	err := chromedp.Do(ctx,
		chromedp.Navigate(s.DashboardURL()),
		waitJS(`document.querySelector('[data-testid="conn-status"]')?.dataset.value === 'live'`),
		chromedp.WaitVisible(tid("snippet-curl")),
	)
	if err != nil {
		t.Fatalf("dashboard did not open on Connect: %v", err)
	}
	if shown := js(ctx, t, `document.querySelector('[data-testid="snippet-curl"]').textContent`); strings.Contains(shown, key) {
		t.Error("the key is shown before Reveal")
	}
	curl := js(ctx, t, `document.querySelector('[data-testid="snippet-curl"]').dataset.snippet`)
	out, err := exec.Command("sh", "-c", curl).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "data: [DONE]") || !strings.Contains(string(out), `"quotagate "`) {
		t.Fatalf("curl snippet in a shell: %v\n%s\n%s", err, curl, out)
	}
	if b, err := st.Balance(bg, "local"); err != nil || b.SpentUnits == 0 || b.HeldUnits != 0 {
		t.Fatalf("the curl call did not settle on trusted usage: %+v %v", b, err)
	}
	snippets := map[string]string{}
	for _, tool := range []string{"codex", "claude-code", "continue"} {
		if err := chromedp.Do(ctx, chromedp.Click(tid("tool-"+tool)), waitJS(fmt.Sprintf(`!!document.querySelector('[data-testid="snippet-%s"]')`, tool))); err != nil {
			t.Fatalf("%s snippet: %v", tool, err)
		}
		snippets[tool] = js(ctx, t, fmt.Sprintf(`document.querySelector('[data-testid="snippet-%s"]').dataset.snippet`, tool))
	}
	if c := snippets["codex"]; !strings.Contains(c, `base_url = "`+s.URL()+`/v1"`) || !strings.Contains(c, `wire_api = "responses"`) {
		t.Errorf("codex snippet does not point at this server's Responses door:\n%s", c)
	}
	t.Run("CodexSnippet", func(t *testing.T) {
		bin := clients.Bin(t, "codex")
		home := t.TempDir()
		toml, _, _ := strings.Cut(snippets["codex"], "# then, in the shell:")
		if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(toml), 0o600); err != nil {
			t.Fatal(err)
		}
		cctx, cancel := context.WithTimeout(bg, 90*time.Second)
		defer cancel()
		cmd := exec.CommandContext(cctx, bin, "exec", "--skip-git-repo-check", "say hi")
		cmd.Dir = t.TempDir()
		cmd.Env = append(os.Environ(), "CODEX_HOME="+home, "HOME="+home, "QUOTAGATE_API_KEY="+key)
		if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), demo.DefaultText) {
			t.Fatalf("the Connect panel's Codex config.toml with codex exec: %v\n%s\n%s", err, toml, out)
		}
	})
	if c := snippets["claude-code"]; !strings.Contains(c, "ANTHROPIC_BASE_URL="+s.URL()+"\n") || !strings.Contains(c, "ANTHROPIC_AUTH_TOKEN="+key) {
		t.Errorf("claude code snippet does not point at this server's Messages door:\n%s", c)
	}
	t.Run("ContinueSnippet", func(t *testing.T) { checkContinueSnippet(t, s, snippets["continue"]) })

	// A cut stream: the hold and its reason appear within a second.
	if err := chromedp.Do(ctx, chromedp.Click(tid("nav-overview")), chromedp.WaitVisible(tid("holds-table"))); err != nil {
		t.Fatal(err)
	}
	resp := doURL(t, s.URL(), "POST", "/v1/chat/completions", key, chatBody("/demo kind=cut&after=2", true, 64))
	cut := resp.runID()
	if cut == "" {
		t.Fatalf("cut call: no run id (%d)", resp.status)
	}
	t0 := time.Now()
	err = chromedp.Do(ctx, chromedp.Poll[chromedp.Void](
		fmt.Sprintf(`(document.querySelector('[data-testid="hold-why-%s"]')?.textContent ?? '').includes('cut the stream')`, cut),
		chromedp.WithPollingTimeout(time.Second), chromedp.WithPollingInterval(20*time.Millisecond)))
	if err != nil {
		t.Fatalf("hold with its reason not shown within 1s: %v", err)
	}
	t.Logf("cut stream → hold with reason on the page: %v", time.Since(t0).Round(time.Millisecond))
	run, err := st.Run(bg, cut)
	if err != nil {
		t.Fatal(err)
	}
	before, err := st.Balance(bg, "local")
	if err != nil {
		t.Fatal(err)
	}

	// A bad reconcile (more than the reserve) is refused beside the units field.
	id := string(cut)
	err = chromedp.Do(ctx,
		chromedp.Click(tid("reconcile-"+id)),
		chromedp.SendKeys(tid("reconcile-units-"+id), fmt.Sprint(run.ReserveUnits+1)),
		chromedp.SendKeys(tid("reconcile-evidence-"+id), "provider console: 3 tokens, 账单"),
		chromedp.Click(tid("reconcile-submit-"+id)),
		chromedp.WaitVisible(tid("reconcile-error-units-"+id)),
	)
	if err != nil {
		t.Fatalf("bad reconcile error not shown by the field: %v", err)
	}
	// Then a good one: the preview says what will happen, confirm changes the numbers and the ledger.
	want := before.Available() + run.ReserveUnits - 3
	err = chromedp.Do(ctx,
		setField("reconcile-units-"+id, "", "input"),
		chromedp.SendKeys(tid("reconcile-units-"+id), "3"),
		waitJS(fmt.Sprintf(`(document.querySelector('[data-testid="reconcile-preview-%s"]')?.textContent ?? '').replace(/,/g, '').includes('becomes %d')`,
			id, want)),
		chromedp.Click(tid("reconcile-submit-"+id)),
		chromedp.WaitNotPresent(tid("hold-row-"+id)),
		waitJS(digits("tenant-local-available")+fmt.Sprintf(` === '%d'`, want)),
	)
	if err != nil {
		t.Fatalf("reconcile by clicking: %v", err)
	}
	if run, err = st.Run(bg, cut); err != nil || run.Usage != ledger.UsageReconciled || run.SpentUnits != 3 || run.Evidence != "provider console: 3 tokens, 账单" {
		t.Fatalf("ledger after reconcile: %+v %v", run, err)
	}

	// Cancel by clicking: the demo upstream sees the client go away.
	discs := d.Stats().Disconnects
	done := make(chan reply, 1)
	go func() {
		done <- doURL(t, s.URL(), "POST", "/v1/chat/completions", key, chatBody("/demo kind=stall", true, 64))
	}()
	var slow ledger.RunID
	err = chromedp.Do(ctx, waitJS(`!!document.querySelector('[data-testid^="cancel-run"]')`))
	if err != nil {
		t.Fatalf("running call not shown with Cancel: %v", err)
	}
	slow = ledger.RunID(strings.TrimPrefix(js(ctx, t, `document.querySelector('[data-testid^="cancel-run"]').dataset.testid`), "cancel-"))
	err = chromedp.Do(ctx,
		chromedp.Click(tid("cancel-"+string(slow))),
		chromedp.WaitVisible(tid("cancel-dialog-"+string(slow))),
		chromedp.Click(tid("cancel-confirm-"+string(slow))),
	)
	if err != nil {
		t.Fatalf("cancel by clicking: %v", err)
	}
	wctx, cancel := context.WithTimeout(bg, 10*time.Second)
	defer cancel()
	if err := d.WaitDisconnects(wctx, discs+1); err != nil {
		t.Fatalf("the demo upstream never saw the cancel: %v", err)
	}
	<-done
	if err := chromedp.Do(ctx, chromedp.WaitVisible(tid("hold-row-"+string(slow)))); err != nil {
		t.Fatalf("cancelled run not held: %v", err)
	}

	// Audit: the view's filter, and its CSV equals the ledger's rows for it.
	err = chromedp.Do(ctx,
		chromedp.Click(tid("nav-audit")),
		chromedp.WaitVisible(tid("audit-table")),
		setField("audit-kind", "reconcile", "change"),
		waitJS(fmt.Sprintf(`!!document.querySelector('[data-testid="audit-table"]') && document.querySelectorAll('[data-testid^="audit-row-"]').length === 1`)),
	)
	if err != nil {
		t.Fatalf("audit filter: %v", err)
	}
	shownSeq := js(ctx, t, `document.querySelector('[data-testid^="audit-row-"]').dataset.testid`)
	filter := url.Values{"kind": {"reconcile"}, "tenant": {""}}
	csvResp := adminGet(t, s, "/admin/api/audit.csv?"+filter.Encode())
	if !strings.HasPrefix(csvResp, audit.BOM) {
		t.Fatalf("CSV does not start with a BOM: %q", csvResp[:min(len(csvResp), 20)])
	}
	rows, err := audit.ParseCSV(csvResp)
	if err != nil {
		t.Fatal(err)
	}
	q, _ := audit.ParseQuery(filter, nil)
	var want2 [][]string
	all, err := st.Audit(bg, ledger.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range all {
		if q.Matches(e) {
			want2 = append(want2, audit.Record(e, time.Local, s.Currency()))
		}
	}
	if len(rows) != len(want2)+1 || fmt.Sprint(rows[1:]) != fmt.Sprint(want2) {
		t.Fatalf("CSV rows differ from the ledger's for the filter:\n got %q\nwant %q", rows[1:], want2)
	}
	if "audit-row-"+rows[1][0] != shownSeq {
		t.Errorf("the view shows %s, the CSV has seq %s", shownSeq, rows[1][0])
	}
}

// setField sets a form field's value as typing would, with the event Preact listens to.
func setField(id, value, event string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(
		`{ const el = document.querySelector('[data-testid=%q]'); el.value = %q; el.dispatchEvent(new Event(%q, {bubbles: true})); }`,
		id, value, event))
}

func adminGet(t *testing.T, s *server.Server, path string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", s.URL()+path, nil)
	req.Header.Set("Authorization", "Bearer "+s.AdminToken())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	return string(b)
}

// TestDashboardScreens takes zh-CN and en, light and dark, at 1440×900 and
// 1024×700, saves each under build/e2e/ and checks it is not blank; the
// Chinese page has no untranslated key.
func TestDashboardScreens(t *testing.T) {
	exe := chromium(t)
	s, _ := openDesk(t, deskQuota)
	key := s.GeneratedKeys()["local"]
	if r := doURL(t, s.URL(), "POST", "/admin/api/quota/demo/demo-chat/balance", s.AdminToken(), `{"b0": 100000}`); r.status != 200 {
		t.Fatalf("B0 reading: %d %s", r.status, r.body)
	}
	doURL(t, s.URL(), "POST", "/v1/chat/completions", key, chatBody("/demo kind=cut&after=2", true, 64))
	doURL(t, s.URL(), "POST", "/v1/chat/completions", key, chatBody("hi", true, 64)) // passes the 80-unit wall
	ctx := browser(t, exe)
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "build", "e2e")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(s.DashboardURL()), waitJS(`document.querySelector('[data-testid="conn-status"]')?.dataset.value === 'live'`)); err != nil {
		t.Fatal(err)
	}
	defer func() {
		// The last choice (en, dark) is remembered across a reload.
		err := chromedp.Do(ctx, chromedp.Reload(),
			waitJS(`document.querySelector('[data-testid="conn-status"]')?.dataset.value === 'live'`),
			waitJS(`document.documentElement.lang === 'en' && document.documentElement.dataset.theme === 'dark'`))
		if err != nil {
			t.Errorf("language and theme not remembered: %v", err)
		}
	}()
	for _, lang := range []string{"zh-CN", "en"} {
		for _, theme := range []string{"light", "dark"} {
			for _, size := range [][2]int64{{1440, 900}, {1024, 700}} {
				name := fmt.Sprintf("dashboard-%s-%s-%dx%d.png", lang, theme, size[0], size[1])
				// The header's switches, as an operator uses them (no reload).
				err := chromedp.Do(ctx,
					chromedp.EmulateViewport(size[0], size[1]),
					setField("lang-switch", lang, "change"),
					setField("theme-switch", theme, "change"),
					waitJS(fmt.Sprintf(`document.documentElement.lang === %q && document.documentElement.dataset.theme === %q`, lang, theme)),
				)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if lang == "zh-CN" {
					for _, tab := range []string{"connect", "overview", "quota", "audit", "settings"} {
						if err := chromedp.Do(ctx, chromedp.Click(tid("nav-"+tab))); err != nil {
							t.Fatal(err)
						}
						body := js(ctx, t, `document.body.innerText`)
						if strings.Contains(body, "⟦") {
							t.Errorf("untranslated key on the zh-CN %s tab: %q", tab, body)
						}
						if !strings.ContainsRune(body, '额') && !strings.ContainsRune(body, '租') && !strings.ContainsRune(body, '接') && !strings.ContainsRune(body, '通') {
							t.Errorf("zh-CN %s tab shows no Chinese: %q", tab, body[:min(len(body), 200)])
						}
					}
					if err := chromedp.Do(ctx, chromedp.Click(tid("nav-overview"))); err != nil {
						t.Fatal(err)
					}
				}
				if theme == "light" && size[0] == 1440 {
					// The evicted model says why, and its chart names the walls.
					err := chromedp.Do(ctx,
						chromedp.Click(tid("nav-quota")),
						waitJS(`/^(Evicted: today's usage|已驱逐：今日用量)/.test(document.querySelector('[data-testid="quota-demo-demo-chat-reason"]')?.textContent ?? '')`),
						chromedp.WaitVisible(tid("quota-demo-demo-chat-threshold-wall")),
						chromedp.WaitVisible(tid("quota-demo-demo-chat-threshold-limit")),
						waitJS(`!!document.querySelector('[data-testid="quota-chart-demo-demo-chat"] canvas')`),
					)
					if err != nil {
						t.Fatalf("quota tab (%s): %v\n%s", lang, err, js(ctx, t, `document.body.innerText`))
					}
					shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
					if err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("quota-%s-%s.png", lang, theme)), shot, 0o644); err != nil {
						t.Fatal(err)
					}
					if err := chromedp.Do(ctx, chromedp.Click(tid("nav-overview"))); err != nil {
						t.Fatal(err)
					}
				}
				shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, name), shot, 0o644); err != nil {
					t.Fatal(err)
				}
				if n := colours(t, shot); n < 32 {
					t.Errorf("%s looks blank: %d colours", name, n)
				}
			}
		}
	}
}

// colours counts the distinct colours of a PNG (sampled), as the smoke test does.
func colours(t *testing.T, b []byte) int {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[[3]uint32]bool{}
	r := img.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y += 3 {
		for x := r.Min.X; x < r.Max.X; x += 3 {
			c := img.At(x, y)
			cr, cg, cb, _ := c.RGBA()
			seen[[3]uint32{cr >> 8, cg >> 8, cb >> 8}] = true
		}
	}
	_ = image.Point{}
	return len(seen)
}
