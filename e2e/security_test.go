package e2e_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/gorilla/websocket"
)

// TestLocalhostHardening checks the assembled server the way a hostile page
// or a rebound DNS name would meet it (RELIABILITY T23–T25).
func TestLocalhostHardening(t *testing.T) {
	s := openServer(t, fstest.MapFS{"index.html": {Data: []byte("<title>q</title>")}})
	addr := strings.TrimPrefix(s.URL(), "http://")
	_, port, _ := net.SplitHostPort(addr)
	tok := s.AdminToken()

	do := func(method, path string, hdr map[string]string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, s.URL()+path, nil)
		for k, v := range hdr {
			if k == "Host" {
				req.Host = v
			} else {
				req.Header.Set(k, v)
			}
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	bearer := "Bearer " + tok
	for _, tc := range []struct {
		name   string
		method string
		path   string
		hdr    map[string]string
		want   int
	}{
		{"ForeignHostDashboard", "GET", "/", map[string]string{"Host": "evil.example:" + port}, 403},
		{"ForeignHostAdmin", "GET", "/admin/api/state", map[string]string{"Host": "attacker.example", "Authorization": bearer}, 403},
		{"ForeignHostHealthz", "GET", "/healthz", map[string]string{"Host": "localhost.evil.example:" + port}, 403},
		{"LoopbackHost", "GET", "/healthz", map[string]string{"Host": "localhost:" + port}, 200},
		{"NoToken", "GET", "/admin/api/state", nil, 401},
		{"WrongToken", "GET", "/admin/api/state", map[string]string{"Authorization": "Bearer wrong"}, 401},
		{"Token", "GET", "/admin/api/state", map[string]string{"Authorization": bearer}, 200},
		{"ForeignOriginWithToken", "GET", "/admin/api/state", map[string]string{"Origin": "https://evil.example", "Authorization": bearer}, 403},
		{"NullOriginWithToken", "GET", "/admin/api/state", map[string]string{"Origin": "null", "Authorization": bearer}, 403},
		{"WailsOriginWithToken", "GET", "/admin/api/state", map[string]string{"Origin": "wails://wails", "Authorization": bearer}, 200},
		{"ServedOriginWithToken", "GET", "/admin/api/state", map[string]string{"Origin": "http://127.0.0.1:" + port, "Authorization": bearer}, 200},
		{"WailsPreflight", "OPTIONS", "/admin/api/holds/x/reconcile", map[string]string{"Origin": "wails://wails", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization,content-type"}, 204},
		{"ForeignPreflight", "OPTIONS", "/admin/api/holds/x/reconcile", map[string]string{"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"}, 403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := do(tc.method, tc.path, tc.hdr)
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.want)
			}
			acao := resp.Header.Get("Access-Control-Allow-Origin")
			if acao == "*" || resp.Header.Get("Access-Control-Allow-Private-Network") != "" {
				t.Fatalf("wildcard or private-network CORS header: %v", resp.Header)
			}
			if o := tc.hdr["Origin"]; o == "wails://wails" && acao != o {
				t.Fatalf("ACAO %q, want exact echo of %q", acao, o)
			}
			if tc.want == 403 && acao != "" {
				t.Fatalf("refused request carries ACAO %q", acao)
			}
		})
	}

	ws := func(origin, token string) (int, error) {
		h := http.Header{}
		if origin != "" {
			h.Set("Origin", origin)
		}
		u := "ws://" + addr + "/admin/ws"
		if token != "" {
			u += "?token=" + token
		}
		c, resp, err := websocket.DefaultDialer.Dial(u, h)
		if c != nil {
			defer c.Close()
			var m struct{ Type string }
			if err := c.ReadJSON(&m); err != nil || m.Type != "state" {
				return 101, fmt.Errorf("first message %+v: %v", m, err)
			}
			return 101, nil
		}
		if resp == nil {
			return 0, err
		}
		return resp.StatusCode, nil
	}
	for _, tc := range []struct {
		name, origin, token string
		want                int
	}{
		{"WSWails", "wails://wails", tok, 101},
		{"WSNoOriginToken", "", tok, 101},
		{"WSForeignOrigin", "https://evil.example", tok, 403},
		{"WSPrefixOrigin", "http://localhost.attacker.tld:" + port, tok, 403},
		{"WSNoToken", "wails://wails", "", 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ws(tc.origin, tc.token)
			if err != nil || got != tc.want {
				t.Fatalf("ws: %d %v, want %d", got, err, tc.want)
			}
		})
	}
	t.Run("WSForeignHost", func(t *testing.T) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "GET /admin/ws?token=%s HTTP/1.1\r\nHost: evil.example\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n", tok)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 403 {
			t.Fatalf("status %d, want 403", resp.StatusCode)
		}
	})
}
