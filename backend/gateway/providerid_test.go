package gateway_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

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
