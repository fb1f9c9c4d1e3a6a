package gateway_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/gateway"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/upstream"
	"github.com/quotagate/quotagate/backend/upstream/demo"
)

// TestProviderIDOnEveryDoor: every door, native and translated, streamed
// and whole, settled and cut, records the provider's own id of the call
// on the run — the id a usage lookup asks the provider about — and the
// output it relayed. The demo names its calls chatcmpl-demo-N (chat),
// resp_demo_N (Responses), msg_demo_N (Messages), demo-N (Gemini) and
// cmpl-demo-N (legacy completions, native only).
func TestProviderIDOnEveryDoor(t *testing.T) {
	const msgs = `"messages":[{"role":"user","content":"hi"}]`
	cases := []struct {
		name, path, body, prefix string
		native                   bool
	}{
		{"ChatStream", "/v1/chat/completions", `{"model":"demo-chat","stream":true,` + msgs + `}`, "chatcmpl-demo-", true},
		{"ChatWhole", "/v1/chat/completions", `{"model":"demo-chat",` + msgs + `}`, "chatcmpl-demo-", true},
		{"ResponsesNative", "/v1/responses", `{"model":"demo-chat","stream":true,"input":"hi"}`, "resp_demo_", true},
		{"ResponsesNativeWhole", "/v1/responses", `{"model":"demo-chat","input":"hi"}`, "resp_demo_", true},
		{"ResponsesTranslated", "/v1/responses", `{"model":"demo-chat","stream":true,"input":"hi"}`, "chatcmpl-demo-", false},
		{"MessagesNative", "/v1/messages", `{"model":"demo-chat","max_tokens":20,"stream":true,` + msgs + `}`, "msg_demo_", true},
		{"MessagesNativeWhole", "/v1/messages", `{"model":"demo-chat","max_tokens":20,` + msgs + `}`, "msg_demo_", true},
		{"MessagesTranslated", "/v1/messages", `{"model":"demo-chat","max_tokens":20,` + msgs + `}`, "chatcmpl-demo-", false},
		{"GeminiNative", "/v1beta/models/demo-chat:streamGenerateContent?alt=sse", geminiBody, "demo-", true},
		{"GeminiNativeWhole", "/v1beta/models/demo-chat:generateContent", geminiBody, "demo-", true},
		{"GeminiTranslated", "/v1beta/models/demo-chat:streamGenerateContent?alt=sse", geminiBody, "chatcmpl-demo-", false},
		{"Completions", "/v1/completions", `{"model":"demo-chat","stream":true,"prompt":"def f(","suffix":"):"}`, "cmpl-demo-", true},
		{"CompletionsWhole", "/v1/completions", `{"model":"demo-chat","prompt":"def f(","suffix":"):"}`, "cmpl-demo-", true},
	}
	for _, c := range cases {
		plans := []string{""}
		if strings.Contains(c.path, "stream") || strings.Contains(c.body, `"stream":true`) {
			plans = append(plans, "kind=cut&after=1") // a cut is a stream's
		}
		for _, plan := range plans {
			name := c.name
			if plan != "" {
				name += "Cut"
			}
			t.Run(name, func(t *testing.T) {
				protocols := []string{"chat"}
				if c.native {
					protocols = []string{"chat", "responses", "messages", "gemini", "completions"}
				}
				e := newEnv(t, envOpts{tenants: []ledger.Tenant{tenant("a", 100_000, 4)},
					upstream: upstream.Options{Protocols: protocols}})
				hdr := map[string]string{"x-goog-api-key": "key-a", "Content-Type": "application/json"}
				if plan != "" {
					hdr[demo.PlanHeader] = plan
				}
				resp := e.do(ctxT(t), http.MethodPost, c.path, "key-a", c.body, hdr)
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("status %d", resp.StatusCode)
				}
				run := e.waitEnd(runID(t, resp))
				if !strings.HasPrefix(run.ProviderID, c.prefix) {
					t.Fatalf("provider id %q, want %s…; run %+v", run.ProviderID, c.prefix, run)
				}
				if plan != "" && run.Usage != ledger.UsageUnknown {
					t.Fatalf("a cut run ends held, got %s", run.Usage)
				}
				if run.RelayedUnits <= 0 {
					t.Fatalf("relayed units %d", run.RelayedUnits)
				}
				rows, err := e.store.Audit(ctxT(t), ledger.AuditFilter{RunID: run.ID})
				if err != nil {
					t.Fatal(err)
				}
				if last := rows[len(rows)-1]; last.ProviderID != run.ProviderID || rows[0].ProviderID != "" {
					t.Fatalf("audit rows' provider ids: first %q, last %q", rows[0].ProviderID, last.ProviderID)
				}
			})
		}
	}
}

// TestProviderIDKeptMidStream: on an upstream whose streams keep their
// provider id early (one a usage lookup asks), a stream still running
// KeepProviderID.After after its answer named the call has the id on its
// run while it is active — one "named" row — so that a crash then leaves a
// hold a lookup can settle. A stream on another upstream, and a whole
// answer, keep it with their end only.
func TestProviderIDKeptMidStream(t *testing.T) {
	const msgs = `"messages":[{"role":"user","content":"hi"}]`
	for _, c := range []struct {
		name         string
		keep, stream bool
	}{{"Kept", true, true}, {"OtherUpstream", false, true}, {"Whole", true, false}} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, envOpts{tenants: []ledger.Tenant{tenant("a", 100_000, 4)}, modify: func(o *gateway.Options) {
				o.KeepProviderID = gateway.KeepProviderID{After: time.Millisecond, Upstreams: map[string]bool{"demo": c.keep}}
			}})
			release := func() {}
			if c.stream { // every answer pauses after its first part (a whole one would send nothing)
				release = e.demo.Hold()
				defer release()
			}
			body := fmt.Sprintf(`{"model":"demo-chat","stream":%t,%s}`, c.stream, msgs)
			resp := e.do(ctxT(t), http.MethodPost, "/v1/chat/completions", "key-a", body, nil)
			defer resp.Body.Close()
			id := runID(t, resp)
			if c.keep && c.stream {
				e.log.wait(t, string(ledger.AuditNamed), id)
				run, err := e.store.Run(ctxT(t), id)
				if err != nil || run.Status != ledger.RunActive || !strings.HasPrefix(run.ProviderID, "chatcmpl-demo-") {
					t.Fatalf("mid-stream run %+v, %v: want active with its provider id", run, err)
				}
			}
			release()
			io.Copy(io.Discard, resp.Body)
			run := e.waitEnd(id)
			rows, err := e.store.Audit(ctxT(t), ledger.AuditFilter{RunID: id, Kind: ledger.AuditNamed})
			if err != nil {
				t.Fatal(err)
			}
			want := 0
			if c.keep && c.stream {
				want = 1
			}
			if len(rows) != want || !strings.HasPrefix(run.ProviderID, "chatcmpl-demo-") || run.Usage != ledger.UsageTrusted {
				t.Fatalf("%d named rows (want %d); run %+v", len(rows), want, run)
			}
		})
	}
}
