package admin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/quotagate/quotagate/backend/admin"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/live"
	"github.com/quotagate/quotagate/backend/sqlite"
)

const token = "test-admin-token-0123456789abcdef"

// fixture is an admin handler on a real loopback socket whose state carries
// a budget the test can change.
type fixture struct {
	srv    *httptest.Server
	h      *admin.Handler
	hub    *live.Hub
	store  *sqlite.Store
	port   int
	budget atomic.Int64
	builds atomic.Int64
}

func newFixture(t *testing.T, mod func(*admin.Options)) *fixture {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "ledger.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	f := &fixture{hub: live.NewHub(0), store: st}
	f.budget.Store(1000)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f.port = ln.Addr().(*net.TCPAddr).Port
	o := admin.Options{
		Token:   token,
		Origins: admin.AllowedOrigins("127.0.0.1:8787", f.port),
		Hub:     f.hub,
		State: admin.StateFunc(func(context.Context) (admin.State, error) {
			f.builds.Add(1)
			b := ledger.Units(f.budget.Load())
			return admin.State{Version: "test", Tenants: []admin.TenantState{{Balance: ledger.Balance{TenantID: "local", BudgetUnits: b, AvailableUnits: b}}}}, nil
		}),
		Store:     st,
		Canceller: storeCanceller{st},
		Quota:     &quotaStub{},
		Tenants:   noTenants{},
		Connect: func(context.Context) (admin.ConnectInfo, error) {
			return admin.ConnectInfo{BaseURL: "http://127.0.0.1:8787/v1"}, nil
		},
		Coalesce: 50 * time.Millisecond,
		Refresh:  time.Hour,
	}
	if mod != nil {
		mod(&o)
	}
	f.h = admin.New(o)
	f.srv = httptest.NewUnstartedServer(f.h)
	f.srv.Listener.Close()
	f.srv.Listener = ln
	f.srv.Start()
	t.Cleanup(func() { f.h.Close(); f.srv.Close() })
	return f
}

func (f *fixture) do(t *testing.T, method, path, origin, tok, ctype, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, f.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func errorCode(t *testing.T, resp *http.Response) string {
	t.Helper()
	var b struct {
		Error struct{ Message, Type, Code string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&b); err != nil {
		t.Fatalf("error body is not OpenAI-shaped JSON: %v", err)
	}
	if b.Error.Message == "" || b.Error.Type == "" {
		t.Fatalf("error body lacks message or type: %+v", b)
	}
	return b.Error.Code
}

func TestAuth(t *testing.T) {
	f := newFixture(t, nil)
	for _, tc := range []struct {
		name, tok string
		want      int
	}{
		{"NoToken", "", http.StatusUnauthorized},
		{"WrongToken", "nope", http.StatusUnauthorized},
		{"TokenPrefix", token[:10], http.StatusUnauthorized},
		{"OK", token, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := f.do(t, "GET", "/admin/api/state", "", tc.tok, "", "")
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.want)
			}
			if tc.want == http.StatusUnauthorized && errorCode(t, resp) != ledger.CodeInvalidAPIKey {
				t.Fatal("wrong error code")
			}
		})
	}
	t.Run("QueryTokenOnlyForWebSocket", func(t *testing.T) {
		resp := f.do(t, "GET", "/admin/api/state?token="+token, "", "", "", "")
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("status %d, want 401", resp.StatusCode)
		}
	})
}

func TestStateJSON(t *testing.T) {
	f := newFixture(t, nil)
	resp := f.do(t, "GET", "/admin/api/state", "", token, "", "")
	var raw map[string]json.RawMessage
	if err := json.NewDecoder(resp.Body).Decode(&raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"runs", "holds", "gates", "quota", "snapshots"} {
		if string(raw[k]) != "[]" {
			t.Errorf("%s = %s, want [] (never null)", k, raw[k])
		}
	}
	if !strings.Contains(string(raw["tenants"]), `"available_units":1000`) {
		t.Errorf("tenants = %s", raw["tenants"])
	}
}

func TestOrigin(t *testing.T) {
	f := newFixture(t, nil)
	p := strconv.Itoa(f.port)
	allowed := []string{"wails://wails", "http://127.0.0.1:" + p, "http://localhost:" + p, "http://[::1]:" + p, "http://127.0.0.1:8787"}
	foreign := []string{"https://evil.example", "http://localhost.attacker.tld:" + p, "null", "file://",
		"http://127.0.0.1:1", "http://127.0.0.1:" + p + ".evil.example", "wails://wails.evil", "WAILS://WAILS", "http://localhost:" + p + "/"}
	for _, o := range allowed {
		t.Run("Allowed/"+o, func(t *testing.T) {
			resp := f.do(t, "GET", "/admin/api/state", o, token, "", "")
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d, want 200", resp.StatusCode)
			}
			if got := resp.Header.Get("Access-Control-Allow-Origin"); got != o {
				t.Fatalf("ACAO %q, want exact echo %q", got, o)
			}
			if !strings.Contains(strings.Join(resp.Header.Values("Vary"), ","), "Origin") {
				t.Fatal("no Vary: Origin")
			}
			resp = f.do(t, "GET", "/admin/api/state", o, "", "", "")
			if resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("allowed origin without token: status %d, want 401", resp.StatusCode)
			}
		})
	}
	for _, o := range foreign {
		t.Run("Foreign/"+o, func(t *testing.T) {
			resp := f.do(t, "GET", "/admin/api/state", o, token, "", "")
			if resp.StatusCode != http.StatusForbidden || errorCode(t, resp) != ledger.CodeForbidden {
				t.Fatalf("status %d, want 403 forbidden even with a valid token", resp.StatusCode)
			}
			if resp.Header.Get("Access-Control-Allow-Origin") != "" {
				t.Fatal("foreign origin got an ACAO header")
			}
			pre := f.do(t, "OPTIONS", "/admin/api/state", o, "", "", "")
			if pre.StatusCode != http.StatusForbidden || pre.Header.Get("Access-Control-Allow-Origin") != "" {
				t.Fatalf("preflight from foreign origin: %d, ACAO %q", pre.StatusCode, pre.Header.Get("Access-Control-Allow-Origin"))
			}
		})
	}
	t.Run("Preflight/wails", func(t *testing.T) {
		resp := f.do(t, "OPTIONS", "/admin/api/holds/r1/reconcile", "wails://wails", "", "", "")
		if resp.StatusCode != http.StatusNoContent {
			t.Fatalf("status %d, want 204", resp.StatusCode)
		}
		h := resp.Header
		if h.Get("Access-Control-Allow-Origin") != "wails://wails" ||
			!strings.Contains(h.Get("Access-Control-Allow-Headers"), "Authorization") ||
			!strings.Contains(h.Get("Access-Control-Allow-Headers"), "Content-Type") ||
			!strings.Contains(h.Get("Access-Control-Allow-Methods"), "POST") {
			t.Fatalf("preflight headers %v", h)
		}
	})
	t.Run("TwoOriginHeaders", func(t *testing.T) {
		req, _ := http.NewRequest("GET", f.srv.URL+"/admin/api/state", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Add("Origin", "wails://wails")
		req.Header.Add("Origin", "https://evil.example")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("status %d, want 403", resp.StatusCode)
		}
	})
}

// storeCanceller stands in for the gateway's cancel: it has no upstream to
// close, so it answers what the ledger says of the run.
type storeCanceller struct{ st *sqlite.Store }

func (c storeCanceller) Cancel(ctx context.Context, id ledger.RunID, _ ledger.Actor) (ledger.Run, error) {
	run, err := c.st.Run(ctx, id)
	if err != nil {
		return ledger.Run{}, err
	}
	return run, ledger.Errorf(ledger.CodeRunEnded, "run %s is not running here", id)
}

// The write endpoints reach the ledger: an unknown run is the store's 404,
// the audit export is a CSV of the (empty) ledger.
func TestEndpointsReachTheLedger(t *testing.T) {
	f := newFixture(t, nil)
	for _, tc := range []struct {
		name, method, path, body string
		want                     int
		code                     string
	}{
		{"CancelUnknownRun", "POST", "/admin/api/runs/r1/cancel", "", 404, ledger.CodeRunNotFound},
		{"ReconcileUnknownRun", "POST", "/admin/api/holds/r1/reconcile", `{"units":1,"evidence":"bill"}`, 404, ledger.CodeRunNotFound},
		{"UnknownEndpoint", "GET", "/admin/api/nope", "", 404, "not_found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := f.do(t, tc.method, tc.path, "", token, "application/json", tc.body)
			if resp.StatusCode != tc.want || errorCode(t, resp) != tc.code {
				t.Fatalf("status %d, want %d %s", resp.StatusCode, tc.want, tc.code)
			}
		})
	}
	t.Run("AuditCSV", func(t *testing.T) {
		resp := f.do(t, "GET", "/admin/api/audit.csv", "", token, "", "")
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/csv") || !strings.Contains(string(b), "actor") {
			t.Fatalf("status %d %q: %q", resp.StatusCode, resp.Header.Get("Content-Type"), b)
		}
	})
	t.Run("AuditLog", func(t *testing.T) {
		resp := f.do(t, "GET", "/admin/api/audit", "", token, "", "")
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || !strings.Contains(string(b), `"rows":[]`) {
			t.Fatalf("status %d: %s", resp.StatusCode, b)
		}
	})
}

type quotaStub struct{ got admin.BalanceReading }

func (q *quotaStub) Sync(_ context.Context, up, model string) (ledger.Snapshot, error) {
	if up != "ark" {
		return ledger.Snapshot{}, ledger.Errorf(ledger.CodeModelNotFound, "%s/%s is not guarded", up, model)
	}
	return ledger.Snapshot{Upstream: up, Model: model, Source: "volcengine"}, nil
}

func (q *quotaStub) RecordBalance(_ context.Context, up, model string, r admin.BalanceReading) (ledger.Snapshot, error) {
	q.got = r
	return ledger.Snapshot{Upstream: up, Model: model, Source: "manual"}, nil
}

func TestQuotaEndpoints(t *testing.T) {
	q := &quotaStub{}
	f := newFixture(t, func(o *admin.Options) { o.Quota = q })
	sub := f.hub.Subscribe()
	defer sub.Close()
	for _, tc := range []struct {
		name, path, ctype, body string
		want                    int
	}{
		{"SyncOK", "/admin/api/quota/ark/m/sync", "", "", 200},
		{"SyncUnknownModel", "/admin/api/quota/demo/m/sync", "", "", 404},
		{"BalanceOK", "/admin/api/quota/ark/m/balance", "application/json", `{"balance":1726526}`, 200},
		{"B0OK", "/admin/api/quota/ark/m/balance", "application/json; charset=utf-8", `{"b0":2242178}`, 200},
		{"BothRefused", "/admin/api/quota/ark/m/balance", "application/json", `{"balance":1,"b0":2}`, 400},
		{"NeitherRefused", "/admin/api/quota/ark/m/balance", "application/json", `{}`, 400},
		{"Negative", "/admin/api/quota/ark/m/balance", "application/json", `{"balance":-1}`, 400},
		{"Float", "/admin/api/quota/ark/m/balance", "application/json", `{"balance":1.5}`, 400},
		{"UnknownField", "/admin/api/quota/ark/m/balance", "application/json", `{"balance":1,"x":1}`, 400},
		{"TextPlainCSRF", "/admin/api/quota/ark/m/balance", "text/plain", `{"balance":1}`, 415},
		{"FormCSRF", "/admin/api/quota/ark/m/balance", "application/x-www-form-urlencoded", `balance=1`, 415},
		{"TooLarge", "/admin/api/quota/ark/m/balance", "application/json", `{"balance":1` + strings.Repeat(" ", 70<<10) + `}`, 413},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := f.do(t, "POST", tc.path, "", token, tc.ctype, tc.body)
			if resp.StatusCode != tc.want {
				b, _ := io.ReadAll(resp.Body)
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.want, b)
			}
		})
	}
	if q.got.B0 == nil || *q.got.B0 != 2242178 {
		t.Fatalf("last reading %+v, want b0 2242178", q.got)
	}
}

func wsURL(f *fixture, tok string) string {
	u, _ := url.Parse(f.srv.URL)
	u.Scheme = "ws"
	u.Path = "/admin/ws"
	if tok != "" {
		u.RawQuery = url.Values{"token": {tok}}.Encode()
	}
	return u.String()
}

func dial(t *testing.T, f *fixture, origin, tok string) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	h := http.Header{}
	if origin != "" {
		h.Set("Origin", origin)
	}
	d := websocket.Dialer{HandshakeTimeout: 5 * time.Second}
	c, resp, err := d.Dial(wsURL(f, tok), h)
	if c != nil {
		t.Cleanup(func() { c.Close() })
	}
	return c, resp, err
}

// pages holds the state each test socket has built from its messages.
var pages sync.Map // *websocket.Conn → admin.State

// readState reads one message and returns the page's state after it (a
// delta is applied to the state the socket built so far, as the page does).
func readState(t *testing.T, c *websocket.Conn) admin.State {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var m admin.Message
	if err := c.ReadJSON(&m); err != nil {
		t.Fatalf("read ws: %v", err)
	}
	var s admin.State
	switch {
	case m.Type == "state" && m.State != nil:
		s = *m.State
	case m.Type == "delta" && m.Delta != nil:
		prev, ok := pages.Load(c)
		if !ok {
			t.Fatalf("delta %d before any state", m.Seq)
		}
		s = prev.(admin.State).Apply(*m.Delta)
	default:
		t.Fatalf("message type %q", m.Type)
	}
	pages.Store(c, s)
	return s
}

func TestWebSocketOrigin(t *testing.T) {
	f := newFixture(t, nil)
	p := strconv.Itoa(f.port)
	for _, tc := range []struct {
		name, origin, tok string
		want              int // 101 or an HTTP error status
	}{
		{"Wails", "wails://wails", token, 101},
		{"ServedPage", "http://127.0.0.1:" + p, token, 101},
		{"NoOriginWithToken", "", token, 101},
		{"NoOriginNoToken", "", "", 401},
		{"WailsNoToken", "wails://wails", "", 401},
		{"Evil", "https://evil.example", token, 403},
		{"PrefixTrick", "http://localhost.attacker.tld", token, 403},
		{"Null", "null", token, 403},
		{"File", "file://", token, 403},
		{"OtherPort", "http://127.0.0.1:1", token, 403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, resp, err := dial(t, f, tc.origin, tc.tok)
			if tc.want == 101 {
				if err != nil {
					t.Fatalf("dial: %v", err)
				}
				if s := readState(t, c); s.Version != "test" {
					t.Fatalf("first message %+v", s)
				}
				return
			}
			if err == nil || resp == nil || resp.StatusCode != tc.want {
				t.Fatalf("dial err=%v resp=%v, want HTTP %d and no upgrade", err, resp, tc.want)
			}
		})
	}
}

func TestWebSocketPushesCoalescedChanges(t *testing.T) {
	f := newFixture(t, nil)
	c, _, err := dial(t, f, "wails://wails", token)
	if err != nil {
		t.Fatal(err)
	}
	if s := readState(t, c); s.Tenants[0].AvailableUnits != 1000 {
		t.Fatalf("initial available %d", s.Tenants[0].AvailableUnits)
	}
	before := f.builds.Load()
	for i := 1; i <= 40; i++ { // a burst: one run's admit/start/settle times a dozen
		f.budget.Store(int64(1000 + i))
		f.hub.Publish(live.Change{Kind: live.KindLedger, TenantID: "local"})
	}
	var msgs int
	for {
		s := readState(t, c)
		msgs++
		if s.Tenants[0].AvailableUnits == 1040 {
			break
		}
	}
	if built := f.builds.Load() - before; built > 3 || msgs > 3 {
		t.Fatalf("a burst of 40 changes gave %d snapshots (%d messages); want ≤ 3", built, msgs)
	}
}

// A socket whose loop falls behind the hub (here: held inside a snapshot
// while two changes arrive for its one-slot buffer) is dropped by the hub
// and closed with 1013, so the page re-fetches.
func TestWebSocketSlowSubscriberDropped(t *testing.T) {
	h := live.NewHub(1)
	building, release := make(chan struct{}), make(chan struct{})
	var builds atomic.Int64
	f := newFixture(t, func(o *admin.Options) {
		o.Hub = h
		o.Coalesce = time.Millisecond
		o.State = admin.StateFunc(func(context.Context) (admin.State, error) {
			if builds.Add(1) == 2 { // the first snapshot after connecting: hold the loop here
				close(building)
				<-release
			}
			return admin.State{Version: "test"}, nil
		})
	})
	unblock := sync.OnceFunc(func() { close(release) })
	t.Cleanup(unblock) // before the fixture's Close, which waits for the loop
	c, _, err := dial(t, f, "", token)
	if err != nil {
		t.Fatal(err)
	}
	readState(t, c)
	h.Publish(live.Change{Kind: live.KindLedger})
	select {
	case <-building:
	case <-time.After(10 * time.Second):
		t.Fatal("the change never led to a snapshot")
	}
	h.Publish(live.Change{Kind: live.KindLedger}) // fills the one slot
	h.Publish(live.Change{Kind: live.KindLedger}) // finds it full
	if _, dropped := h.Stats(); dropped != 1 {
		t.Fatalf("hub dropped %d subscribers, want the busy socket's 1", dropped)
	}
	unblock()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for { // the snapshot that was being built may still arrive before the close
		if _, _, err = c.ReadMessage(); err != nil {
			break
		}
	}
	var ce *websocket.CloseError
	if !asCloseError(err, &ce) || ce.Code != websocket.CloseTryAgainLater {
		t.Fatalf("read after drop: %v, want close 1013 (try again later)", err)
	}
}

func asCloseError(err error, target **websocket.CloseError) bool {
	ce, ok := err.(*websocket.CloseError)
	if ok {
		*target = ce
	}
	return ok
}

func TestCloseDisconnectsWebSockets(t *testing.T) {
	f := newFixture(t, nil)
	c, _, err := dial(t, f, "wails://wails", token)
	if err != nil {
		t.Fatal(err)
	}
	readState(t, c)
	done := make(chan struct{})
	go func() { f.h.Close(); close(done) }()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, _, err = c.ReadMessage()
	if !websocket.IsCloseError(err, websocket.CloseGoingAway) {
		t.Fatalf("read after Close: %v, want close 1001", err)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return")
	}
}

func TestAllowedOrigins(t *testing.T) {
	got := fmt.Sprint(admin.AllowedOrigins("localhost:8787", 8787))
	want := "[http://127.0.0.1:8787 http://localhost:8787 http://[::1]:8787 wails://wails]"
	if got != want {
		t.Fatalf("AllowedOrigins = %s, want %s", got, want)
	}
	if got := admin.AllowedOrigins("127.0.0.1:0", 4242); len(got) != 4 {
		t.Fatalf("port 0 config added an origin: %v", got)
	}
}

// logSink hands every log record's message to a channel, so a test waits on
// what the server logged instead of sleeping.
type logSink chan string

func (s logSink) Enabled(context.Context, slog.Level) bool      { return true }
func (s logSink) Handle(_ context.Context, r slog.Record) error { s <- r.Message; return nil }
func (s logSink) WithAttrs([]slog.Attr) slog.Handler            { return s }
func (s logSink) WithGroup(string) slog.Handler                 { return s }

// The page's {"type":"rendered"} is logged once per connection (the desktop
// smoke test waits for it); a malformed message neither counts nor closes
// the socket.
func TestWebSocketPageRendered(t *testing.T) {
	sink := make(logSink, 64)
	f := newFixture(t, func(o *admin.Options) { o.Logger = slog.New(sink) })
	c, _, err := dial(t, f, "wails://wails", token)
	if err != nil {
		t.Fatal(err)
	}
	readState(t, c)
	for _, m := range []string{`{not json`, `{"type":"rendered"}`, `{"type":"rendered"}`} {
		if err := c.WriteMessage(websocket.TextMessage, []byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	f.hub.Publish(live.Change{Kind: live.KindLedger})
	readState(t, c) // still open after the malformed message
	c.Close()
	var rendered int
	deadline := time.After(10 * time.Second)
	for done := false; !done; {
		select {
		case msg := <-sink:
			rendered += map[bool]int{true: 1}[msg == "admin ws page rendered the state"]
			done = strings.HasPrefix(msg, "admin ws disconnected") || strings.HasPrefix(msg, "admin ws closed")
		case <-deadline:
			t.Fatal("the server never logged the socket's end")
		}
	}
	if rendered != 1 {
		t.Fatalf("logged %d renders, want exactly 1", rendered)
	}
}

// A dashboard socket whose peer answers no ping is closed after Idle; one
// that reads (and so answers pings) stays open past several Idle periods.
func TestWebSocketIdlePeerClosed(t *testing.T) {
	sink := make(logSink, 256)
	const idle = 300 * time.Millisecond
	f := newFixture(t, func(o *admin.Options) { o.Logger = slog.New(sink); o.Idle = idle })

	reader, _, err := dial(t, f, "wails://wails", token)
	if err != nil {
		t.Fatal(err)
	}
	states := make(chan admin.State, 16)
	go func() { // a live page: reads everything, so gorilla answers the pings
		defer close(states)
		var cur admin.State
		for {
			var m admin.Message
			if err := reader.ReadJSON(&m); err != nil {
				return
			}
			if m.State != nil {
				cur = *m.State
			} else if m.Delta != nil {
				cur = cur.Apply(*m.Delta)
			}
			states <- cur
		}
	}()
	<-states

	// The server's idle clock starts during the handshake, before dial
	// returns, so the bound is measured from before the dial.
	start := time.Now()
	if _, _, err := dial(t, f, "wails://wails", token); err != nil { // never reads: no pong goes back
		t.Fatal(err)
	}
	deadline := time.After(10 * time.Second)
	for closed := false; !closed; {
		select {
		case msg := <-sink:
			closed = strings.HasPrefix(msg, "admin ws disconnected")
		case <-deadline:
			t.Fatal("the silent socket was never closed")
		}
	}
	if took := time.Since(start); took < idle {
		t.Fatalf("closed after %v, before the %v idle bound", took, idle)
	}
	// The reading page outlives several idle periods: what is tested here is
	// that nothing happens for a while, so this one wait is the property.
	time.Sleep(3 * idle)
	f.hub.Publish(live.Change{Kind: live.KindLedger})
	for {
		select {
		case s, ok := <-states:
			if !ok {
				t.Fatal("the reading page was closed too")
			}
			if s.Version == "test" {
				return
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no state reached the reading page")
		}
	}
}

// noTenants is the fixture's tenant settings: none, and nothing to change
// (the server's tests drive the real ones).
type noTenants struct{}

func (noTenants) Settings(context.Context) (admin.TenantSettings, error) {
	return admin.TenantSettings{}, nil
}
func (noTenants) Save(context.Context, admin.TenantPolicy) error {
	return ledger.Errorf(ledger.CodeInvalidRequest, "the fixture has no tenant settings")
}
func (noTenants) Rotate(context.Context, string) (string, error) {
	return "", ledger.Errorf(ledger.CodeInvalidRequest, "the fixture has no tenant settings")
}
func (noTenants) Discard(context.Context) error { return nil }
