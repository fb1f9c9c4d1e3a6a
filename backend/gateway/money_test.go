package gateway_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/gateway"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/price"
	"github.com/quotagate/quotagate/backend/upstream"
)

// Captured usage of each door (as in backend/price/testdata/usage.json).
const (
	chatCachedUsage         = `{"prompt_tokens":2006,"completion_tokens":300,"total_tokens":2306,"prompt_tokens_details":{"cached_tokens":1920,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}`
	responsesReasoningUsage = `{"input_tokens":1523,"input_tokens_details":{"cached_tokens":1280},"output_tokens":862,"output_tokens_details":{"reasoning_tokens":640},"total_tokens":2385}`
	messagesCacheUsage      = `{"input_tokens":12,"cache_creation_input_tokens":2048,"cache_read_input_tokens":1500,"output_tokens":503,"service_tier":"standard"}`
)

// bytesOf is n bytes of text: under utf8-bytes-v1 the usage is trusted
// only when it is what the gateway measured, so the prompts and answers
// are as long as the captured usage says.
func bytesOf(n int) string { return strings.Repeat("x", n) }

// capturedUpstream answers every protocol with one complete body carrying
// the captured usage of that protocol.
func capturedUpstream(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasSuffix(r.URL.Path, "/chat/completions"):
			fmt.Fprintf(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],"usage":%s}`, bytesOf(300), chatCachedUsage)
		case strings.HasSuffix(r.URL.Path, "/responses"):
			fmt.Fprintf(w, `{"id":"resp_1","object":"response","created_at":1,"status":"completed","model":"m","output":[{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":%q,"annotations":[]}]}],"usage":%s}`, bytesOf(862), responsesReasoningUsage)
		case strings.HasSuffix(r.URL.Path, "/messages"):
			fmt.Fprintf(w, `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":%q}],"stop_reason":"end_turn","stop_sequence":null,"usage":%s}`, bytesOf(503), messagesCacheUsage)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// chatBody is a chat or Messages request whose prompt is n bytes.
func chatBody(n int) string {
	return fmt.Sprintf(`{"model":"m","max_tokens":4000,"messages":[{"role":"user","content":%q}]}`, bytesOf(n))
}

// responsesBody is a Responses request whose input is n bytes.
func responsesBody(n int) string {
	return fmt.Sprintf(`{"model":"m","max_output_tokens":4000,"input":%q}`, bytesOf(n))
}

// The cost of a run from each door's captured usage, through the real
// doors, natively and translated to chat: at 2.00 input, 0.50 cached,
// 2.50 cache write and 8.00 output per 1M tokens a token costs 2, 0.5,
// 2.5 and 8 micros, and every token is priced once.
func TestCostPerDoor(t *testing.T) {
	p := price.Quote{Input: 2_000_000, CachedInput: 500_000, CacheWrite: 2_500_000, Output: 8_000_000}.Price()
	const (
		chatCost      = 86*2 + 1920/2 + 300*8            // 172 + 960 + 2400: prompt_tokens include the cached
		responsesCost = (1523-1280)*2 + 1280/2 + 862*8   // 486 + 640 + 6896: reasoning is inside output
		messagesCost  = 12*2 + 2048*5/2 + 1500/2 + 503*8 // 24 + 5120 + 750 + 4024: input_tokens leave both caches out
	)
	up := capturedUpstream(t)
	for _, tc := range []struct {
		name, path, body string
		protocols        []string
		want             price.Micros
	}{
		{"ChatCached", "/v1/chat/completions", chatBody(2006), []string{"chat"}, chatCost},
		{"ResponsesReasoningNative", "/v1/responses", responsesBody(1523), []string{"chat", "responses"}, responsesCost},
		{"MessagesCacheNative", "/v1/messages", chatBody(12 + 2048 + 1500), []string{"chat", "messages"}, messagesCost},
		{"ResponsesTranslated", "/v1/responses", responsesBody(2006), []string{"chat"}, chatCost},
		{"MessagesTranslated", "/v1/messages", chatBody(2006), []string{"chat"}, chatCost},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, envOpts{
				tenants:  []ledger.Tenant{tenant("a", 1_000_000, 1)},
				upstream: upstream.Options{Name: "captured", BaseURL: up.URL, Models: []string{"m"}, Protocols: tc.protocols},
				modify: func(o *gateway.Options) {
					o.Money = gateway.Money{Currency: "USD", Prices: map[string]price.Price{"m": p}}
				},
			})
			resp := e.do(ctxT(t), "POST", tc.path, "key-a", tc.body, nil)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("%d %s", resp.StatusCode, b)
			}
			run := e.waitEnd(runID(t, resp))
			if run.Usage != ledger.UsageTrusted {
				t.Fatalf("run %s not trusted: %s", run.ID, run.Evidence)
			}
			if run.CostMicros != tc.want || run.OverrunMicros != 0 || run.ReserveMicros < tc.want {
				t.Fatalf("run %s: usage %s, cost %d (overrun %d, reserve %d); want %d", run.ID, run.Usage, run.CostMicros, run.OverrunMicros, run.ReserveMicros, tc.want)
			}
			if b := e.balance("a"); b.SpentMicros != tc.want || b.HeldMicros != 0 {
				t.Fatalf("balance spent %d, held %d; want %d spent", b.SpentMicros, b.HeldMicros, tc.want)
			}
		})
	}
}
