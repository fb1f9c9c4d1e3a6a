package e2e_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/ledger"
)

// TestReliabilityUpstreamEchoesKey: an upstream whose
// error names the operator's provider key (a 401 "Incorrect API key
// provided: sk-…", a 429 naming it, a plain-text answer, an echoed admin
// token) gets no secret to the tenant (body, headers), to the run's
// evidence (/v1/runs, /admin/api/state), to audit.csv or to the logs.
func TestReliabilityUpstreamEchoesKey(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{})
	for _, tc := range []struct {
		name   string
		status int
		body   string
	}{
		{"OpenAI401", 401, `{"error":{"message":"Incorrect API key provided: ` + canaryUpstream + `. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","code":"invalid_api_key"}}`},
		{"RateLimit429", 429, `{"error":{"message":"Rate limit reached for key ` + canaryUpstream + ` on tokens per min","type":"requests","code":"rate_limit_exceeded"}}`},
		{"PlainText400", 400, `bad key sk-canary-provider-M1nB2vC3xZ… (full: ` + canaryUpstream + `)`},
		{"AdminTokenEcho", 403, `{"error":{"message":"forbidden for ` + canaryAdmin + ` and Bearer ` + canaryKeyB + `"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan := url.Values{"kind": {"error"}, "status": {strconv.Itoa(tc.status)}, "body": {tc.body}, "retry_after": {"0"}}
			for _, stream := range []bool{false, true} {
				got := r.chat(r.keyA, chatBody("/demo "+plan.Encode(), stream, 16))
				if got.status < 400 {
					t.Fatalf("an upstream %d became %d %s", tc.status, got.status, got.body)
				}
				var hdr strings.Builder
				got.header.Write(&hdr)
				leak(t, "the tenant's answer", string(got.body)+hdr.String())
				if id := got.runID(); id != "" {
					leak(t, "the run", string(r.do("GET", "/v1/runs/"+string(id), r.keyA, "", "").body))
				}
			}
		})
	}
	leak(t, "/admin/api/state", string(r.admin("GET", "/admin/api/state", "").body))
	leak(t, "audit.csv", string(r.admin("GET", "/admin/api/audit.csv", "").body))
	leak(t, "the logs", r.logs.String())
}

// leak fails t when s holds a canary secret, or the first 20 characters of
// one (an echo of a truncated key).
func leak(t *testing.T, where, s string) {
	t.Helper()
	for _, c := range []string{canaryUpstream, canaryAdmin, canaryKeyA, canaryKeyB} {
		if strings.Contains(s, c[:20]) {
			t.Errorf("%s holds the secret %s…:\n%s", where, c[:20], s)
		}
	}
}

// TestReliabilityMidStreamErrorEchoesKey: an upstream
// error event after output started (chat's data {"error":…}, the Responses
// and Messages `error` events, native and translated), and a 200 whose body
// is an error object, that echoes the provider key the request carried get
// no secret to the tenant, the run's evidence, /admin/api/state, audit.csv or
// the logs; the run keeps its hold (the provider did work). The 200 whose
// body is an error reaches the client as a 502 upstream_error, not as an
// answer.
func TestReliabilityMidStreamErrorEchoesKey(t *testing.T) {
	t.Parallel()
	r := newNativeRig(t, rigOptions{})
	d := r.demo
	const directive = "/demo kind=error-mid&after=2"
	chat := func(model string, stream bool) string {
		return strings.Replace(chatBody(directive, stream, 64), `"demo-chat"`, `"`+model+`"`, 1)
	}
	resp := func(model string, stream bool) string {
		return fmt.Sprintf(`{"model":%q,"stream":%v,"max_output_tokens":64,"input":%q}`, model, stream, directive)
	}
	msgs := func(model string, stream bool) string {
		return fmt.Sprintf(`{"model":%q,"stream":%v,"max_tokens":64,"messages":[{"role":"user","content":%q}]}`, model, stream, directive)
	}
	for _, tc := range []struct {
		name, path, body string
		relayed          bool // the upstream's own error reaches the client (masked)
		evidence         bool // its words are in the run's evidence (masked)
	}{
		{"ChatStream", "/v1/chat/completions", chat("demo-chat", true), true, true},
		{"ChatBody", "/v1/chat/completions", chat("demo-chat", false), true, true},
		{"ResponsesNative", "/v1/responses", resp("demo-native", true), true, false}, // its code only
		{"ResponsesNativeBody", "/v1/responses", resp("demo-native", false), true, true},
		{"ResponsesTranslated", "/v1/responses", resp("demo-chat", true), false, true},
		{"MessagesNative", "/v1/messages", msgs("demo-native", true), false, true},
		{"MessagesNativeBody", "/v1/messages", msgs("demo-native", false), true, true},
		{"MessagesTranslated", "/v1/messages", msgs("demo-chat", true), false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			received := d.Stats().Received
			got := r.do("POST", tc.path, r.keyA, "application/json", tc.body)
			if n := d.Stats().Received - received; n != 1 {
				t.Fatalf("the upstream got %d calls", n)
			}
			var hdr strings.Builder
			got.header.Write(&hdr)
			leak(t, "the tenant's answer", string(got.body)+hdr.String())
			id := got.runID()
			if id == "" {
				t.Fatalf("no run: %d %s", got.status, got.body)
			}
			if !strings.Contains(string(got.body), "error") {
				t.Errorf("the client was not told of the failure: %d %s", got.status, got.body)
			}
			if want := map[bool]int{true: http.StatusBadGateway, false: http.StatusOK}[strings.HasSuffix(tc.name, "Body")]; got.status != want {
				t.Errorf("status %d, want %d: %s", got.status, want, got.body)
			}
			if masked := strings.Contains(string(got.body), "Incorrect API key provided: [redacted]"); masked != tc.relayed {
				t.Errorf("the upstream's error relayed masked: %v, want %v:\n%s", masked, tc.relayed, got.body)
			}
			run := r.waitRun(id)
			leak(t, "the run", run.Evidence+string(r.do("GET", "/v1/runs/"+string(id), r.keyA, "", "").body))
			if run.Usage == ledger.UsageTrusted || run.HeldUnits != run.ReserveUnits {
				t.Errorf("run %+v: want its hold kept", run)
			}
			if masked := strings.Contains(run.Evidence, "Incorrect API key provided: [redacted]"); masked != tc.evidence {
				t.Errorf("the upstream's words in the evidence, masked: %v, want %v: %q", masked, tc.evidence, run.Evidence)
			}
		})
	}
	leak(t, "/admin/api/state", string(r.admin("GET", "/admin/api/state", "").body))
	leak(t, "audit.csv", string(r.admin("GET", "/admin/api/audit.csv", "").body))
	leak(t, "the logs", r.logs.String())
}
