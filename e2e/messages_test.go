package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/quotagate/quotagate/backend/config"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/server"
	"github.com/quotagate/quotagate/backend/upstream/demo"
	"github.com/quotagate/quotagate/e2e/clients"
)

// The Messages door with the real clients it exists for: Claude Code and the
// official @anthropic-ai/sdk, through quotagate to the demo upstream —
// natively (an upstream whose protocols include messages) and translated
// (one that speaks chat completions only).

// messagesPaths: the assembled server on its embedded default (meter
// tiktoken; the demo speaks every protocol, so the door relays natively),
// and with the demo speaking chat completions only (the door translates).
var messagesPaths = []struct {
	name      string
	protocols []string
}{{"Native", nil}, {"Translated", []string{config.ProtocolChat}}}

const messagesModel = "demo-chat"

// openMessagesServer returns the server and the local tenant's key.
func openMessagesServer(t *testing.T, protocols []string) (*server.Server, string) {
	t.Helper()
	cfg := config.Default()
	if protocols != nil {
		cfg.Upstreams[0].Protocols = protocols
	}
	s, err := server.Open(context.Background(), server.Options{Config: cfg, DataDir: t.TempDir(), Addr: "127.0.0.1:0",
		Version: "e2e", Frontend: fstest.MapFS{"index.html": {Data: []byte("<title>q</title>")}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, s.GeneratedKeys()["local"]
}

func balance(t *testing.T, s *server.Server) ledger.Balance {
	t.Helper()
	b, err := s.Store().Balance(context.Background(), "local")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// newRuns returns the tenant's runs that are not in before.
func newRuns(t *testing.T, s *server.Server, before map[ledger.RunID]bool) []ledger.Run {
	t.Helper()
	runs, err := s.Store().Runs(context.Background(), ledger.RunFilter{TenantID: "local", Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var out []ledger.Run
	for _, r := range runs {
		if !before[r.ID] {
			out = append(out, r)
		}
	}
	return out
}

func runIDs(t *testing.T, s *server.Server) map[ledger.RunID]bool {
	t.Helper()
	ids := map[ledger.RunID]bool{}
	for _, r := range newRuns(t, s, nil) {
		ids[r.ID] = true
	}
	return ids
}

// claudeUsage is the usage `claude -p --output-format json` reports.
type claudeUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
}

// TestClaudeCodeSaysHi: the real Claude Code, `claude -p "say hi" --model
// <demo model>`, prints the demo's answer; the run settles trusted and the
// balance moves by exactly its usage — both paths.
func TestClaudeCodeSaysHi(t *testing.T) {
	claude := clients.Bin(t, "claude")
	for _, p := range messagesPaths {
		t.Run(p.name, func(t *testing.T) {
			s, key := openMessagesServer(t, p.protocols)
			before, ids := balance(t, s), runIDs(t, s)
			home := t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, claude, "-p", "say hi", "--model", messagesModel, "--output-format", "json")
			cmd.Dir = home
			// The environment the README documents, and nothing of this machine's.
			cmd.Env = []string{
				"HOME=" + home, "PATH=" + os.Getenv("PATH"),
				"ANTHROPIC_BASE_URL=" + s.URL(),
				"ANTHROPIC_AUTH_TOKEN=" + key,
				"ANTHROPIC_MODEL=" + messagesModel,
				"ANTHROPIC_DEFAULT_HAIKU_MODEL=" + messagesModel,
				"ANTHROPIC_SMALL_FAST_MODEL=" + messagesModel,
				"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
			}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("claude: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
			}
			var out struct {
				Result  string      `json:"result"`
				IsError bool        `json:"is_error"`
				Usage   claudeUsage `json:"usage"`
			}
			if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
				t.Fatalf("claude's output %q: %v (stderr %s)", stdout.String(), err, stderr.String())
			}
			if out.IsError || strings.TrimSpace(out.Result) != demo.DefaultText {
				t.Errorf("claude printed %q (error %v), want the demo's answer", out.Result, out.IsError)
			}
			runs := newRuns(t, s, ids)
			if len(runs) != 1 {
				t.Fatalf("%d runs, want 1: %+v", len(runs), runs)
			}
			r := runs[0]
			if r.Usage != ledger.UsageTrusted || r.Status != ledger.RunCompleted {
				t.Errorf("run %+v, want completed and trusted", r)
			}
			u := out.Usage
			usage := ledger.Units(u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens + u.OutputTokens)
			after := balance(t, s)
			if spent := after.SpentUnits - before.SpentUnits; spent != usage || r.SpentUnits != usage || usage == 0 {
				t.Errorf("balance moved by %d, the run spent %d, Claude Code's usage is %d (%+v)", spent, r.SpentUnits, usage, u)
			}
			if after.HeldUnits != before.HeldUnits {
				t.Errorf("held %d → %d", before.HeldUnits, after.HeldUnits)
			}
			t.Logf("%s: %+v, run %s spent %d", p.name, u, r.ID, r.SpentUnits)
			// Claude Code's probe is harmless: 200 or 404, never an error that aborts it.
			resp, err := http.Head(s.URL() + "/api/hello")
			if err != nil || (resp.StatusCode != 200 && resp.StatusCode != 404) {
				t.Errorf("HEAD /api/hello: %v %v", resp, err)
			} else {
				resp.Body.Close()
			}
		})
	}
}

// sdkScript drives the official @anthropic-ai/sdk: messages.create and
// messages.stream with a tool round trip each, countTokens, a cut stream,
// a refused key. It prints one JSON object.
const sdkScript = `
const Anthropic = require("@anthropic-ai/sdk");
const [baseURL, apiKey, model] = process.argv.slice(2);
const client = new Anthropic({ baseURL, apiKey, maxRetries: 0 });
const tools = [{ name: "get_weather", description: "Weather for a city", defer_loading: true,
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } }];
// The demo calls get_weather, then acknowledges the tool's result in text.
const toolPlan = { "X-Demo-Plan": "call=get_weather&args=" + encodeURIComponent('{"city":"Paris"}') };
const textPlan = toolPlan;
const first = { model, max_tokens: 256, system: [{ type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } }],
  tools, messages: [{ role: "user", content: "Weather in Paris?" }] };
const withResult = (content, id) => ({ ...first, messages: [...first.messages, { role: "assistant", content },
  { role: "user", content: [{ type: "tool_result", tool_use_id: id, content: "18°C" }] }] });
const errOf = (e) => ({ status: e.status, type: e.error && e.error.error && e.error.error.type,
  message: (e.error && e.error.error && e.error.error.message) || String(e.message) });
async function main() {
  const out = { runs: [] };
  const a = await client.messages.create(first, { headers: toolPlan }).withResponse();
  out.runs.push({ step: "create_tool_use", run: a.response.headers.get("x-run-id"), message: a.data });
  const use = a.data.content.find((b) => b.type === "tool_use");
  const second = withResult(a.data.content, use.id);
  const b = await client.messages.create(second, { headers: textPlan }).withResponse();
  out.runs.push({ step: "create_text", run: b.response.headers.get("x-run-id"), message: b.data });
  const s1 = client.messages.stream(first, { headers: toolPlan });
  const m1 = await s1.finalMessage();
  out.runs.push({ step: "stream_tool_use", run: (await s1.withResponse()).response.headers.get("x-run-id"), message: m1 });
  const s2 = client.messages.stream(withResult(m1.content, m1.content.find((b) => b.type === "tool_use").id), { headers: textPlan });
  const m2 = await s2.finalMessage();
  out.runs.push({ step: "stream_text", run: (await s2.withResponse()).response.headers.get("x-run-id"), message: m2 });
  const { max_tokens, ...countBody } = second;
  out.count = (await client.messages.countTokens(countBody)).input_tokens;
  out.count_run = b.response.headers.get("x-run-id");
  for (const kind of ["cut", "no-usage"]) {
    const st = client.messages.stream({ model, max_tokens: 64, messages: [{ role: "user", content: "hi" }] },
      { headers: { "X-Demo-Plan": kind === "cut" ? "kind=cut&after=1" : "kind=no-usage" } });
    const r = { kind };
    try { r.message = await st.finalMessage(); } catch (e) { r.error = errOf(e); }
    r.run = (await st.withResponse()).response.headers.get("x-run-id");
    out[kind] = r;
  }
  try {
    await new Anthropic({ baseURL, apiKey: "wrong", maxRetries: 0 }).messages.create({ model, max_tokens: 5, messages: [{ role: "user", content: "x" }] });
  } catch (e) { out.refused = errOf(e); }
  console.log(JSON.stringify(out));
}
main().catch((e) => { console.error(e); process.exit(1); });
`

type sdkMessage struct {
	StopReason string `json:"stop_reason"`
	Content    []struct {
		Type  string          `json:"type"`
		Text  string          `json:"text"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	} `json:"content"`
	Usage claudeUsage `json:"usage"`
}

type sdkError struct {
	Status  int    `json:"status"`
	Type    string `json:"type"`
	Message string `json:"message"`
}

type sdkOut struct {
	Runs []struct {
		Step    string     `json:"step"`
		Run     string     `json:"run"`
		Message sdkMessage `json:"message"`
	} `json:"runs"`
	Count    int64  `json:"count"`
	CountRun string `json:"count_run"`
	Cut      struct {
		Run   string    `json:"run"`
		Error *sdkError `json:"error"`
	} `json:"cut"`
	NoUsage struct {
		Run     string      `json:"run"`
		Message *sdkMessage `json:"message"`
		Error   *sdkError   `json:"error"`
	} `json:"no-usage"`
	Refused sdkError `json:"refused"`
}

// TestAnthropicSDK: messages.create and messages.stream with a tool round
// trip, countTokens equal to the reserve's input part, a cut stream (one
// error event, no message_stop, held, then reconciled), no usage (held),
// and an Anthropic-shaped refusal — both paths.
func TestAnthropicSDK(t *testing.T) {
	node, nodePath := clients.Node(t)
	script := filepath.Join(t.TempDir(), "sdk.cjs")
	if err := os.WriteFile(script, []byte(sdkScript), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range messagesPaths {
		t.Run(p.name, func(t *testing.T) {
			s, key := openMessagesServer(t, p.protocols)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, script, s.URL(), key, messagesModel)
			cmd.Env = append(os.Environ(), "NODE_PATH="+nodePath)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("node: %v\n%s\n%s", err, stdout.String(), stderr.String())
			}
			var out sdkOut
			if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
				t.Fatalf("%v: %s", err, stdout.String())
			}
			if len(out.Runs) != 4 {
				t.Fatalf("runs %+v", out.Runs)
			}
			for _, r := range out.Runs {
				m := r.Message
				if len(m.Content) != 1 {
					t.Fatalf("%s: %+v", r.Step, m)
				}
				b := m.Content[0]
				if strings.HasSuffix(r.Step, "_text") {
					if m.StopReason != "end_turn" || b.Type != "text" || b.Text != demo.AckPrefix+"18°C" {
						t.Errorf("%s: %+v, want the tool result acknowledged", r.Step, m)
					}
				} else if m.StopReason != "tool_use" || b.Type != "tool_use" || b.Name != "get_weather" || string(b.Input) != `{"city":"Paris"}` {
					t.Errorf("%s: %+v, want the get_weather call", r.Step, m)
				}
				run, err := s.Store().Run(context.Background(), ledger.RunID(r.Run))
				if err != nil {
					t.Fatalf("%s: run %q: %v", r.Step, r.Run, err)
				}
				u := m.Usage
				usage := ledger.Units(u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens + u.OutputTokens)
				if run.Usage != ledger.UsageTrusted || run.SpentUnits != usage {
					t.Errorf("%s: run %+v, the SDK saw usage %+v (%d)", r.Step, run, u, usage)
				}
				if p.protocols == nil && (u.CacheCreationInputTokens == 0 || u.CacheReadInputTokens == 0) {
					t.Errorf("%s: the native usage lost its cache figures: %+v", r.Step, u)
				}
			}
			// countTokens = the reserve's input part (reserve − max_tokens).
			run, err := s.Store().Run(context.Background(), ledger.RunID(out.CountRun))
			if err != nil {
				t.Fatal(err)
			}
			if out.Count <= 0 || ledger.Units(out.Count) != run.ReserveUnits-256 {
				t.Errorf("countTokens %d, the reserve %d − max_tokens 256 = %d", out.Count, run.ReserveUnits, run.ReserveUnits-256)
			}
			// A cut: an error event (no message_stop: the SDK raises), held.
			if out.Cut.Error == nil || !strings.Contains(out.Cut.Error.Message, "upstream_interrupted") {
				t.Errorf("cut stream: %+v", out.Cut.Error)
			}
			cut := waitHeld(t, s, out.Cut.Run)
			if cut.Status != ledger.RunInterrupted {
				t.Errorf("cut run %+v", cut)
			}
			reconcile(t, s, out.Cut.Run, 7)
			if r, _ := s.Store().Run(context.Background(), ledger.RunID(out.Cut.Run)); r.Usage != ledger.UsageReconciled || r.SpentUnits != 7 || r.HeldUnits != 0 {
				t.Errorf("reconciled run %+v", r)
			}
			// No usage: the hold stays. (Natively the demo's message_delta
			// then lacks usage, which the SDK cannot accumulate: it raises.)
			if p.protocols != nil && (out.NoUsage.Error != nil || out.NoUsage.Message == nil) {
				t.Errorf("translated no-usage stream: %+v", out.NoUsage)
			}
			waitHeld(t, s, out.NoUsage.Run)
			if out.Refused.Status != 401 || out.Refused.Type != "authentication_error" || !strings.Contains(out.Refused.Message, "invalid_api_key") {
				t.Errorf("refusal %+v", out.Refused)
			}
		})
	}
}

// waitHeld waits for a run to end with its hold kept (usage unknown): the
// run ends in the handler just after the client saw the end of its stream,
// so it waits on the live hub's changes, re-reading the run at each.
func waitHeld(t *testing.T, s *server.Server, id string) ledger.Run {
	t.Helper()
	sub := s.Hub().Subscribe()
	defer func() { sub.Close() }()
	timeout := time.After(10 * time.Second)
	for {
		r, err := s.Store().Run(context.Background(), ledger.RunID(id))
		if err != nil {
			t.Fatalf("run %q: %v", id, err)
		}
		if r.Status.Ended() {
			if r.Usage != ledger.UsageUnknown || r.HeldUnits != r.ReserveUnits {
				t.Errorf("run %s ended %s/%s holding %d of %d, want its hold kept", id, r.Status, r.Usage, r.HeldUnits, r.ReserveUnits)
			}
			return r
		}
		select {
		case _, ok := <-sub.C():
			if !ok { // dropped as a slow subscriber: listen again
				sub = s.Hub().Subscribe()
			}
		case <-timeout:
			t.Fatalf("run %s did not end: %+v", id, r)
		}
	}
}

func reconcile(t *testing.T, s *server.Server, id string, units int) {
	t.Helper()
	body := fmt.Sprintf(`{"units":%d,"evidence":"provider console: %d tokens"}`, units, units)
	req, _ := http.NewRequest("POST", s.URL()+"/admin/api/holds/"+id+"/reconcile", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+s.AdminToken())
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if b, _ := io.ReadAll(resp.Body); resp.StatusCode != 200 {
		t.Fatalf("reconcile %s: %d %s", id, resp.StatusCode, b)
	}
}
