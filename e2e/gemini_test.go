package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/upstream/demo"
	"github.com/quotagate/quotagate/e2e/clients"
)

// The Gemini door with the real clients it exists for: Gemini CLI and the
// official @google/genai SDK, through quotagate to the demo upstream —
// natively (the demo speaks every protocol, gemini included) and
// translated (one that speaks chat completions only).

// geminiSettings is ~/.gemini/settings.json exactly as the Connect panel
// gives it (frontend/src/lib/snippets.ts, geminiSettings): the API key auth (else "Invalid auth method selected.", exit 41),
// and nothing that phones home.
const geminiSettings = `{
  "security": {
    "auth": {
      "selectedType": "gemini-api-key"
    }
  },
  "telemetry": {
    "enabled": false
  },
  "privacy": {
    "usageStatisticsEnabled": false
  },
  "general": {
    "disableAutoUpdate": true
  }
}`

// geminiCLIStats is the part of `gemini -p … --output-format json` that
// says what the model was billed.
type geminiCLIOut struct {
	Response string `json:"response"`
	Stats    struct {
		Models map[string]struct {
			Tokens struct {
				Prompt     int64 `json:"prompt"`
				Candidates int64 `json:"candidates"`
				Thoughts   int64 `json:"thoughts"`
				Tool       int64 `json:"tool"`
				Cached     int64 `json:"cached"`
				Total      int64 `json:"total"`
			} `json:"tokens"`
		} `json:"models"`
	} `json:"stats"`
}

// TestGeminiCLISaysHi: the real Gemini CLI, `gemini -p "say hi" -m <demo
// model>`, prints the demo's answer; the run settles trusted and the
// balance moves by exactly its usage — both paths.
func TestGeminiCLISaysHi(t *testing.T) {
	gemini := clients.Bin(t, "gemini")
	for _, p := range messagesPaths {
		t.Run(p.name, func(t *testing.T) {
			s, key := openMessagesServer(t, p.protocols)
			before, ids := balance(t, s), runIDs(t, s)
			home := t.TempDir()
			if err := os.MkdirAll(filepath.Join(home, ".gemini"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), []byte(geminiSettings), 0o644); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, gemini, "-p", "say hi", "-m", messagesModel, "--output-format", "json")
			cmd.Dir = home
			// The environment the README documents, and nothing of this machine's.
			cmd.Env = []string{
				"HOME=" + home, "PATH=" + os.Getenv("PATH"),
				"GOOGLE_GEMINI_BASE_URL=" + s.URL(),
				"GEMINI_API_KEY=" + key,
				"GEMINI_CLI_TRUST_WORKSPACE=true",
			}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("gemini: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
			}
			var out geminiCLIOut
			if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
				t.Fatalf("gemini's output %q: %v (stderr %s)", stdout.String(), err, stderr.String())
			}
			if strings.TrimSpace(out.Response) != demo.DefaultText {
				t.Errorf("gemini printed %q, want the demo's answer", out.Response)
			}
			runs := newRuns(t, s, ids)
			if len(runs) != 1 {
				t.Fatalf("%d runs, want 1: %+v", len(runs), runs)
			}
			r := runs[0]
			if r.Usage != ledger.UsageTrusted || r.Status != ledger.RunCompleted || r.Door != "gemini" {
				t.Errorf("run %+v, want completed and trusted at the gemini door", r)
			}
			u := out.Stats.Models[messagesModel].Tokens
			usage := ledger.Units(u.Prompt + u.Candidates + u.Thoughts + u.Tool)
			after := balance(t, s)
			if spent := after.SpentUnits - before.SpentUnits; spent != usage || r.SpentUnits != usage || usage == 0 {
				t.Errorf("balance moved by %d, the run spent %d, Gemini CLI's usage is %d (%+v)", spent, r.SpentUnits, usage, u)
			}
			if after.HeldUnits != before.HeldUnits {
				t.Errorf("held %d → %d", before.HeldUnits, after.HeldUnits)
			}
			t.Logf("%s: %+v, run %s spent %d", p.name, u, r.ID, r.SpentUnits)
		})
	}
}

// genaiScript drives the official @google/genai SDK: generateContent and
// generateContentStream with a function-call round trip each (the call
// comes back as a functionCall, its functionResponse goes up, the demo
// acknowledges it), countTokens, a cut stream and a refused key. It
// prints one JSON object.
const genaiScript = `
const { GoogleGenAI } = require("@google/genai");
const [baseUrl, apiKey, model] = process.argv.slice(2);
const ai = new GoogleGenAI({ apiKey, httpOptions: { baseUrl } });
const plan = { "X-Demo-Plan": "call=get_weather&args=" + encodeURIComponent('{"city":"Paris"}') };
const config = { httpOptions: { headers: plan }, systemInstruction: "Be brief.",
  tools: [{ functionDeclarations: [{ name: "get_weather", description: "Weather for a city",
    parametersJsonSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } }] }] };
const ask = [{ role: "user", parts: [{ text: "Weather in Paris?" }] }];
const answered = (call) => [...ask, { role: "model", parts: [{ functionCall: call }] },
  { role: "user", parts: [{ functionResponse: { id: call.id, name: call.name, response: { temp_c: 18 } } }] }];
const runOf = (r) => r.sdkHttpResponse && r.sdkHttpResponse.headers && r.sdkHttpResponse.headers["x-run-id"];
async function streamed(contents, cfg) {
  const out = { text: "", calls: [], usage: null, finish: null, run: null };
  for await (const c of await ai.models.generateContentStream({ model, contents, config: cfg })) {
    out.run = out.run || runOf(c);
    if (c.text) out.text += c.text;
    if (c.functionCalls) out.calls.push(...c.functionCalls);
    if (c.usageMetadata) out.usage = c.usageMetadata;
    if (c.candidates && c.candidates[0].finishReason) out.finish = c.candidates[0].finishReason;
  }
  return out;
}
async function main() {
  const out = { steps: [] };
  const a = await ai.models.generateContent({ model, contents: ask, config });
  out.steps.push({ step: "generate_call", run: runOf(a), calls: a.functionCalls, usage: a.usageMetadata, finish: a.candidates[0].finishReason });
  const b = await ai.models.generateContent({ model, contents: answered(a.functionCalls[0]), config });
  out.steps.push({ step: "generate_text", run: runOf(b), text: b.text, usage: b.usageMetadata, finish: b.candidates[0].finishReason });
  const c = await streamed(ask, config);
  out.steps.push({ step: "stream_call", ...c });
  const d = await streamed(answered(c.calls[0]), config);
  out.steps.push({ step: "stream_text", ...d });
  out.count = (await ai.models.countTokens({ model, contents: answered(c.calls[0]) })).totalTokens;
  try {
    await streamed(ask, { httpOptions: { headers: { "X-Demo-Plan": "kind=cut&after=1" } } });
  } catch (e) { out.cut = String(e.message || e); }
  try {
    await new GoogleGenAI({ apiKey: "wrong", httpOptions: { baseUrl } }).models.generateContent({ model, contents: "x" });
  } catch (e) { out.refused = { status: e.status, message: String(e.message) }; }
  console.log(JSON.stringify(out));
}
main().catch((e) => { console.error(e); process.exit(1); });
`

type genaiUsage struct {
	PromptTokenCount     int64 `json:"promptTokenCount"`
	CandidatesTokenCount int64 `json:"candidatesTokenCount"`
	ThoughtsTokenCount   int64 `json:"thoughtsTokenCount"`
}

type genaiOut struct {
	Steps []struct {
		Step  string `json:"step"`
		Run   string `json:"run"`
		Text  string `json:"text"`
		Calls []struct {
			Name string          `json:"name"`
			Args json.RawMessage `json:"args"`
		} `json:"calls"`
		Usage  *genaiUsage `json:"usage"`
		Finish string      `json:"finish"`
	} `json:"steps"`
	Count   int64  `json:"count"`
	Cut     string `json:"cut"`
	Refused struct {
		Status  int    `json:"status"`
		Message string `json:"message"`
	} `json:"refused"`
}

// TestGoogleGenAISDK: generateContent and generateContentStream with a
// function-call round trip both ways, countTokens, a cut stream (the SDK
// raises; the run is held) and a Google-shaped refusal — both paths.
func TestGoogleGenAISDK(t *testing.T) {
	node, nodePath := clients.Node(t)
	script := filepath.Join(t.TempDir(), "genai.cjs")
	if err := os.WriteFile(script, []byte(genaiScript), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range messagesPaths {
		t.Run(p.name, func(t *testing.T) {
			s, key := openMessagesServer(t, p.protocols)
			ids := runIDs(t, s)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, script, s.URL(), key, messagesModel)
			cmd.Env = append(os.Environ(), "NODE_PATH="+nodePath)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("node: %v\n%s\n%s", err, stdout.String(), stderr.String())
			}
			var out genaiOut
			if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
				t.Fatalf("%v: %s", err, stdout.String())
			}
			if len(out.Steps) != 4 {
				t.Fatalf("steps %+v", out.Steps)
			}
			for _, st := range out.Steps {
				if strings.HasSuffix(st.Step, "_text") {
					if st.Text != demo.AckPrefix+`{"temp_c":18}` {
						t.Errorf("%s: %q, want the function response acknowledged", st.Step, st.Text)
					}
				} else if len(st.Calls) != 1 || st.Calls[0].Name != "get_weather" || string(st.Calls[0].Args) != `{"city":"Paris"}` {
					t.Errorf("%s: calls %+v, want get_weather", st.Step, st.Calls)
				}
				if st.Finish != "STOP" || st.Usage == nil {
					t.Fatalf("%s: finish %q usage %+v", st.Step, st.Finish, st.Usage)
				}
				run, err := s.Store().Run(context.Background(), ledger.RunID(st.Run))
				if err != nil {
					t.Fatalf("%s: run %q: %v", st.Step, st.Run, err)
				}
				u := st.Usage
				if usage := ledger.Units(u.PromptTokenCount + u.CandidatesTokenCount + u.ThoughtsTokenCount); run.Usage != ledger.UsageTrusted || run.SpentUnits != usage {
					t.Errorf("%s: run %+v, the SDK saw usage %+v", st.Step, run, u)
				}
			}
			if out.Count <= 0 {
				t.Errorf("countTokens %d", out.Count)
			}
			if !strings.Contains(out.Cut, "upstream_interrupted") {
				t.Errorf("cut stream: %q", out.Cut)
			}
			var cut []ledger.Run
			for _, r := range newRuns(t, s, ids) {
				if r.Status == ledger.RunInterrupted {
					cut = append(cut, r)
				}
			}
			if len(cut) != 1 || cut[0].HeldUnits != cut[0].ReserveUnits {
				t.Errorf("cut runs %+v, want one held", cut)
			}
			if out.Refused.Status != 401 || !strings.Contains(out.Refused.Message, "invalid_api_key") {
				t.Errorf("refused %+v", out.Refused)
			}
		})
	}
}
