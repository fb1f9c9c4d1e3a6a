package upstream

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestKeyRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		body   string
		want   string
	}{
		{"unknown key", 401, `{"error":{"code":"invalid_api_key"}}`, "401"},
		{"no access", 403, `{}`, "403"},
		{"account cannot pay", 402, `{"error":{"message":"Insufficient Balance"}}`, "402"},
		{"openai quota", 429, `{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`, "quota_exhausted"},
		{"openai rate", 429, `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`, ""},
		{"ark free trial spent", 429, `{"error":{"code":"QuotaExceeded","message":"free trial quota used up","type":"TooManyRequests"}}`, "quota_exhausted"},
		{"ark account limit", 429, `{"error":{"code":"SetLimitExceeded","message":"inference limit reached","type":"TooManyRequests"}}`, "quota_exhausted"},
		{"ark busy", 429, `{"error":{"code":"ServerOverloaded","type":"TooManyRequests"}}`, ""},
		{"anthropic billing", 429, `{"type":"error","error":{"type":"billing_error","message":"credit"}}`, "quota_exhausted"},
		{"anthropic rate", 429, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`, ""},
		{"gemini per day", 429, `{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaId":"GenerateRequestsPerDayPerProjectPerModel-FreeTier"}]}]}}`, "quota_exhausted"},
		{"gemini per minute", 429, `{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"violations":[{"quotaId":"GenerateRequestsPerMinutePerProjectPerModel-FreeTier"}]}]}}`, ""},
		{"not json", 429, `Too Many Requests`, ""},
		{"server error", 500, `{"error":{"code":"insufficient_quota"}}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := &Response{StatusCode: tc.status, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(tc.body))}
			why, resp := keyRefused(resp)
			if why != tc.want {
				t.Errorf("why %q, want %q", why, tc.want)
			}
			if b, _ := io.ReadAll(resp.Body); string(b) != tc.body {
				t.Errorf("body after the look %q, want it whole", b)
			}
		})
	}
}
