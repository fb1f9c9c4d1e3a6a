package e2e_test

import (
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// TestReliabilityUpstreamEchoesKey is issue 12 item 6: an upstream whose
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
