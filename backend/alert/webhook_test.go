package alert_test

import (
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/alert"
)

const field = "alerts.webhook.url"

func TestParseWebhookURL(t *testing.T) {
	for _, raw := range []string{
		"https://hooks.example.com/quotagate",
		"https://10.0.0.5:8443/hook?team=a",
		"HTTPS://hooks.example.com",
		"http://localhost:9000/hook",
		"http://LOCALHOST/hook",
		"http://127.0.0.1:9000/hook",
		"http://127.255.0.9/",
		"http://[::1]:9000/hook",
		"http://[::ffff:127.0.0.1]:9000/",
	} {
		if _, err := alert.ParseWebhookURL(field, raw); err != nil {
			t.Errorf("%s refused: %v", raw, err)
		}
	}
}

func TestParseWebhookURLRefuses(t *testing.T) {
	for _, tc := range []struct{ name, raw, says string }{
		{"Empty", "", "must be an https URL"},
		{"NoScheme", "hooks.example.com/x", "must be an https URL"},
		{"OtherScheme", "ftp://hooks.example.com/x", "must be an https URL"},
		{"Javascript", "javascript:alert(1)", "must be an https URL"},
		{"Opaque", "https:hooks.example.com", "names no host"},
		{"NoHost", "https:///path", "names no host"},
		{"HTTPToTheWorld", "http://hooks.example.com/x", "plain http goes only to this machine"},
		{"HTTPToThePrivateNet", "http://10.0.0.5/x", "plain http goes only to this machine"},
		{"HTTPToAnySubdomainOfLocalhost", "http://evil.localhost/x", "plain http goes only to this machine"},
		{"HTTPToLookalike", "http://127.0.0.1.nip.io/x", "plain http goes only to this machine"},
		{"HTTPShortLoopback", "http://127.1/x", "plain http goes only to this machine"},
		{"HTTPUnspecified", "http://0.0.0.0/x", "plain http goes only to this machine"},
		{"HTTPUserinfoTrick", "http://localhost:80@evil.example/x", "credentials"},
		{"Credentials", "https://user:pass@hooks.example.com/x", "credentials"},
		{"Zone", "http://[::1%25lo]:9000/", "zone"},
		{"PortZero", "https://hooks.example.com:0/x", "port 0"},
		{"PortTooHigh", "http://localhost:65536/x", "port 65536"},
		{"Control", "https://hooks.example.com/\n", "not a URL"},
		{"CredentialsElsewhere", "ftp://user:pass@hooks.example.com/x", "must be an https URL"},
		{"CredentialsBadPort", "https://user:pass@hooks.example.com:99999/x", "credentials"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := alert.ParseWebhookURL(field, tc.raw)
			if err == nil {
				t.Fatalf("%q accepted", tc.raw)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, field+": ") || !strings.Contains(msg, tc.says) {
				t.Fatalf("error %q must start with %q and say %q", msg, field, tc.says)
			}
			if strings.Contains(err.Error(), "pass@") {
				t.Fatalf("error repeats credentials: %v", err)
			}
		})
	}
}
