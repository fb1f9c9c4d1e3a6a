package e2e_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/quotagate/quotagate/backend/audit"
	"github.com/quotagate/quotagate/backend/config"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/server"
	"github.com/quotagate/quotagate/backend/upstream/demo"
)

// guardedUpstream adds a quota-guarded model (manual balance) so that the
// admin quota routes are wired.
const guardedUpstream = `  - {name: demo, kind: demo, models: [demo-guarded], quota: {daily_cap: 2000000, timezone: UTC}}`

// heldRun admits a run through the gateway whose stream the upstream cuts,
// so it ends interrupted with its reserve held.
func (r *rig) heldRun() ledger.RunID {
	r.t.Helper()
	got := r.chat(r.keyA, chatBody("/demo kind=cut&after=1", true, 10))
	run := r.waitRun(got.runID())
	if run.Usage != ledger.UsageUnknown || run.HeldUnits == 0 {
		r.t.Fatalf("setup: want a held run, got %+v", run)
	}
	return run.ID
}

// TestReliabilityAdminCSRF is T25 on the assembled server: cross-site
// bodies a browser sends without a preflight (text/plain, form, multipart)
// get 415 before the body is parsed; a foreign Origin gets 403 even with
// application/json and the right token; every GET/HEAD/OPTIONS route writes
// nothing; no answer carries a wildcard or private-network CORS header.
func TestReliabilityAdminCSRF(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{extraUpstreams: guardedUpstream})
	id := string(r.heldRun())
	before := r.counts()

	noCORSWildcard := func(t *testing.T, what string, h http.Header) {
		t.Helper()
		if h.Get("Access-Control-Allow-Origin") == "*" || h.Get("Access-Control-Allow-Private-Network") != "" {
			t.Errorf("%s: CORS wildcard or private-network header: %v", what, h)
		}
	}
	bodyRoutes := []struct{ path, body string }{
		{"/admin/api/holds/" + id + "/reconcile", `{"units":0,"evidence":"cross-site page frees the hold"}`},
		{"/admin/api/quota/demo/demo-guarded/balance", `{"b0":5000000}`},
	}
	var mp bytes.Buffer
	fmt.Fprint(&mp, "--XYZ\r\nContent-Disposition: form-data; name=\"units\"\r\n\r\n0\r\n--XYZ--\r\n")
	for _, rt := range bodyRoutes {
		for _, tc := range []struct{ ct, body string }{
			{"text/plain", rt.body},
			{"text/plain;charset=UTF-8", rt.body},
			{"application/x-www-form-urlencoded", "units=0&evidence=csrf"},
			{"multipart/form-data; boundary=XYZ", mp.String()},
			{"", rt.body},
		} {
			got := r.do("POST", rt.path, canaryAdmin, tc.ct, tc.body)
			if got.status != http.StatusUnsupportedMediaType {
				t.Errorf("POST %s as %q: %d %s, want 415", rt.path, tc.ct, got.status, got.body)
			}
			noCORSWildcard(t, rt.path, got.header)
		}
	}
	postRoutes := []struct{ path, body string }{
		bodyRoutes[0], bodyRoutes[1],
		{"/admin/api/runs/" + id + "/cancel", ""},
		{"/admin/api/quota/demo/demo-guarded/sync", ""},
	}
	for _, rt := range postRoutes {
		for _, hdr := range [][]string{
			{"Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site"},
			{"Origin", "null"},
			{"Origin", "http://127.0.0.1:1"},
		} {
			got := r.do("POST", rt.path, canaryAdmin, "application/json", rt.body, hdr...)
			if got.status != http.StatusForbidden || got.header.Get("Access-Control-Allow-Origin") != "" {
				t.Errorf("POST %s with %v: %d ACAO %q, want 403 and none", rt.path, hdr, got.status, got.header.Get("Access-Control-Allow-Origin"))
			}
		}
		pre := r.do("OPTIONS", rt.path, "", "", "", "Origin", "https://evil.example", "Access-Control-Request-Method", "POST",
			"Access-Control-Request-Headers", "authorization,content-type")
		if pre.status != http.StatusForbidden || pre.header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("preflight %s from evil.example: %d ACAO %q", rt.path, pre.status, pre.header.Get("Access-Control-Allow-Origin"))
		}
	}
	if after := r.counts(); after != before {
		t.Fatalf("a refused cross-site request wrote to the ledger: before %+v after %+v", before, after)
	}

	// Safe methods on every route, with and without credentials: no writes.
	safe := []string{"/", "/healthz", "/metrics", "/admin/api/state", "/admin/api/audit.csv", "/admin/ws",
		"/admin/api/holds/" + id + "/reconcile", "/admin/api/runs/" + id + "/cancel",
		"/admin/api/quota/demo/demo-guarded/sync", "/admin/api/quota/demo/demo-guarded/balance",
		"/v1/models", "/v1/balance", "/v1/runs/" + id, "/v1/chat/completions"}
	for _, p := range safe {
		for _, m := range []string{"GET", "HEAD", "OPTIONS"} {
			for _, key := range []string{"", canaryAdmin, r.keyA} {
				got := r.do(m, p, key, "", "")
				noCORSWildcard(t, m+" "+p, got.header)
			}
		}
	}
	if after := r.counts(); after != before {
		t.Fatalf("a GET/HEAD/OPTIONS request wrote to the ledger: before %+v after %+v", before, after)
	}
	if run, err := r.s.Store().Run(context.Background(), ledger.RunID(id)); err != nil || run.HeldUnits == 0 {
		t.Fatalf("the hold moved: %+v %v", run, err)
	}
}

// TestReliabilityWebSocketOrigins is T24 (cross-site WebSocket hijacking)
// on the assembled server: foreign, null, file and other-port origins get
// 403 and never 101, even with the token; the dashboard's own origins and
// the Wails webview get 101 only with the token; and an inbound frame over
// the read limit (4 KiB, stricter than the plan's 64 KiB) closes the socket
// with 1009.
func TestReliabilityWebSocketOrigins(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{})
	p := r.port()
	dial := func(origins []string, token string, header bool) (int, *websocket.Conn) {
		h := http.Header{}
		for _, o := range origins {
			h.Add("Origin", o)
		}
		u := "ws://" + r.addr() + "/admin/ws"
		if token != "" && header {
			h.Set("Authorization", "Bearer "+token)
		} else if token != "" {
			u += "?token=" + url.QueryEscape(token)
		}
		// One frame per message (a bigger write buffer than the default
		// 4 KiB), so an oversize message arrives as one oversize frame.
		d := websocket.Dialer{WriteBufferSize: 16 << 10, HandshakeTimeout: 10 * time.Second}
		c, resp, err := d.Dial(u, h)
		if c != nil {
			return http.StatusSwitchingProtocols, c
		}
		if resp == nil {
			t.Fatalf("dial %v: %v", origins, err)
		}
		return resp.StatusCode, nil
	}
	for _, tc := range []struct {
		name    string
		origins []string
		token   string
		header  bool
		want    int
	}{
		{"Foreign", []string{"https://evil.example"}, canaryAdmin, false, 403},
		{"PrefixTrick", []string{"http://localhost.attacker.tld"}, canaryAdmin, false, 403},
		{"PrefixTrickWithPort", []string{"http://localhost:" + p + ".attacker.tld"}, canaryAdmin, false, 403},
		{"Null", []string{"null"}, canaryAdmin, false, 403},
		{"File", []string{"file://"}, canaryAdmin, false, 403},
		{"OtherPort", []string{"http://127.0.0.1:1"}, canaryAdmin, false, 403},
		{"HTTPSSameHost", []string{"https://127.0.0.1:" + p}, canaryAdmin, false, 403},
		{"TrailingDot", []string{"http://localhost.:" + p}, canaryAdmin, false, 403},
		{"TwoOrigins", []string{"wails://wails", "https://evil.example"}, canaryAdmin, false, 403},
		{"WailsNoToken", []string{"wails://wails"}, "", false, 401},
		{"WailsWrongToken", []string{"wails://wails"}, "wrong-token-0123456789", false, 401},
		{"NoOriginNoToken", nil, "", false, 401},
		{"Wails", []string{"wails://wails"}, canaryAdmin, false, 101},
		{"Served127", []string{"http://127.0.0.1:" + p}, canaryAdmin, false, 101},
		{"ServedLocalhost", []string{"http://localhost:" + p}, canaryAdmin, false, 101},
		{"NoOriginToken", nil, canaryAdmin, false, 101},
		{"NoOriginBearer", nil, canaryAdmin, true, 101},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, c := dial(tc.origins, tc.token, tc.header)
			if c != nil {
				defer c.Close()
				var m struct{ Type string }
				if err := c.ReadJSON(&m); err != nil || m.Type != "state" {
					t.Fatalf("first message %+v: %v", m, err)
				}
			}
			if got != tc.want {
				t.Fatalf("status %d, want %d", got, tc.want)
			}
		})
	}

	t.Run("OversizeFrameClosed1009", func(t *testing.T) {
		_, c := dial([]string{"wails://wails"}, canaryAdmin, false)
		if c == nil {
			t.Fatal("no connection")
		}
		defer c.Close()
		if err := c.WriteMessage(websocket.TextMessage, bytes.Repeat([]byte("x"), 4<<10+1)); err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		for {
			_, _, err := c.ReadMessage()
			if err == nil {
				continue // state snapshots sent before the close
			}
			var ce *websocket.CloseError
			if !errors.As(err, &ce) || ce.Code != websocket.CloseMessageTooBig {
				t.Fatalf("read after an oversize frame: %v, want close 1009", err)
			}
			return
		}
	})
}

// TestReliabilitySecretsStayOut is T26 and T27: with canary tenant keys, a
// canary provider key and a canary admin token, a session of good and bad
// calls, a cut stream, a refused upstream, a reconcile, the audit export,
// the state, the WebSocket and /metrics leave no full secret and no 12-byte
// piece of one in any response body or header, WebSocket frame, log line,
// CSV cell or file in the data dir; the provider never sees a tenant key;
// upstream response headers are not forwarded.
func TestReliabilitySecretsStayOut(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{})
	var seen bytes.Buffer // everything a client could read
	record := func(got reply) {
		seen.Write(got.body)
		for k, vs := range got.header {
			fmt.Fprintf(&seen, "%s: %s\n", k, strings.Join(vs, ","))
		}
	}
	wrong := canaryKeyA[:len(canaryKeyA)-1] + "X"
	for _, tc := range []struct {
		method, path, key, ct, body string
	}{
		{"POST", "/v1/chat/completions", r.keyA, "application/json", chatBody("hello", true, 16)},
		{"POST", "/v1/chat/completions", r.keyA, "application/json", chatBody("hello", false, 16)},
		{"POST", "/v1/chat/completions", r.keyB, "application/json", chatBody("hi", false, 16)},
		{"POST", "/v1/chat/completions", r.keyA, "application/json", chatBody("/demo kind=cut&after=1", true, 16)},
		{"POST", "/v1/chat/completions", r.keyA, "application/json", chatBody("/demo kind=error&status=401", false, 16)},
		{"POST", "/v1/chat/completions", wrong, "application/json", chatBody("hello", false, 16)},
		{"POST", "/v1/chat/completions", r.keyA, "application/json", `{"model":"demo-chat","api_key":"` + canaryUpstream + `","messages":[]}`},
		{"GET", "/v1/models?key=" + canaryKeyB, "", "", ""},
		{"GET", "/v1/balance", r.keyA, "", ""},
		{"GET", "/v1/runs/run_nope", r.keyA, "", ""},
		{"GET", "/admin/api/state", canaryAdmin[:len(canaryAdmin)-1], "", ""},
		{"GET", "/admin/api/state?token=" + canaryAdmin, "", "", ""},
		{"GET", "/admin/api/state", canaryAdmin, "", ""},
		{"GET", "/metrics", "", "", ""},
		{"GET", "/healthz", "", "", ""},
	} {
		got := r.do(tc.method, tc.path, tc.key, tc.ct, tc.body)
		record(got)
		if tc.path == "/v1/chat/completions" && got.header.Get("X-Demo") != "" {
			t.Errorf("the upstream's X-Demo response header reached the client")
		}
	}
	held := r.heldRun()
	record(r.admin("POST", "/admin/api/holds/"+string(held)+"/reconcile", `{"units":3,"evidence":"provider console: 3 units"}`))
	record(r.admin("GET", "/admin/api/audit.csv", ""))

	c, _, err := websocket.DefaultDialer.Dial("ws://"+r.addr()+"/admin/ws?token="+url.QueryEscape(canaryAdmin), http.Header{"Origin": {"wails://wails"}})
	if err != nil {
		t.Fatal(err)
	}
	_, frame, err := c.ReadMessage()
	if err != nil {
		t.Fatal(err)
	}
	seen.Write(frame)
	c.Close()

	for _, q := range r.demo.Stats().Requests {
		for k, vs := range q.Header {
			for _, v := range vs {
				for _, key := range []string{canaryKeyA, canaryKeyB, canaryAdmin} {
					if strings.Contains(v, key[len(key)-12:]) {
						t.Errorf("the provider received %s: %s, a tenant key or the admin token", k, v)
					}
				}
			}
		}
		if got := q.Header.Get("Authorization"); got != "Bearer "+canaryUpstream {
			t.Errorf("the provider got Authorization %q, want its own key", got)
		}
	}

	if err := r.s.Close(); err != nil { // checkpoint and close, then read the files
		t.Fatal(err)
	}
	artefacts := map[string][]byte{"client-visible": seen.Bytes(), "server log": []byte(r.logs.String())}
	err = filepath.Walk(r.dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		artefacts[path] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(artefacts) < 3 {
		t.Fatalf("found no ledger files in %s", r.dir)
	}
	for name, b := range artefacts {
		for _, secret := range []string{canaryKeyA, canaryKeyB, canaryUpstream, canaryAdmin} {
			// The full secret, and any 12-byte window of its random tail.
			tail := secret[strings.LastIndexByte(secret, '-')+1:]
			for i := 0; i+12 <= len(tail); i++ {
				if bytes.Contains(b, []byte(tail[i:i+12])) {
					t.Errorf("%s contains a piece of secret %.14s…: %q", name, secret, tail[i:i+12])
					break
				}
			}
		}
	}
}

// TestReliabilityAuditCSVInjection is T28 end to end: operator evidence
// beginning with a spreadsheet trigger, and upstream-controlled text that a
// tenant can steer into the audit trail, come out of GET audit.csv as RFC
// 4180 cells that encoding/csv reads back exactly, with a leading
// apostrophe only where the cell starts with = + - @ TAB CR or NUL; the
// columns the app generates are never prefixed; the download is an
// attachment.
func TestReliabilityAuditCSVInjection(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{})
	evidence := []string{
		`=HYPERLINK("http://x","click")`, "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1:A2)", "\tinvoice 7",
		"\rinvoice 8", "\x00nul first", `plain, with "quotes" and a comma`, "line one\r\nline two",
		"ok =1+1 later", strings.Repeat("long evidence ", 730),
	}
	type want struct {
		id       ledger.RunID
		evidence string // as the ledger stored it
	}
	var wants []want
	for _, ev := range evidence {
		id := r.heldRun()
		body := fmt.Sprintf(`{"units":1,"evidence":%s}`, strconv.Quote(ev))
		got := r.admin("POST", "/admin/api/holds/"+string(id)+"/reconcile", body)
		if got.status != 200 {
			if got.status == 400 {
				continue // refused evidence never reaches the export
			}
			t.Fatalf("reconcile with %q: %d %s", ev, got.status, got.body)
		}
		run, err := r.s.Store().Run(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		wants = append(wants, want{id, run.Evidence})
	}
	// Upstream-controlled text a tenant can steer in: a refused call's
	// evidence carries the provider's error message.
	payload := "=HYPERLINK(\"http://evil.example\"),\"x\"\r\n@y"
	refused := r.chat(r.keyA, chatBody("/demo kind=error&status=500&body="+url.QueryEscape(payload), false, 8))
	if refused.status != http.StatusBadGateway {
		t.Fatalf("refused upstream: %d %s", refused.status, refused.body)
	}
	run := r.waitRun(refused.runID())
	wants = append(wants, want{run.ID, run.Evidence})

	got := r.admin("GET", "/admin/api/audit.csv", "")
	if got.status != 200 || !strings.HasPrefix(got.header.Get("Content-Disposition"), "attachment") {
		t.Fatalf("audit.csv: %d, Content-Disposition %q", got.status, got.header.Get("Content-Disposition"))
	}
	if _, err := csv.NewReader(bytes.NewReader(got.body)).ReadAll(); err != nil {
		t.Fatalf("the export is not RFC 4180 CSV: %v", err)
	}
	rows, err := audit.ParseCSV(string(got.body)) // every cell exactly as written
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	cells := map[ledger.RunID]string{} // run → evidence cell of its last row
	for _, row := range rows[1:] {
		for _, c := range []string{"seq", "units", "available_before", "available_after"} {
			if _, err := strconv.ParseInt(row[col[c]], 10, 64); err != nil {
				t.Errorf("generated column %s = %q is not a plain integer", c, row[col[c]])
			}
		}
		if _, err := time.Parse(time.RFC3339Nano, row[col["at"]]); err != nil {
			t.Errorf("at = %q: %v", row[col["at"]], err)
		}
		for _, c := range row {
			if c != "" && strings.ContainsRune("=+-@\t\r\x00", rune(c[0])) {
				t.Errorf("cell %q starts with a formula trigger", c)
			}
		}
		if row[col["kind"]] == string(ledger.AuditReconcile) || row[col["kind"]] == string(ledger.AuditRelease) {
			cells[ledger.RunID(row[col["run"]])] = row[col["evidence"]]
		}
	}
	if len(wants) < len(evidence)-2 {
		t.Fatalf("only %d of %d evidence strings were accepted", len(wants)-1, len(evidence))
	}
	for _, w := range wants {
		// The text round-trips exactly, a lone CR included (an accountant
		// compares it with the bill); a
		// formula trigger only gains the neutralising apostrophe.
		if exp := w.evidence; audit.Unneutralise(cells[w.id]) != exp {
			t.Errorf("run %s evidence cell %q, want %q", w.id, cells[w.id], exp)
		}
	}
}

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestReliabilityIssuedKeysNotStored is T26's grep with 100 issued keys:
// quotagate generates a key for each of 100 keyless tenants; each key is
// used once; the ledger files (db, WAL, SHM), the server log, the audit
// export and the admin state hold no key and no 12-byte piece of one. The
// keys live only in keys/<tenant>.key (mode 0600), which is how a key
// printed at first start stays valid.
func TestReliabilityIssuedKeysNotStored(t *testing.T) {
	t.Parallel()
	d, err := demo.Start(demo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	var y strings.Builder
	fmt.Fprintf(&y, "meter: utf8-bytes-v1\nadmin_token: %q\ntenants:\n", canaryAdmin)
	for i := range 100 {
		fmt.Fprintf(&y, "  - {id: t%03d, budget_units: 100000, max_concurrent: 2}\n", i)
	}
	fmt.Fprintf(&y, "upstreams:\n  - {name: up, kind: openai, base_url: %q, models: [demo-chat], max_concurrent: 16}\n", d.URL())
	cfg, err := config.Parse([]byte(y.String()), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	logs := &syncBuffer{}
	s, err := server.Open(context.Background(), server.Options{Config: cfg, DataDir: dir, Addr: "127.0.0.1:0",
		Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	r := &rig{t: t, s: s, demo: d, cfg: cfg, dir: dir, logs: logs}
	keys := s.GeneratedKeys()
	if len(keys) != 100 {
		t.Fatalf("%d keys generated, want 100", len(keys))
	}
	var seen bytes.Buffer
	for tenant, key := range keys {
		if got := r.chat(key, chatBody("hello "+tenant, false, 8)); got.status != 200 {
			t.Fatalf("tenant %s: %d %s", tenant, got.status, got.body)
		} else {
			seen.Write(got.body)
		}
		seen.Write(r.chat(key[:len(key)-1]+"!", chatBody("wrong key", false, 8)).body)
	}
	seen.Write(r.admin("GET", "/admin/api/audit.csv", "").body)
	seen.Write(r.admin("GET", "/admin/api/state", "").body)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	artefacts := map[string][]byte{"responses, export and state": seen.Bytes(), "server log": []byte(logs.String())}
	for _, f := range []string{server.LedgerFile, server.LedgerFile + "-wal", server.LedgerFile + "-shm"} {
		if b, err := os.ReadFile(filepath.Join(dir, f)); err == nil {
			artefacts[f] = b
		}
	}
	if _, ok := artefacts[server.LedgerFile]; !ok {
		t.Fatal("no ledger file")
	}
	for tenant, key := range keys {
		tail, ok := strings.CutPrefix(key, "sk-qg-"+tenant+"-") // the visible prefix and id, then the secret
		if !ok || len(tail) < 43 {
			t.Fatalf("key %.10s…: random part of %d characters, want ≥ 32 random bytes", key, len(tail))
		}
		for name, b := range artefacts {
			for i := 0; i+12 <= len(tail); i += 4 {
				if bytes.Contains(b, []byte(tail[i:i+12])) {
					t.Errorf("%s contains a piece of %s's key", name, tenant)
					break
				}
			}
		}
		kf := filepath.Join(dir, "keys", tenant+".key")
		fi, err := os.Stat(kf)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("keys/%s.key: %v; want mode 0600", tenant, err)
		}
		// Positive control: the same grep finds the key where it is meant to be.
		if b, _ := os.ReadFile(kf); !bytes.Contains(b, []byte(tail[:12])) {
			t.Errorf("keys/%s.key does not hold the key: the grep proves nothing", tenant)
		}
	}
}
