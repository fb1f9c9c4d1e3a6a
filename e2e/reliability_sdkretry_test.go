package e2e_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/ledger"
)

// TestReliabilityWhatSDKsSee checks over HTTP what an SDK decides its
// retries on: an
// upstream 4xx before any output passes through with its status, code and
// (scrubbed) words, and x-should-retry: false unless a retry can fix it
// (408, 409, 429); only 5xx and connection failures become 502/504. Every
// failure that kept a hold, and every refusal a retry cannot fix, says
// x-should-retry: false — the OpenAI and Anthropic SDKs then make one call
// where they made three.
func TestReliabilityWhatSDKsSee(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{})
	ctxLen := `{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`
	for _, tc := range []struct {
		name    string
		content string
		key     string
		maxTok  int
		status  int
		code    string
		typ     string
		noRetry bool
		usage   ledger.UsageStatus // "" for no run
	}{
		{"ContextLength400", "/demo " + url.Values{"kind": {"error"}, "status": {"400"}, "body": {ctxLen}}.Encode(), r.keyA, 16, 400, "context_length_exceeded", "invalid_request_error", true, ledger.UsageReleased},
		{"Conflict409", "/demo kind=error&status=409", r.keyA, 16, 409, "demo_error", "", false, ledger.UsageReleased},
		{"Server500", "/demo kind=error&status=500", r.keyA, 16, 502, "upstream_error", "", false, ledger.UsageReleased},
		{"CutKeepsHold", "/demo kind=cut&after=1", r.keyA, 16, 502, "upstream_interrupted", "", true, ledger.UsageUnknown},
		{"BudgetRefusal", "hi", r.keyB, 5000, 402, "insufficient_budget", "", true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			received := r.demo.Stats().Received
			got := r.chat(tc.key, chatBody(tc.content, false, tc.maxTok))
			if got.status != tc.status || got.errorCode() != tc.code || (tc.typ != "" && !strings.Contains(string(got.body), `"type":"`+tc.typ+`"`)) {
				t.Fatalf("%d %s; want %d %s", got.status, got.body, tc.status, tc.code)
			}
			if sr := got.header.Get("x-should-retry"); (sr == "false") != tc.noRetry {
				t.Errorf("x-should-retry %q, want false: %v", sr, tc.noRetry)
			}
			if tc.usage == "" {
				return
			}
			if run := r.waitRun(got.runID()); run.Usage != tc.usage {
				t.Errorf("run %+v, usage want %s", run, tc.usage)
			}
			if n := r.demo.Stats().Received - received; n != 1 {
				t.Errorf("the provider got %d calls, want 1", n)
			}
		})
	}
}
