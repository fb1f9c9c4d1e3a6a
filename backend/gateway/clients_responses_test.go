package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/upstream/demo"
	"github.com/quotagate/quotagate/e2e/clients"
)

// codexConfig is the ~/.codex/config.toml of README's "Point your tools at
// it", as tested: quotagate as the model provider, no phone-home.
func codexConfig(baseURL string, websockets bool) string {
	return fmt.Sprintf(`model = "demo-chat"
model_provider = "quotagate"

[model_providers.quotagate]
name = "quotagate"
base_url = "%s"
env_key = "QUOTAGATE_API_KEY"
wire_api = "responses"
supports_websockets = %v

[analytics]
enabled = false

[features]
plugins = false
`, baseURL, websockets)
}

// runCodex runs the real Codex CLI (pinned, from the clients cache) once:
// `codex exec --skip-git-repo-check "say hi"` against baseURL.
func runCodex(t *testing.T, baseURL string, websockets bool) string {
	t.Helper()
	bin := clients.Bin(t, "codex")
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(codexConfig(baseURL, websockets)), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "exec", "--skip-git-repo-check", "say hi")
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "CODEX_HOME="+home, "HOME="+home, "QUOTAGATE_API_KEY=key-a", "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("codex exec: %v\n%s", err, out)
	}
	return string(out)
}

// settled returns the runs the gateway settled so far.
func (e *env) settled(t *testing.T) []ledger.Run {
	t.Helper()
	var out []ledger.Run
	e.log.mu.Lock()
	evs := append([]event(nil), e.log.events...)
	e.log.mu.Unlock()
	for _, ev := range evs {
		if ev.Kind == evSettle || ev.Kind == evHold || ev.Kind == evRelease {
			run, err := e.store.Run(context.Background(), ev.RunID)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, run)
		}
	}
	return out
}

// checkSettledExactly: every run settled trusted, and the tenant's balance
// moved by exactly their spend.
func checkSettledExactly(t *testing.T, e *env, budget ledger.Units) {
	t.Helper()
	runs := e.settled(t)
	if len(runs) == 0 {
		t.Fatal("no run ended")
	}
	var spent ledger.Units
	for _, r := range runs {
		if r.Usage != ledger.UsageTrusted || r.Status != ledger.RunCompleted || r.SpentUnits == 0 {
			t.Errorf("run %+v, want completed/trusted", r)
		}
		spent += r.SpentUnits
	}
	if b := e.balance("a"); b.SpentUnits != spent || b.HeldUnits != 0 || b.AvailableUnits != budget-spent || b.Active != 0 {
		t.Errorf("balance %+v, want spent %d (the runs' usage), nothing held", b, spent)
	}
}

// The real Codex CLI through the Responses door, natively and translated:
// it prints the demo's answer, the run settles trusted, and the balance
// moves by exactly the usage.
func TestCodexCLI(t *testing.T) {
	for _, p := range responsesPaths {
		t.Run(p.name, func(t *testing.T) {
			const budget = 10_000_000
			e := responsesEnv(t, p.protocols, envOpts{tenants: []ledger.Tenant{tenant("a", budget, 2)}})
			out := runCodex(t, e.srv.URL+"/v1", false)
			if !strings.Contains(out, demo.DefaultText) {
				t.Fatalf("codex did not print the demo's answer:\n%s", out)
			}
			e.log.until(t, "a settled run", func(evs []event) bool { return len(kinds(evs, evSettle)) > 0 })
			checkSettledExactly(t, e, budget)
			want := map[string]string{"Native": `"input":`, "Translated": `"messages":`}[p.name]
			for _, r := range e.demo.Stats().Requests {
				if !strings.Contains(string(r.Body), want) {
					t.Errorf("the upstream got a body without %s: %.200s", want, r.Body)
				}
			}
		})
	}
}

// With supports_websockets = true Codex first tries GET /v1/responses with
// Upgrade: websocket; the 426 sends it to HTTP, where it works.
func TestCodexCLIWebSocketFallsBack(t *testing.T) {
	const budget = 10_000_000
	e := responsesEnv(t, []string{"chat", "responses"}, envOpts{tenants: []ledger.Tenant{tenant("a", budget, 2)}})
	var mu sync.Mutex
	var seen []string
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path+" upgrade="+r.Header.Get("Upgrade"))
		mu.Unlock()
		e.gw.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	out := runCodex(t, front.URL+"/v1", true)
	if !strings.Contains(out, demo.DefaultText) {
		t.Fatalf("codex did not print the demo's answer:\n%s", out)
	}
	mu.Lock()
	got := strings.Join(seen, "\n")
	mu.Unlock()
	if !strings.Contains(got, "GET /v1/responses upgrade=websocket") || !strings.Contains(got, "POST /v1/responses") {
		t.Errorf("requests:\n%s\nwant a WebSocket try, then POST", got)
	}
	checkSettledExactly(t, e, budget)
}

// The official openai JS SDK: responses.create and responses.stream with a
// function-call round trip, natively and translated; every run settled.
func TestOpenAIJSResponses(t *testing.T) {
	node, nodePath := clients.Node(t)
	script, err := filepath.Abs("testdata/clients/responses_sdk.js")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range responsesPaths {
		t.Run(p.name, func(t *testing.T) {
			const budget = 1_000_000
			e := responsesEnv(t, p.protocols, envOpts{tenants: []ledger.Tenant{tenant("a", budget, 2)}})
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, script)
			cmd.Env = append(os.Environ(), "NODE_PATH="+nodePath, "BASE="+e.srv.URL+"/v1", "KEY=key-a",
				"PLAN="+demo.Plan{Call: "get_weather", Args: `{"city":"Paris"}`}.Encode())
			out, err := cmd.Output()
			if err != nil {
				var stderr []byte
				if ee, ok := err.(*exec.ExitError); ok {
					stderr = ee.Stderr
				}
				t.Fatalf("node: %v\n%s\n%s", err, out, stderr)
			}
			var got struct {
				Call         struct{ Name, Arguments, Status string }
				StreamedCall *struct{ Name, Arguments string }
				Text, Deltas string
				Status       string
				CreateText   string
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			ack := demo.AckPrefix + "21C"
			if got.Call.Name != "get_weather" || got.Call.Arguments != `{"city":"Paris"}` || got.StreamedCall == nil ||
				got.StreamedCall.Arguments != `{"city":"Paris"}` || got.Text != ack || got.Deltas != ack ||
				got.Status != "completed" || got.CreateText != ack {
				t.Fatalf("SDK saw %s", out)
			}
			e.log.until(t, "four ended runs", func(evs []event) bool {
				n := 0
				for _, ev := range evs {
					if ev.Kind == evSettle || ev.Kind == evHold || ev.Kind == evRelease {
						n++
					}
				}
				return n >= 4
			})
			checkSettledExactly(t, e, budget)
		})
	}
}
