package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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

// fimEmbedScript drives the pinned openai SDK (e2e/clients) through
// quotagate: completions.create with a suffix, whole and streamed, a
// streamed completion the demo cuts, and embeddings.create with a string,
// an array of strings and token arrays (the SDK asks for base64 and decodes
// it). It prints, for each call, the X-Run-Id, the text it got (or the
// number of vectors and their length) and the error it raised.
const fimEmbedScript = `
const OpenAI = require("openai");
const { BASE, KEY, PROMPT, SUFFIX } = process.env;
const c = new OpenAI({ baseURL: BASE, apiKey: KEY, maxRetries: 0 });
const fim = (prompt, stream) => c.completions.create({ model: "demo-code", prompt, suffix: SUFFIX, max_tokens: 64, stream }).withResponse();
const out = {};
const run = async (name, f) => {
  const r = { run: "", text: "", vectors: 0, dims: 0, error: "" };
  try { await f(r); } catch (e) { r.error = String(e?.message ?? e); }
  out[name] = r;
};
const streamed = async (r, prompt) => {
  const { data, response } = await fim(prompt, true);
  r.run = response.headers.get("x-run-id") || "";
  for await (const chunk of data) for (const ch of chunk.choices) r.text += ch.text;
};
const embed = (input) => async (r) => {
  const { data, response } = await c.embeddings.create({ model: "demo-code", input }).withResponse();
  r.run = response.headers.get("x-run-id") || "";
  r.vectors = data.data.length;
  r.dims = data.data[0].embedding.length;
};
(async () => {
  await run("whole", async (r) => {
    const { data, response } = await fim(PROMPT, false);
    r.run = response.headers.get("x-run-id") || "";
    r.text = data.choices[0].text;
  });
  await run("stream", (r) => streamed(r, PROMPT));
  await run("cut", (r) => streamed(r, "/demo kind=cut&after=1"));
  await run("string", embed("the quick brown fox"));
  await run("array", embed(["func main() {", "}"]));
  await run("tokens", embed([[1, 2, 3, 4], [5, 6]]));
  process.stdout.write(JSON.stringify(out));
})();
`

// TestOpenAISDKCompletionsAndEmbeddings: the real openai SDK autocompletes
// (fill-in-the-middle, whole and streamed) and embeds (a string, an array,
// token arrays) through quotagate in front of an upstream that speaks both;
// each call settles trusted for exactly its usage (utf8-bytes-v1: the
// prompt and suffix, or every input, plus the relayed text) and the balance
// moves by exactly their sum. A completions stream the upstream cuts keeps
// its hold: the reserve of prompt + suffix + max_tokens.
func TestOpenAISDKCompletionsAndEmbeddings(t *testing.T) {
	t.Parallel()
	node, nodePath := clients.Node(t)
	script := filepath.Join(t.TempDir(), "fimembed.cjs")
	if err := os.WriteFile(script, []byte(fimEmbedScript), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := demo.Start(demo.Options{APIKey: canaryUpstream, Models: []string{"demo-chat", "demo-code"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	r := newRig(t, rigOptions{demo: d, extraUpstreams: fmt.Sprintf(
		"  - {name: code, kind: openai, base_url: %q, api_key: %q, models: [demo-code], protocols: [chat, completions, embeddings]}",
		d.URL(), canaryUpstream)})
	before := r.balance("a")

	prompt, suffix := "func add(a, b int) int {\n\treturn ", "a + b // the sum\n}\n\nfunc main() { add(1, 2) }"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Env = append(os.Environ(), "NODE_PATH="+nodePath, "BASE="+r.s.URL()+"/v1", "KEY="+r.keyA,
		"PROMPT="+prompt, "SUFFIX="+suffix)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s\n%s", err, out, stderr.String())
	}
	var got map[string]struct {
		Run     ledger.RunID
		Text    string
		Vectors int
		Dims    int
		Error   string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	in := ledger.Units(len(prompt) + len(suffix))
	var spent ledger.Units
	trusted := func(name string, want ledger.Units) {
		t.Helper()
		g := got[name]
		if g.Error != "" || g.Run == "" {
			t.Fatalf("%s: run %q, error %q", name, g.Run, g.Error)
		}
		run := r.waitRun(g.Run)
		if run.Usage != ledger.UsageTrusted || run.SpentUnits != want || run.HeldUnits != 0 {
			t.Errorf("%s: run %+v, want trusted with %d spent", name, run, want)
		}
		t.Logf("%s: %q settled trusted, %d units", name, g.Text, run.SpentUnits)
		spent += want
	}
	for _, name := range []string{"whole", "stream"} {
		if g := got[name]; !strings.HasPrefix(g.Text, demo.FillPrefix) || !strings.Contains(g.Text, "a + b // the sum") {
			t.Errorf("%s: the fill %q does not use the suffix", name, g.Text)
		}
		trusted(name, in+ledger.Units(len(got[name].Text)))
	}
	for _, e := range []struct {
		name    string
		in      ledger.Units
		vectors int
	}{
		{"string", ledger.Units(len("the quick brown fox")), 1},
		{"array", ledger.Units(len("func main() {") + len("}")), 2},
		{"tokens", 4 + 2, 2},
	} {
		if g := got[e.name]; g.Vectors != e.vectors || g.Dims != demo.DefaultDimensions {
			t.Errorf("%s: %d vectors of %d, want %d of %d", e.name, g.Vectors, g.Dims, e.vectors, demo.DefaultDimensions)
		}
		trusted(e.name, e.in)
	}

	cut := got["cut"]
	if cut.Error == "" || cut.Run == "" {
		t.Fatalf("the cut stream raised no error in the SDK: %+v", cut)
	}
	run := r.waitRun(cut.Run)
	wantHeld := ledger.Units(len("/demo kind=cut&after=1")+len(suffix)) + 64
	if run.Usage != ledger.UsageUnknown || run.HeldUnits != wantHeld {
		t.Errorf("cut: run %+v, want its reserve of %d held", run, wantHeld)
	}
	t.Logf("cut: the SDK raised %q; %d units held", cut.Error, run.HeldUnits)

	after := r.balance("a")
	if after.SpentUnits-before.SpentUnits != spent || after.HeldUnits-before.HeldUnits != wantHeld {
		t.Errorf("balance moved %d spent, %d held; want exactly %d and %d",
			after.SpentUnits-before.SpentUnits, after.HeldUnits-before.HeldUnits, spent, wantHeld)
	}
	r.verify()
}
