package alert_test

import (
	"net"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/alert"
)

// FuzzParseWebhookURL: never panics; what it accepts is http(s) with a
// host, no credentials, and plain http only to a loopback address or
// localhost (checked here with net, not netip); and the URL it answers
// reads back the same way.
func FuzzParseWebhookURL(f *testing.F) {
	for _, seed := range []string{
		"https://hooks.example.com/q", "http://localhost:9000/", "http://127.0.0.1/", "http://[::1]:1/",
		"http://[::ffff:127.0.0.1]/", "http://10.0.0.1/", "http://localhost:80@evil.example/", "https:x",
		"http://127.0.0.1.evil/", "HTTP://LocalHost", "https://h:65535", "",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := alert.ParseWebhookURL(field, raw)
		if err != nil {
			if !strings.HasPrefix(err.Error(), field+": ") {
				t.Fatalf("error %q does not name the field", err)
			}
			return
		}
		host := u.Hostname()
		if (u.Scheme != "http" && u.Scheme != "https") || host == "" || u.User != nil {
			t.Fatalf("accepted %q: scheme %q host %q user %v", raw, u.Scheme, host, u.User)
		}
		if u.Scheme == "http" {
			ip := net.ParseIP(strings.SplitN(host, "%", 2)[0])
			if !strings.EqualFold(host, "localhost") && (ip == nil || !ip.IsLoopback()) {
				t.Fatalf("accepted plain http to %q (%q)", host, raw)
			}
		}
		again, err := alert.ParseWebhookURL(field, u.String())
		if err != nil || again.Scheme != u.Scheme || again.Hostname() != host {
			t.Fatalf("%q reads back from %q as %v, %v", raw, u.String(), again, err)
		}
	})
}
