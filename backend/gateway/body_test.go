package gateway_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/gateway"
)

// TestSlowBodyTimesOut: a request body that trickles in is cut at the body
// deadline with 408 request_timeout (30 stalled bodies held 245 MB before
// the deadline), reserving nothing — at every door and at count_tokens.
func TestSlowBodyTimesOut(t *testing.T) {
	for _, tc := range []struct{ path, want string }{
		{"/v1/chat/completions", `"code":"request_timeout"`},
		{"/v1/responses", `"code":"request_timeout"`},
		{"/v1/messages", `(quotagate: request_timeout)`},
		{"/v1/messages/count_tokens", `(quotagate: request_timeout)`},
	} {
		t.Run(strings.TrimPrefix(tc.path, "/v1/"), func(t *testing.T) {
			e := newEnv(t, envOpts{modify: func(o *gateway.Options) { o.BodyTimeout = 300 * time.Millisecond }})
			conn, err := net.Dial("tcp", strings.TrimPrefix(e.srv.URL, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			start := time.Now()
			fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer key-a\r\n"+
				"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"model\":", tc.path)
			_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("no answer to a stalled body: %v", err)
			}
			defer resp.Body.Close()
			body := readAll(t, resp)
			if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(body, tc.want) {
				t.Fatalf("stalled body: %d %s, want 408 request_timeout", resp.StatusCode, body)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("answered after %v", took)
			}
			if b := e.balance("a"); b.HeldUnits != 0 || b.Active != 0 {
				t.Errorf("balance after a stalled body: %+v", b)
			}
		})
	}
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	var b strings.Builder
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		b.WriteString(sc.Text())
	}
	return b.String()
}
