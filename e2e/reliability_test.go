package e2e_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/config"
	"github.com/quotagate/quotagate/backend/ledger"
)

// TestReliabilityBadInputReservesNothing is RELIABILITY T30 (body limit) and
// T31 (malformed input), plus the request side of T29 and DESIGN's
// forbidden client fields: each bad request gets a 4xx in the OpenAI error
// shape, within a second, with no run id, no ledger write and no call to
// the provider.
func TestReliabilityBadInputReservesNothing(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{})
	const msgs = `"messages":[{"role":"user","content":"hi"}]`
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for _, tc := range []struct {
		name   string
		ct     string
		body   string
		status int
		code   string
	}{
		{"OversizeBody", "application/json", `{"model":"demo-chat",` + msgs + `,"pad":"` + strings.Repeat("x", requestBytesMax) + `"}`, 413, "request_too_large"},
		{"MalformedJSON", "application/json", `{"model":"demo-chat",`, 400, "invalid_request"},
		{"EmptyBody", "application/json", ``, 400, "invalid_request"},
		{"NotAnObject", "application/json", `["demo-chat"]`, 400, "invalid_request"},
		{"TrailingGarbage", "application/json", `{"model":"demo-chat",` + msgs + `} x`, 400, "invalid_request"},
		{"InvalidUTF8", "application/json", "{\"model\":\"demo-chat\",\"messages\":[{\"role\":\"user\",\"content\":\"\xff\xfe\"}]}", 400, "invalid_request"},
		{"DuplicateKey", "application/json", `{"model":"demo-chat",` + msgs + `,"max_tokens":1,"max_tokens":100000}`, 400, "invalid_request"},
		{"NestingDepth10001", "application/json", `{"model":"demo-chat",` + msgs + `,"metadata":` + deep(10001) + `}`, 400, "invalid_request"},
		{"MaxTokensString", "application/json", `{"model":"demo-chat",` + msgs + `,"max_tokens":"10"}`, 400, "invalid_request"},
		{"MaxTokensNegative", "application/json", `{"model":"demo-chat",` + msgs + `,"max_tokens":-1}`, 400, "invalid_request"},
		{"MaxTokens1e309", "application/json", `{"model":"demo-chat",` + msgs + `,"max_tokens":1e309}`, 400, "invalid_request"},
		{"MaxTokens2pow63", "application/json", `{"model":"demo-chat",` + msgs + `,"max_tokens":9223372036854775808}`, 400, "invalid_request"},
		{"MaxTokensBeyondBudget", "application/json", `{"model":"demo-chat",` + msgs + `,"max_tokens":9223372036854775807}`, 400, "invalid_request"},
		{"UnknownModel", "application/json", `{"model":"gpt-nope",` + msgs + `}`, 404, "model_not_found"},
		{"MissingMessages", "application/json", `{"model":"demo-chat"}`, 400, "invalid_request"},
		{"ClientUsage", "application/json", `{"model":"demo-chat",` + msgs + `,"usage":{"prompt_tokens":0,"completion_tokens":0}}`, 400, "invalid_request"},
		{"ClientTenant", "application/json", `{"model":"demo-chat",` + msgs + `,"tenant":"b"}`, 400, "invalid_request"},
		{"ClientTenantID", "application/json", `{"model":"demo-chat",` + msgs + `,"tenant_id":"b"}`, 400, "invalid_request"},
		{"ClientAPIBase", "application/json", `{"model":"demo-chat",` + msgs + `,"api_base":"http://169.254.169.254"}`, 400, "invalid_request"},
		{"ClientBaseURL", "application/json", `{"model":"demo-chat",` + msgs + `,"base_url":"http://127.0.0.1:1"}`, 400, "invalid_request"},
		{"ClientAPIKey", "application/json", `{"model":"demo-chat",` + msgs + `,"api_key":"sk-other"}`, 400, "invalid_request"},
		{"ClientExtraHeaders", "application/json", `{"model":"demo-chat",` + msgs + `,"extra_headers":{"Authorization":"Bearer x"}}`, 400, "invalid_request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := r.counts()
			start := time.Now()
			got := r.do("POST", "/v1/chat/completions", r.keyA, tc.ct, tc.body)
			if took := time.Since(start); took > time.Second {
				t.Errorf("answered after %v, want within 1s", took)
			}
			if got.status != tc.status || got.errorCode() != tc.code {
				t.Fatalf("got %d %s, want %d %s", got.status, got.body, tc.status, tc.code)
			}
			var shape struct {
				Error map[string]json.RawMessage `json:"error"`
			}
			if err := json.Unmarshal(got.body, &shape); err != nil {
				t.Fatalf("body is not JSON: %v %q", err, got.body)
			}
			for _, k := range []string{"message", "type", "code", "param"} {
				if _, ok := shape.Error[k]; !ok {
					t.Errorf("error.%s missing from %s", k, got.body)
				}
			}
			if id := got.runID(); id != "" {
				t.Errorf("refused request got run id %s", id)
			}
			if after := r.counts(); after != before {
				t.Errorf("ledger changed: before %+v after %+v", before, after)
			}
		})
	}
	if n := r.demo.Stats().Received; n != 0 {
		t.Errorf("the provider received %d requests; bad input must never leave the gateway", n)
	}

	// Headers over the server's MaxHeaderBytes: 431, before any handler.
	t.Run("OversizeHeaders", func(t *testing.T) {
		before := r.counts()
		got := r.do("POST", "/v1/chat/completions", r.keyA, "application/json", chatBody("hi", false, 1),
			"X-Pad", strings.Repeat("p", 1<<20))
		if got.status != http.StatusRequestHeaderFieldsTooLarge {
			t.Fatalf("status %d, want 431", got.status)
		}
		if after := r.counts(); after != before {
			t.Errorf("ledger changed: before %+v after %+v", before, after)
		}
	})
}

// TestReliabilityForeignHostWritesNothing completes T23's "403 before auth,
// before body parsing and before any ledger write": a request that would
// otherwise be admitted (right key, valid body) and an admin reconcile with
// the right token are refused for a rebound Host, and nothing moves.
func TestReliabilityForeignHostWritesNothing(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{})
	held := r.chat(r.keyA, chatBody("/demo kind=cut&after=1", true, 10))
	id := held.runID()
	if run := r.waitRun(id); run.HeldUnits == 0 {
		t.Fatalf("setup: want a held run, got %+v", run)
	}
	received := r.demo.Stats().Received
	before := r.counts()
	for _, host := range []string{"evil.example", "evil.example:" + r.port(), "127.0.0.1.nip.io:" + r.port(), "foo.local:" + r.port(), "LOCALHOST:" + r.port()} {
		for _, tc := range []struct{ method, path, key, body string }{
			{"POST", "/v1/chat/completions", r.keyA, chatBody("hello", false, 5)},
			{"POST", "/admin/api/holds/" + string(id) + "/reconcile", canaryAdmin, `{"units":0,"evidence":"rebound page"}`},
			{"POST", "/admin/api/runs/" + string(id) + "/cancel", canaryAdmin, ``},
		} {
			got := r.do(tc.method, tc.path, tc.key, "application/json", tc.body, "Host", host)
			if got.status != http.StatusForbidden {
				t.Errorf("Host %q %s %s: %d, want 403", host, tc.method, tc.path, got.status)
			}
		}
	}
	if after := r.counts(); after != before {
		t.Errorf("ledger changed: before %+v after %+v", before, after)
	}
	if n := r.demo.Stats().Received; n != received {
		t.Errorf("the provider received %d new requests through a rebound Host", n-received)
	}
}

// TestReliabilityLoopbackOnly is T22's "a connection to the machine's LAN IP
// on the port is refused": the server listens on 127.0.0.1 only.
func TestReliabilityLoopbackOnly(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{})
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	tried := 0
	for _, a := range addrs {
		ipn, ok := a.(*net.IPNet)
		if !ok || ipn.IP.IsLoopback() || ipn.IP.IsLinkLocalUnicast() {
			continue
		}
		tried++
		c, err := net.DialTimeout("tcp", net.JoinHostPort(ipn.IP.String(), r.port()), 2*time.Second)
		if err == nil {
			c.Close()
			t.Errorf("connected to %s on the gateway's port; want refused", ipn.IP)
		}
	}
	if tried == 0 {
		t.Skip("no non-loopback interface address on this machine")
	}
}

// TestReliabilityRoutesNeedAuth is T10 from outside: every /v1 and admin
// route refuses a caller without a key; a tenant key opens no admin route
// (a tenant cannot raise its own budget); another tenant's run is not found
// and keeps going.
func TestReliabilityRoutesNeedAuth(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{})
	own := r.chat(r.keyA, chatBody("/demo kind=cut&after=1", true, 10)).runID()
	r.waitRun(own)
	before := r.counts()
	for _, tc := range []struct {
		method, path, key, body string
		want                    int
	}{
		{"POST", "/v1/chat/completions", "", chatBody("hi", false, 5), 401},
		{"POST", "/v1/chat/completions", "sk-not-a-key-at-all", chatBody("hi", false, 5), 401},
		{"GET", "/v1/models", "", "", 401},
		{"GET", "/v1/balance", "", "", 401},
		{"GET", "/v1/runs/" + string(own), "", "", 401},
		{"DELETE", "/v1/runs/" + string(own), "", "", 401},
		{"GET", "/v1/runs/" + string(own), r.keyB, "", 404},
		{"DELETE", "/v1/runs/" + string(own), r.keyB, "", 404},
		{"GET", "/admin/api/state", r.keyA, "", 401},
		{"POST", "/admin/api/holds/" + string(own) + "/reconcile", r.keyA, `{"units":0,"evidence":"tenant tries to free its own hold"}`, 401},
		{"POST", "/admin/api/runs/" + string(own) + "/cancel", r.keyA, "", 401},
		{"GET", "/admin/api/audit.csv", r.keyA, "", 401},
		{"GET", "/admin/api/state", "", "", 401},
	} {
		got := r.do(tc.method, tc.path, tc.key, "application/json", tc.body)
		if got.status != tc.want {
			t.Errorf("%s %s with key %.12q: %d, want %d (%s)", tc.method, tc.path, tc.key, got.status, tc.want, got.body)
		}
	}
	if after := r.counts(); after != before {
		t.Errorf("ledger changed: before %+v after %+v", before, after)
	}
}

// TestReliabilitySlowlorisCut is T30's slowloris row: a connection that
// sends its headers one byte at a time is closed at ReadHeaderTimeout (10 s)
// while a legitimate request is still served.
func TestReliabilitySlowlorisCut(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("waits the 10 s ReadHeaderTimeout")
	}
	r := newRig(t, rigOptions{})
	c, err := net.Dial("tcp", r.addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	if _, err := fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nX-Slow: ", r.port()); err != nil {
		t.Fatal(err)
	}
	closed := make(chan time.Duration, 1)
	go func() {
		// One byte now and then, never finishing the header block; the
		// read below ends when the server closes the connection.
		done := make(chan struct{})
		go func() {
			defer close(done)
			tick := time.NewTicker(500 * time.Millisecond)
			defer tick.Stop()
			for range tick.C {
				if _, err := c.Write([]byte("a")); err != nil {
					return
				}
			}
		}()
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err == nil {
			resp.Body.Close()
		}
		closed <- time.Since(start)
		c.Close()
		<-done
	}()
	if got := r.do("GET", "/healthz", "", "", ""); got.status != 200 {
		t.Errorf("legitimate request during the attack: %d", got.status)
	}
	select {
	case d := <-closed:
		if d < 9*time.Second || d > 12*time.Second {
			t.Fatalf("slow connection closed after %v, want 10 s ± 1 s", d)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("slow connection still open after 20 s")
	}
}

// TestReliabilityVerifyAfterLoad is T01 and T06 end to end: tenant b has a
// budget of 1,000 and 30 clients, released together, each reserving 102
// (16 input bytes + max_tokens 86) on a stalled upstream: exactly 9 are
// admitted (918 held), 21 are refused 402 insufficient_budget, the provider
// sees exactly 9 requests, and after they are cancelled and a mixed load has
// run on tenant a, the ledger verifies and the admin state matches sums
// recomputed from the runs.
func TestReliabilityVerifyAfterLoad(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{upstreamTimeout: "60s"})
	const clients = 30
	stall := chatBody("/demo kind=stall", true, 86) // "/demo kind=stall" is 16 bytes: reserve 102
	type res struct {
		status int
		code   string
		id     ledger.RunID
		resp   *http.Response
	}
	results := make(chan res, clients)
	start := make(chan struct{}) // released together
	for range clients {
		go func() {
			<-start
			req, _ := http.NewRequest("POST", r.s.URL()+"/v1/chat/completions", strings.NewReader(stall))
			req.Header.Set("Authorization", "Bearer "+r.keyB)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				results <- res{status: -1, code: err.Error()}
				return
			}
			out := res{status: resp.StatusCode, id: ledger.RunID(resp.Header.Get("X-Run-Id")), resp: resp}
			if resp.StatusCode != 200 {
				var e struct{ Error struct{ Code string } }
				json.NewDecoder(resp.Body).Decode(&e)
				resp.Body.Close()
				out.code, out.resp = e.Error.Code, nil
			}
			results <- out
		}()
	}
	close(start)
	var admitted []res
	refused := 0
	for range clients {
		x := <-results
		switch {
		case x.status == 200:
			admitted = append(admitted, x)
		case x.status == http.StatusPaymentRequired && x.code == "insufficient_budget":
			refused++
		default:
			t.Errorf("unexpected answer %d %s", x.status, x.code)
		}
	}
	if len(admitted) != 9 || refused != 21 {
		t.Fatalf("admitted %d, refused %d; want 9 and 21", len(admitted), refused)
	}
	if b := r.balance("b"); b.HeldUnits != 918 || b.AvailableUnits != 82 || b.SpentUnits != 0 {
		t.Fatalf("tenant b = %+v, want 918 held, 82 available", b)
	}
	ctx := ctxTimeout(t, 10*time.Second)
	if err := r.demo.WaitRequests(ctx, 9); err != nil {
		t.Fatal(err)
	}
	if n := r.demo.Stats().Received; n != 9 {
		t.Fatalf("provider received %d requests, want exactly the 9 admitted", n)
	}
	for _, x := range admitted { // the owner cancels: holds kept, upstream closed
		if got := r.do("DELETE", "/v1/runs/"+string(x.id), r.keyB, "", ""); got.status != http.StatusAccepted {
			t.Errorf("cancel %s: %d %s", x.id, got.status, got.body)
		}
		x.resp.Body.Close()
	}
	if err := r.demo.WaitDisconnects(ctx, 9); err != nil {
		t.Fatal(err)
	}

	// A mixed load on tenant a: settled, cut, no usage, refused upstream,
	// streaming and not, at once.
	plans := []string{"hello", "/demo kind=cut&after=2", "/demo kind=no-usage", "/demo kind=error&status=500",
		"/demo kind=false-usage", "/demo kind=usage-text"}
	type loaded struct {
		id     ledger.RunID
		status int
		err    error
	}
	done := make(chan loaded, 48)
	for i := range 48 {
		go func() {
			body := chatBody(plans[i%len(plans)], i%2 == 0, 32)
			req, _ := http.NewRequest("POST", r.s.URL()+"/v1/chat/completions", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+r.keyA)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				done <- loaded{err: err}
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			done <- loaded{id: ledger.RunID(resp.Header.Get("X-Run-Id")), status: resp.StatusCode}
		}()
	}
	for range 48 {
		x := <-done
		if x.err != nil || x.id == "" {
			t.Fatalf("load request: %v (status %d, no run id)", x.err, x.status)
		}
		r.waitRun(x.id)
	}
	for _, x := range admitted {
		r.waitRun(x.id)
	}
	r.verify()

	// The admin state equals sums recomputed from the runs.
	var st struct {
		Tenants []struct {
			Tenant    string `json:"tenant"`
			Budget    int64  `json:"budget_units"`
			Spent     int64  `json:"spent_units"`
			Held      int64  `json:"held_units"`
			Available int64  `json:"available_units"`
			Active    int    `json:"active"`
		} `json:"tenants"`
	}
	if got := r.admin("GET", "/admin/api/state", ""); got.status != 200 || json.Unmarshal(got.body, &st) != nil {
		t.Fatalf("state: %d %s", got.status, got.body)
	}
	for _, tn := range st.Tenants {
		runs, err := r.s.Store().Runs(context.Background(), ledger.RunFilter{TenantID: tn.Tenant, Limit: 1_000_000})
		if err != nil {
			t.Fatal(err)
		}
		var spent, held int64
		for _, run := range runs {
			spent += int64(run.SpentUnits)
			held += int64(run.HeldUnits)
			if run.SpentUnits < 0 || run.HeldUnits < 0 || run.SpentUnits > run.ReserveUnits {
				t.Errorf("run %+v out of bounds", run)
			}
		}
		if tn.Spent != spent || tn.Held != held || tn.Available != tn.Budget-spent-held || tn.Available < 0 || tn.Active != 0 {
			t.Errorf("tenant %s state %+v; runs sum to spent %d held %d", tn.Tenant, tn, spent, held)
		}
	}
}

// TestReliabilityReserveSizing is T08 on the assembled server: the reserve
// a call holds follows the configured policy — input + max_tokens (seed
// 000: "hi" + 100 = 102), the default output cap when none is given, the
// larger of two caps, × n, image units per image, and the reasoning floor
// (seed 002: 18 + max(16, 4096) = 4,114). No call reserves "all the
// remaining headroom".
func TestReliabilityReserveSizing(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{extraUpstreams: `  - {name: reason, kind: demo, models: [demo-reasoner], reasoning_models: [demo-reasoner]}`})
	const hi = `"messages":[{"role":"user","content":"hi"}]`
	for _, tc := range []struct {
		name string
		body string
		want int64
	}{
		{"Seed000Cap100", `{"model":"demo-chat","max_tokens":100,` + hi + `}`, 102},
		{"NoCapDefaultOutput", `{"model":"demo-chat",` + hi + `}`, 2 + 4096},
		{"LargerOfTwoCaps", `{"model":"demo-chat","max_tokens":5,"max_completion_tokens":7,` + hi + `}`, 9},
		{"TimesN", `{"model":"demo-chat","max_tokens":10,"n":3,` + hi + `}`, 2 + 30},
		{"ImageUnits", `{"model":"demo-chat","max_tokens":10,"messages":[{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image_url","image_url":{"url":"https://example.invalid/a.png"}}]}]}`, 2 + 1024 + 10},
		{"Seed002ReasoningFloor", `{"model":"demo-reasoner","max_tokens":16,"messages":[{"role":"user","content":"abcdefghijklmnopqr"}]}`, 18 + 4096},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := r.chat(r.keyA, tc.body)
			if got.status != 200 {
				t.Fatalf("%d %s", got.status, got.body)
			}
			run := r.waitRun(got.runID())
			if int64(run.ReserveUnits) != tc.want {
				t.Fatalf("reserve %d, want %d", run.ReserveUnits, tc.want)
			}
		})
	}
	if b := r.balance("a"); b.HeldUnits < 0 || b.AvailableUnits < b.BudgetUnits-10_000 {
		t.Fatalf("balance after six small calls %+v: a call held far more than its reserve", b)
	}
	r.verify()
}

// TestReliabilityConfigEditsLoseNoSettlement is T07 (new-api
// GHSA-j6gc-4893-qwmp): 200 config applies — tenant a's budget and tenant
// b's limits rewritten each time — race 100 settling calls of tenant a.
// Afterwards no settlement is lost (a's spent is the sum of its runs, the
// ledger verifies) and the budget is the last one applied.
func TestReliabilityConfigEditsLoseNoSettlement(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{})
	const calls, edits = 100, 200
	var startSeq int64 // the last audit row before the race
	if pre, err := r.s.Store().Audit(context.Background(), ledger.AuditFilter{Limit: 1_000_000}); err == nil && len(pre) > 0 {
		startSeq = pre[len(pre)-1].Seq
	}
	var wg sync.WaitGroup
	ids := make(chan string, calls)
	for i := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got := r.chat(r.keyA, chatBody("hello", i%2 == 0, 16))
			if got.status != 200 {
				t.Errorf("call %d: %d %s", i, got.status, got.body)
				return
			}
			ids <- got.header.Get("X-Run-Id")
		}()
	}
	var lastBudget ledger.Units
	for k := range edits {
		ts := append([]config.Tenant(nil), r.cfg.Tenants...)
		ts[0].BudgetUnits = 100_000_000 + ledger.Units(k)
		ts[1].MaxConcurrent = 1 + k%5
		ts[1].RateLimits.PerHour = 100 + k
		if err := r.s.ApplyTenants(context.Background(), ts); err != nil {
			t.Fatalf("apply %d: %v", k, err)
		}
		lastBudget = ts[0].BudgetUnits
	}
	wg.Wait()
	close(ids)
	n := 0
	for id := range ids {
		if run := r.waitRun(ledger.RunID(id)); run.Usage != ledger.UsageTrusted {
			t.Errorf("run %s not settled: %+v", id, run)
		}
		n++
	}
	if n != calls {
		t.Fatalf("%d of %d calls settled", n, calls)
	}
	r.verify()
	runs, err := r.s.Store().Runs(context.Background(), ledger.RunFilter{TenantID: "a", Limit: 1_000_000})
	if err != nil {
		t.Fatal(err)
	}
	var spent ledger.Units
	for _, run := range runs {
		spent += run.SpentUnits
	}
	if b := r.balance("a"); b.SpentUnits != spent || b.BudgetUnits != lastBudget || b.HeldUnits != 0 {
		t.Fatalf("tenant a %+v; runs spent %d, last budget %d", b, spent, lastBudget)
	}
	// The race happened: settlements committed between the first and the
	// last config change.
	trail, err := r.s.Store().Audit(context.Background(), ledger.AuditFilter{Limit: 1_000_000})
	if err != nil {
		t.Fatal(err)
	}
	var first, last int64
	for _, e := range trail {
		if e.Kind == ledger.AuditConfig && e.Seq > startSeq {
			if first == 0 {
				first = e.Seq
			}
			last = e.Seq
		}
	}
	interleaved := 0
	for _, e := range trail {
		if e.Kind == ledger.AuditSettle && e.Seq > first && e.Seq < last {
			interleaved++
		}
	}
	if interleaved == 0 {
		t.Fatalf("no settlement landed between the config changes (seq %d..%d): the test raced nothing", first, last)
	}
	t.Logf("%d of %d settlements landed between config changes", interleaved, calls)
}
