package admin

import (
	"crypto/sha256"
	"crypto/subtle"
	"net"
	"net/http"
	"strconv"
	"strings"
)

// WailsOrigin is the Origin of fetches and WebSockets from the Wails webview
// on Linux and macOS (RECIPES §6, verified with WebKitGTK 4.0 and 4.1).
const WailsOrigin = "wails://wails"

// AllowedOrigins lists the exact origins of the dashboard when the server is
// configured at addr and actually listens on port: the page served over
// http at the configured address, at 127.0.0.1, localhost and [::1], and the
// Wails webview. Exact strings only: prefix or substring matching is how
// http://localhost.attacker.tld gets in.
func AllowedOrigins(addr string, port int) []string {
	p := strconv.Itoa(port)
	out := []string{
		"http://127.0.0.1:" + p,
		"http://localhost:" + p,
		"http://[::1]:" + p,
		WailsOrigin,
	}
	if host, cp, err := net.SplitHostPort(addr); err == nil && cp != "0" && cp != "" {
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
		out = append(out, "http://"+host+":"+cp)
	}
	return dedupe(out)
}

func dedupe(in []string) []string {
	seen := map[string]bool{}
	out := in[:0]
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

type originPolicy map[string]bool

func newOriginPolicy(origins []string) originPolicy {
	p := originPolicy{}
	for _, o := range origins {
		p[o] = true
	}
	return p
}

// allows reports whether a request may proceed to the token check: no Origin
// (not a browser page), or exactly one of the dashboard's origins.
func (p originPolicy) allows(r *http.Request) bool {
	vals := r.Header.Values("Origin")
	switch len(vals) {
	case 0:
		return true
	case 1:
		return p[vals[0]]
	}
	return false // several Origin headers: no browser sends that
}

// checkOrigin is the WebSocket upgrader's CheckOrigin: the same policy as
// every other admin request, never a constant true.
func (p originPolicy) checkOrigin(r *http.Request) bool { return p.allows(r) }

// tokenMatcher compares presented tokens with the admin token in constant
// time; hashing both sides first makes the comparison length-independent.
type tokenMatcher [sha256.Size]byte

func newTokenMatcher(token string) tokenMatcher { return sha256.Sum256([]byte(token)) }

func (m tokenMatcher) matches(presented string) bool {
	if presented == "" {
		return false
	}
	h := sha256.Sum256([]byte(presented))
	return subtle.ConstantTimeCompare(h[:], m[:]) == 1
}

// Authorized reports whether r carries the admin token as a Bearer
// credential (scheme in any case), compared in constant time: the check
// every admin request passes, for routes the server serves beside the API
// (/metrics names tenants only to the operator).
func (h *Handler) Authorized(r *http.Request) bool {
	return h.token.matches(presentedToken(r, false))
}

// presentedToken returns the bearer token, or for the WebSocket route the
// ?token= query parameter.
func presentedToken(r *http.Request, allowQuery bool) string {
	if a := r.Header.Get("Authorization"); a != "" {
		// The scheme is case-insensitive (RFC 9110 §11.1): "bearer", "BEARER".
		if scheme, t, ok := strings.Cut(strings.TrimSpace(a), " "); ok && strings.EqualFold(scheme, "Bearer") {
			return strings.TrimSpace(t)
		}
		return ""
	}
	if allowQuery {
		return r.URL.Query().Get("token")
	}
	return ""
}
