package gateway_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/gateway"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/meter"
	"github.com/quotagate/quotagate/backend/upstream"
	"github.com/quotagate/quotagate/backend/upstream/demo"
)

// The completions and embeddings doors over real sockets, against a demo
// upstream that speaks both natively. The meter is utf8-bytes-v1, so every
// figure is bytes: the prompt and suffix (or every input) in, the relayed
// text out.

func nativeEnv(t *testing.T, protocols ...string) *env {
	return newEnv(t, envOpts{tenants: []ledger.Tenant{tenant("a", 10000, 2)},
		upstream: upstream.Options{Protocols: protocols}})
}

func (e *env) post(path, body, plan string) *http.Response {
	e.t.Helper()
	var hdr map[string]string
	if plan != "" {
		hdr = map[string]string{demo.PlanHeader: plan}
	}
	return e.do(ctxT(e.t), http.MethodPost, path, "key-a", body, hdr)
}

// textOf concatenates choices[].text of every chunk of a completions stream.
func textOf(s sse) string {
	var b strings.Builder
	for _, d := range s.data {
		var c struct {
			Choices []struct{ Text string } `json:"choices"`
		}
		if json.Unmarshal([]byte(d), &c) == nil {
			for _, ch := range c.Choices {
				b.WriteString(ch.Text)
			}
		}
	}
	return b.String()
}

// textCompletion is what the tests read of a whole completions answer.
type textCompletion struct {
	Object  string
	Choices []struct{ Text string }
	Usage   struct {
		PromptTokens int64 `json:"prompt_tokens"`
	}
}

const fimBody = `{"model":"demo-chat","prompt":"def add(a, b):\n    return ","suffix":"\n\nprint(add(1, 2))","max_tokens":64%s}`

// settledTrusted checks that run settled trusted for exactly spent units
// and the tenant's balance moved by exactly that.
func (e *env) settledTrusted(id ledger.RunID, spent ledger.Units) {
	e.t.Helper()
	run := e.waitEnd(id)
	if run.Usage != ledger.UsageTrusted || run.SpentUnits != spent || run.HeldUnits != 0 {
		e.t.Fatalf("run %+v, want trusted with %d spent", run, spent)
	}
	if b := e.balance("a"); b.SpentUnits != spent || b.HeldUnits != 0 {
		e.t.Fatalf("balance %+v, want %d spent and nothing held", b, spent)
	}
}

func TestCompletionsFillInTheMiddleSettlesTrusted(t *testing.T) {
	prompt, suffix := "def add(a, b):\n    return ", "\n\nprint(add(1, 2))"
	in := ledger.Units(len(prompt) + len(suffix))
	for _, tc := range []struct{ name, extra string }{
		{"Whole", ``},
		{"Stream", `,"stream":true`},
		{"StreamWithUsage", `,"stream":true,"stream_options":{"include_usage":true}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := nativeEnv(t, "chat", "completions")
			resp := e.post("/v1/completions", strings.Replace(fimBody, "%s", tc.extra, 1), "")
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d", resp.StatusCode)
			}
			id := runID(t, resp)
			var text string
			if tc.extra == "" {
				c := decode[textCompletion](t, resp.Body)
				if c.Object != "text_completion" || len(c.Choices) != 1 || c.Usage.PromptTokens != int64(in) {
					t.Fatalf("answer %+v", c)
				}
				text = c.Choices[0].Text
			} else {
				s := readSSE(resp.Body)
				if !s.done() {
					t.Fatalf("stream did not end with [DONE]: %v", s.data)
				}
				usageChunk := strings.Contains(strings.Join(s.data, "\n"), `"prompt_tokens"`)
				if usageChunk != strings.Contains(tc.extra, "include_usage") {
					t.Fatalf("usage chunk relayed %v, asked %v: %v", usageChunk, !usageChunk, s.data)
				}
				text = textOf(s)
			}
			if !strings.HasPrefix(text, demo.FillPrefix) || !strings.Contains(text, "print(add") {
				t.Fatalf("the fill %q does not use the suffix", text)
			}
			e.settledTrusted(id, in+ledger.Units(len(text)))
		})
	}
}

func TestCompletionsCutStreamKeepsItsHold(t *testing.T) {
	e := nativeEnv(t, "completions")
	resp := e.post("/v1/completions", strings.Replace(fimBody, "%s", `,"stream":true`, 1), "kind=cut&after=1")
	defer resp.Body.Close()
	id := runID(t, resp)
	s := readSSE(resp.Body)
	if s.done() || s.errorCode() != ledger.CodeUpstreamInterrupt {
		t.Fatalf("a cut stream ended %v (error %q)", s.data, s.errorCode())
	}
	run := e.waitEnd(id)
	if run.Usage != ledger.UsageUnknown || run.HeldUnits != run.ReserveUnits || run.ReserveUnits != ledger.Units(len("def add(a, b):\n    return ")+len("\n\nprint(add(1, 2))")+64) {
		t.Fatalf("run %+v, want its reserve (prompt + suffix + max_tokens) held", run)
	}
}

// TestCompletionsReserveDefaultsToSixteen: without max_tokens the output
// cap is OpenAI's 16, and the demo stops there (finish_reason length).
func TestCompletionsReserveDefaultsToSixteen(t *testing.T) {
	e := nativeEnv(t, "completions")
	resp := e.post("/v1/completions", `{"model":"demo-chat","prompt":"x"}`, "")
	defer resp.Body.Close()
	id := runID(t, resp)
	run := e.waitEnd(id)
	if run.ReserveUnits != 1+16 || run.Usage != ledger.UsageTrusted || run.SpentUnits > 17 {
		t.Fatalf("run %+v, want a reserve of 1 + 16, trusted within it", run)
	}
}

func TestCompletionsAndEmbeddingsRefusals(t *testing.T) {
	for _, tc := range []struct {
		name, protocols, path, body, want string
	}{
		{"n", "completions", "/v1/completions", `{"model":"demo-chat","prompt":"x","n":2}`, "n greater than 1"},
		{"best_of", "completions", "/v1/completions", `{"model":"demo-chat","prompt":"x","best_of":3}`, "best_of"},
		{"echo", "completions", "/v1/completions", `{"model":"demo-chat","prompt":"x","echo":true}`, "echo"},
		{"logprobs", "completions", "/v1/completions", `{"model":"demo-chat","prompt":"x","logprobs":2}`, "logprobs"},
		{"two prompts", "completions", "/v1/completions", `{"model":"demo-chat","prompt":["a","b"]}`, "one prompt"},
		{"no prompt", "completions", "/v1/completions", `{"model":"demo-chat"}`, "prompt is required"},
		{"completions not spoken", "chat", "/v1/completions", `{"model":"demo-chat","prompt":"x"}`, "upstream demo, which does not speak completions"},
		{"embeddings not spoken", "chat,completions", "/v1/embeddings", `{"model":"demo-chat","input":"x"}`, "upstream demo, which does not speak embeddings"},
		{"empty input", "embeddings", "/v1/embeddings", `{"model":"demo-chat","input":[]}`, "input must be"},
		{"mixed input", "embeddings", "/v1/embeddings", `{"model":"demo-chat","input":["a",[1]]}`, "input must be"},
		{"embeddings stream", "embeddings", "/v1/embeddings", `{"model":"demo-chat","input":"a","stream":true}`, "do not stream"},
		{"encoding", "embeddings", "/v1/embeddings", `{"model":"demo-chat","input":"a","encoding_format":"int8"}`, "encoding_format"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := nativeEnv(t, strings.Split(tc.protocols, ",")...)
			resp := e.post(tc.path, tc.body, "")
			defer resp.Body.Close()
			body := decode[struct {
				Error struct{ Message, Code string }
			}](t, resp.Body)
			if resp.StatusCode != http.StatusBadRequest || body.Error.Code != ledger.CodeInvalidRequest || !strings.Contains(body.Error.Message, tc.want) {
				t.Fatalf("%d %+v, want 400 invalid_request saying %q", resp.StatusCode, body, tc.want)
			}
			if resp.Header.Get("X-Run-Id") != "" {
				t.Fatal("a refusal before admission has no run")
			}
			if d := e.demo.Stats().Received; d != 0 {
				t.Fatalf("the upstream got %d requests", d)
			}
		})
	}
}

func TestEmbeddingsSettleTrusted(t *testing.T) {
	for _, tc := range []struct {
		name, input string
		in          ledger.Units
		n           int
	}{
		{"String", `"hello world"`, 11, 1},
		{"Array", `["hello","wide world"]`, 15, 2},
		{"TokenArray", `[1,2,3]`, 3, 1},
		{"TokenArrays", `[[1,2,3],[4,5]]`, 5, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := nativeEnv(t, "chat", "embeddings")
			resp := e.post("/v1/embeddings", `{"model":"demo-chat","input":`+tc.input+`,"dimensions":8}`, "")
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d", resp.StatusCode)
			}
			id := runID(t, resp)
			got := decode[struct {
				Data []struct{ Embedding []float32 }
			}](t, resp.Body)
			if len(got.Data) != tc.n || len(got.Data[0].Embedding) != 8 {
				t.Fatalf("answer %+v", got)
			}
			if run := e.waitEnd(id); run.ReserveUnits != tc.in {
				t.Fatalf("reserve %d, want the counted input %d and no output", run.ReserveUnits, tc.in)
			}
			e.settledTrusted(id, tc.in)
		})
	}
}

// TestEmbeddingsUnverifiedUsageKeepsItsHold: usage that contradicts the
// gateway's count, no usage, or a body cut short: the hold stays.
func TestEmbeddingsUnverifiedUsageKeepsItsHold(t *testing.T) {
	for _, plan := range []string{"kind=false-usage", "kind=no-usage", "kind=cut"} {
		t.Run(plan, func(t *testing.T) {
			e := nativeEnv(t, "embeddings")
			resp := e.post("/v1/embeddings", `{"model":"demo-chat","input":["a","bc"]}`, plan)
			defer resp.Body.Close()
			id := runID(t, resp)
			run := e.waitEnd(id)
			if run.Usage != ledger.UsageUnknown || run.HeldUnits != 3 {
				t.Fatalf("run %+v, want 3 held", run)
			}
		})
	}
}

// TestCompletionsAndEmbeddingsUnderTiktoken: under the tiktoken meter the
// prompt and suffix, or the inputs, are counted as plain text (no chat
// message framing), so an upstream that counts them so is trusted.
func TestCompletionsAndEmbeddingsUnderTiktoken(t *testing.T) {
	e := newEnv(t, envOpts{meter: meter.NameTiktoken, tenants: []ledger.Tenant{tenant("a", 10000, 2)},
		upstream: upstream.Options{Protocols: []string{"completions", "embeddings"}},
		demo: func(o *demo.Options, m meter.Meter) {
			o.CompletionsPromptUnits = func(b []byte) int64 { return int64(gateway.CompletionsInputUnits(m, b)) }
			o.EmbeddingsPromptUnits = func(b []byte) int64 { return int64(gateway.EmbeddingsInputUnits(m, b)) }
			o.CompletionUnits = func(model, text string) int64 { return int64(m.Count(model, text)) }
		}})
	for _, c := range []struct{ path, body string }{
		{"/v1/completions", strings.Replace(fimBody, "%s", `,"stream":true`, 1)},
		{"/v1/embeddings", `{"model":"demo-chat","input":["hello world","again"]}`},
		{"/v1/embeddings", `{"model":"demo-chat","input":[[1,2,3]]}`},
	} {
		resp := e.post(c.path, c.body, "")
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", c.path, resp.StatusCode, b)
		}
		if run := e.waitEnd(runID(t, resp)); run.Usage != ledger.UsageTrusted {
			t.Errorf("%s: run %+v, want trusted", c.path, run)
		}
	}
}

// TestNewDoorsShareTheRunCore: the completions and embeddings doors are the
// run core's like every door: a run records its door, an Idempotency-Key
// already used is refused 409 before a second hold, and the owner's
// DELETE /v1/runs/{id} cancels a stalled completion, keeping its hold.
func TestNewDoorsShareTheRunCore(t *testing.T) {
	e := nativeEnv(t, "completions", "embeddings")
	embed := func() *http.Response {
		return e.do(ctxT(t), http.MethodPost, "/v1/embeddings", "key-a", `{"model":"demo-chat","input":"abc"}`,
			map[string]string{"Idempotency-Key": "index-1"})
	}
	first := embed()
	first.Body.Close()
	run := e.waitEnd(runID(t, first))
	if run.Door != "embeddings" || run.UpstreamProtocol != "embeddings" || run.Usage != ledger.UsageTrusted {
		t.Fatalf("run %+v, want a trusted run of the embeddings door", run)
	}
	again := embed()
	body := decode[struct{ Error struct{ Code string } }](t, again.Body)
	again.Body.Close()
	if again.StatusCode != http.StatusConflict || body.Error.Code != ledger.CodeDuplicateRequest {
		t.Fatalf("a used Idempotency-Key: %d %+v, want 409 duplicate_request", again.StatusCode, body)
	}

	resp := e.post("/v1/completions", `{"model":"demo-chat","prompt":"ab","stream":true}`, "kind=stall")
	defer resp.Body.Close()
	id := runID(t, resp)
	del := e.do(ctxT(t), http.MethodDelete, "/v1/runs/"+string(id), "key-a", "", nil)
	del.Body.Close()
	if del.StatusCode != http.StatusAccepted {
		t.Fatalf("DELETE: %d", del.StatusCode)
	}
	if run := e.waitEnd(id); run.Status != ledger.RunCancelled || run.Door != "completions" || run.HeldUnits != 2+16 {
		t.Fatalf("run %+v, want cancelled with its reserve of 2 + 16 held", run)
	}
}
