package alert

import (
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// ParseWebhookURL reads alerts.webhook.url. A webhook carries tenant names
// and spend, signed but not encrypted, so it goes over https — or over
// plain http only to this machine: a loopback address (127.0.0.0/8, ::1)
// or the name localhost. It refuses anything else naming field: another
// scheme, no host, an IPv6 zone, a port outside 1–65535, and credentials
// in the URL (they would be logged with it; the secret has its own key).
func ParseWebhookURL(field, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: not a URL; write it like https://hooks.example.com/quotagate", field)
	}
	shown := u.Redacted() // errors never repeat a password
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("%s: %q must be an https URL (or http to localhost)", field, shown)
	}
	if u.Opaque != "" || u.Hostname() == "" {
		return nil, fmt.Errorf("%s: %q names no host", field, shown)
	}
	if strings.Contains(u.Hostname(), "%") {
		return nil, fmt.Errorf("%s: %q: an address with a zone (%%) names an interface, not a receiver", field, shown)
	}
	if u.User != nil {
		return nil, fmt.Errorf("%s: the URL carries credentials; sign with %s.secret instead", field, strings.TrimSuffix(field, ".url"))
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("%s: %q: port %s is not 1–65535", field, shown, port)
		}
	}
	if u.Scheme == "http" && !Loopback(u.Hostname()) {
		return nil, fmt.Errorf("%s: %q: plain http goes only to this machine (localhost, 127.0.0.0/8, ::1); use https for %s", field, shown, u.Hostname())
	}
	return u, nil
}

// Loopback reports whether host (a URL's Hostname) is this machine by
// address or by the name localhost. Other names are not resolved: what a
// name resolves to may change after the check.
func Loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	addr, err := netip.ParseAddr(host)
	return err == nil && addr.Unmap().IsLoopback()
}
