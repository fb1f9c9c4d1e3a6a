package scrub_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/quotagate/quotagate/backend/scrub"
)

const (
	upstreamKey = "sk-upstream-M1nB2vC3xZ4aS5dF6gH7jK8lP9oI0uY"
	adminToken  = "Zq3vN8mB7vC6xZ5aS4dF3gH2jK1lP0oI9uYtRe"
	volcSK      = "TmpJd05qQTNOR1EzTXpRek5HSTFaR1ExTlRZMg=="
)

func TestString(t *testing.T) {
	s := scrub.New(upstreamKey, adminToken, volcSK, "", "short")
	for _, tc := range []struct{ name, in, want string }{
		{"OpenAI401", "Incorrect API key provided: " + upstreamKey + ". You can find your API key at https://platform.openai.com/account/api-keys.",
			"Incorrect API key provided: [redacted]. You can find your API key at https://platform.openai.com/account/api-keys."},
		{"MaskedEcho", "Incorrect API key provided: sk-upstr**************************I0uY.", "Incorrect API key provided: [redacted]."},
		{"PrefixEcho", "key sk-upstream-M1nB… is invalid", "key [redacted]… is invalid"},
		{"UnknownSkKey", "the key sk-proj-abcdefghijklmnop was revoked", "the key [redacted] was revoked"},
		{"AdminToken", "token " + adminToken + " rejected", "token [redacted] rejected"},
		{"BalanceSecret", "signature mismatch for " + volcSK, "signature mismatch for [redacted]"},
		{"VolcAK", "AccessKeyId AKLTZjM0YTQ4ZGE5NDk0 not found", "AccessKeyId [redacted] not found"},
		{"Bearer", "Authorization: Bearer abc.def-ghi_jkl", "Authorization: Bearer [redacted]"},
		{"QueryKey", "GET https://x.example/v1?key=AIzaSyA-1234567890abcdefghij&alt=sse failed", "GET https://x.example/v1?key=[redacted]&alt=sse failed"},
		{"JSONField", `{"api_key": "hunter2hunter2"}`, `{"api_key": "[redacted]"}`},
		{"LongToken", "session 4f9c2a7be81d0c6f3a5b9e2d7c1f8a0b6e4d2c9f expired", "session [redacted] expired"},
		{"PlainText", "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
			"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens."},
		{"RequestID", "request id req_123 / 123e4567-e89b-12d3-a456-426614174000", "request id req_123 / 123e4567-e89b-12d3-a456-426614174000"},
		{"ShortSecretIgnored", "a short answer", "a short answer"},
		{"Empty", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := s.String(tc.in); got != tc.want {
				t.Errorf("String(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
		})
	}
	var nilScrubber *scrub.Scrubber
	if got := nilScrubber.String("bad key sk-abcdefghijkl"); got != "bad key [redacted]" {
		t.Errorf("nil scrubber: %q", got)
	}
}

// FuzzScrub: whatever the text and the secret, no configured secret
// survives, scrubbing twice changes nothing more, and UTF-8 stays UTF-8.
func FuzzScrub(f *testing.F) {
	f.Add("Incorrect API key provided: "+upstreamKey, upstreamKey)
	f.Add("x"+adminToken+adminToken[:20]+"y", adminToken)
	f.Add("aaaaaaaaaaaaaaaaaaaa", "aaaaaaaaa")
	f.Add("Bearer sk-abcdefgh key=zzzzzzzz", "[redacted]")
	f.Fuzz(func(t *testing.T, in, secret string) {
		s := scrub.New(secret)
		out := s.String(in)
		if v := strings.TrimSpace(secret); len(v) >= scrub.MinSecretLen && !strings.Contains(scrub.Mask, v) && strings.Contains(out, v) {
			t.Fatalf("secret %q survives in %q", v, out)
		}
		if again := s.String(out); again != out {
			t.Fatalf("not idempotent: %q → %q", out, again)
		}
		if utf8.ValidString(in) && !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 out of %q: %q", in, out)
		}
	})
}
