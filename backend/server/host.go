package server

import (
	"net"
	"net/http"
	"strconv"
)

// allowedHosts lists the exact Host values the server answers: loopback
// names with the port it listens on, and the configured address. Anything
// else — a rebound DNS name, an empty Host, "LOCALHOST", "localhost." or a
// ".local" suffix — is refused (Ollama CVE-2024-28224 and its bypasses).
func allowedHosts(configured string, port int) map[string]bool {
	p := strconv.Itoa(port)
	hosts := map[string]bool{
		net.JoinHostPort("127.0.0.1", p): true,
		net.JoinHostPort("localhost", p): true,
		net.JoinHostPort("::1", p):       true,
	}
	if h, cp, err := net.SplitHostPort(configured); err == nil && cp != "" && cp != "0" {
		hosts[net.JoinHostPort(h, cp)] = true
	}
	return hosts
}

// hostCheck answers 403 before any routing, auth or body parsing when the
// Host is not one of ours: a page rebound to 127.0.0.1 is same-origin, so
// only the Host header tells it apart.
func hostCheck(allowed map[string]bool, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !allowed[r.Host] {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Connection", "close")
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"error":{"message":"this server answers only to localhost, 127.0.0.1 and [::1] on its own port","type":"permission_error","code":"forbidden"}}` + "\n"))
			return
		}
		next.ServeHTTP(w, r)
	})
}
