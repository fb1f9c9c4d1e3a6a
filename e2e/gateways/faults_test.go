package gateways_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/postgres"
	"github.com/quotagate/quotagate/backend/postgres/pgtest"
	"github.com/quotagate/quotagate/backend/upstream/demo"
)

// The shared ledger under faults: the database restarted under three
// gateways, and one gateway cut off from it (a TCP proxy between them) for
// longer, then for shorter, than its lease. Short versions run in make
// test; make soak (QUOTAGATE_LONG=1) keeps the database away longer and
// relays more streams.

// long says make soak runs the test.
func long() bool { return os.Getenv("QUOTAGATE_LONG") == "1" }

// slowStream is a streaming call the demo answers in chunks over about
// chunks × delay, then with usage.
func slowStream(chunks int, delay time.Duration) string {
	return chatBody(fmt.Sprintf("/demo kind=slow&delay=%s&chunks=%d", delay, chunks), 40)
}

// TestLedgerRestart: three gateways under steady traffic with streams in
// flight; the database is stopped (fast: every session ended) and started
// again. Meanwhile calls are refused 503 ledger_unavailable with
// Retry-After — never 500 — and the streams keep relaying; afterwards every
// in-flight stream's end is recorded once, no run stays open, verify is
// clean and the books match the runs.
func TestLedgerRestart(t *testing.T) {
	down, streams := 1500*time.Millisecond, 3
	if long() {
		down, streams = 8*time.Second, 12
	}
	srv := pgtest.Shared(t)
	dsn := pgtest.NewDatabase(t)
	d := startDemo(t)
	t.Setenv(envLease, "30s") // a restart is no gateway's death
	gws := startGateways(t, 3, dsn, d.URL())
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	st := openStore(ctx, t, dsn)

	var inflight []answer
	for i := range streams {
		a := post(ctx, gws[i%3], keyA, slowStream(10, down/4+150*time.Millisecond))
		if a.status != http.StatusOK {
			t.Fatalf("stream on %s: %d %s", gws[i%3].name, a.status, a.code)
		}
		inflight = append(inflight, a)
	}
	doneStreams := readAll(inflight)
	traffic := startTraffic(ctx, gws)
	time.Sleep(300 * time.Millisecond) // steady traffic before the restart
	restarted := time.Now()
	if err := srv.Restart(down); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	time.Sleep(time.Second) // steady traffic after it
	tally := traffic.stop()
	t.Logf("database down %v (stop + %v + start): calls answered %v", back.Sub(restarted).Round(time.Millisecond), down, tally.byStatus)
	if tally.byStatus["503 ledger_unavailable"] == 0 {
		t.Error("no call was refused 503 ledger_unavailable while the database was down")
	}
	for k := range tally.byStatus {
		if k != "200 [DONE]" && k != "200 ledger error event" && k != "503 ledger_unavailable" {
			t.Errorf("a call was answered %s (want 200 to its end, or 503 ledger_unavailable during the outage)", k)
		}
	}
	if tally.noRetryAfter > 0 {
		t.Errorf("%d refusals 503 without Retry-After", tally.noRetryAfter)
	}
	ends := map[string]int{}
	for i, end := range <-doneStreams {
		ends[end]++
		if end == "EOF" {
			t.Errorf("in-flight stream %s ended with neither [DONE] nor an error event", inflight[i].runID)
		}
	}
	t.Logf("in-flight streams ended: %v", ends)
	ids := runIDs(inflight)
	last := waitEnded(ctx, t, st, ids)
	t.Logf("the in-flight streams' ends were all recorded %v after the database was back", last.Sub(back).Round(time.Millisecond))
	for _, id := range ids {
		if ends := endRows(ctx, t, st, id); ends != 1 {
			t.Errorf("run %s has %d end rows, want 1", id, ends)
		}
	}
	checkSettled(ctx, t, st, append(ids, tally.admitted...))
	checkLedger(ctx, t, st, dsn)
}

// TestCutPastLease: gateway gw-0 reaches the database through a TCP proxy,
// which is cut while gw-0 relays streams, for longer than lease_expiry.
// The others end gw-0's runs interrupted (holds kept); gw-0 relays the
// streams to their end; when the proxy is restored gw-0's ends are refused
// by its lapsed lease epoch and kept as late_end evidence: each run ends
// once, the tenant holds each reserve and has spent nothing on them, and
// verify is clean. gw-0 then admits again under a fresh lease, and the
// runs it admits are its own (nobody ends them).
func TestCutPastLease(t *testing.T) {
	cut, streams := 3500*time.Millisecond, 3
	if long() {
		cut, streams = 12*time.Second, 9
	}
	runCut(t, cut, streams, true)
}

// TestCutWithinLease: the same cut, shorter than lease_expiry: nobody ends
// gw-0's runs, and they settle on their own usage once the proxy is back;
// a cancel sent on gw-1 during the cut reaches gw-0 once it listens again.
func TestCutWithinLease(t *testing.T) {
	cut, streams := 800*time.Millisecond, 3
	if long() {
		cut, streams = 1500*time.Millisecond, 9
	}
	runCut(t, cut, streams, false)
}

func runCut(t *testing.T, cut time.Duration, streams int, pastLease bool) {
	srv := pgtest.Shared(t)
	dsn := pgtest.NewDatabase(t)
	proxy := startProxy(t, net.JoinHostPort(srv.Host, fmt.Sprint(srv.Port)))
	d := startDemo(t)
	t.Setenv(envLease, "2s")
	gw0, err := startGateway(t, "gw-0", proxy.dsn(t, dsn), d.URL())
	if err != nil {
		t.Fatal(err)
	}
	var others []*gateway
	for _, name := range []string{"gw-1", "gw-2"} { // the others, straight to the database
		gw, err := startGateway(t, name, dsn, d.URL())
		if err != nil {
			t.Fatal(err)
		}
		others = append(others, gw)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	st := openStore(ctx, t, dsn)
	before := balanceOf(ctx, t, st, "a")

	var inflight []answer
	var reserve ledger.Units
	for range streams {
		a := post(ctx, gw0, keyA, slowStream(12, (cut+2*time.Second)/12))
		if a.status != http.StatusOK {
			t.Fatalf("stream on gw-0: %d %s", a.status, a.code)
		}
		inflight = append(inflight, a)
		run, _ := st.Run(ctx, ledger.RunID(a.runID))
		reserve += run.ReserveUnits
	}
	doneStreams := readAll(inflight)
	ids := runIDs(inflight)
	// An open dashboard has read gw-0's state before the cut.
	if status, body := do(t, "GET", gw0.url+"/admin/api/state", adminToken); status != http.StatusOK || strings.Contains(body, `"degraded"`) {
		t.Fatalf("gw-0's admin state before the cut: %d %.300s", status, body)
	}
	proxy.cutOff()
	cutAt := time.Now()
	// Within the lease, a cancel sent on gw-1 while gw-0 cannot hear it
	// reaches gw-0 once it listens again.
	var cancelled ledger.RunID
	cancelStatus := make(chan int, 1)
	if !pastLease {
		cancelled = ids[len(ids)-1]
		ids = ids[:len(ids)-1]
		go func() {
			status, _ := do(t, "DELETE", others[0].url+"/v1/runs/"+string(cancelled), keyA)
			cancelStatus <- status
		}()
	}
	if pastLease {
		waitEnded(ctx, t, st, ids)
		t.Logf("the others ended gw-0's %d runs interrupted %v into the cut (lease_expiry 2 s)", len(ids), time.Since(cutAt).Round(time.Millisecond))
	}
	time.Sleep(cut - time.Since(cutAt)) // the rest of the cut
	// While cut off, gw-0 refuses new calls 503 with Retry-After.
	if status, code, ra := postRetryAfter(ctx, gw0, keyA, chatBody("hello", 20)); status != http.StatusServiceUnavailable || code != ledger.CodeLedgerUnavailable || ra == "" {
		t.Errorf("a call to gw-0 while cut off: %d %s Retry-After %q; want 503 ledger_unavailable with Retry-After", status, code, ra)
	}
	// Its dashboard says why, and keeps the ledger's figures as last read.
	if status, body := do(t, "GET", gw0.url+"/admin/api/state", adminToken); status != http.StatusOK ||
		!strings.Contains(body, `"degraded":"ledger unreachable`) || !strings.Contains(body, `"tenant":"a"`) {
		t.Errorf("gw-0's admin state while cut off: %d %.300s; want 200, degraded, and tenant a as last read", status, body)
	}
	proxy.restore()
	restored := time.Now()
	for i, end := range <-doneStreams {
		if end == "EOF" && ledger.RunID(inflight[i].runID) != cancelled {
			t.Errorf("stream %s relayed by gw-0 ended with neither [DONE] nor an error event", inflight[i].runID)
		}
	}

	if pastLease {
		waitLateEnds(ctx, t, st, ids)
		t.Logf("gw-0's late ends were kept as evidence %v after the proxy was restored", time.Since(restored).Round(time.Millisecond))
	} else {
		waitEnded(ctx, t, st, ids)
		t.Logf("gw-0's runs settled %v after the proxy was restored", time.Since(restored).Round(time.Millisecond))
	}
	for _, id := range ids {
		run, _ := st.Run(ctx, id)
		rows := auditOf(ctx, t, st, id)
		ends, late := 0, 0
		for _, e := range rows {
			switch e.Kind {
			case ledger.AuditSettle, ledger.AuditHold, ledger.AuditRecover, ledger.AuditRelease, ledger.AuditCancel:
				ends++
			case ledger.AuditLateEnd:
				late++
				if e.Units == 0 || !strings.Contains(e.Detail, "gw-0") {
					t.Errorf("late end of %s keeps no usage: %+v", id, e)
				}
			}
		}
		switch {
		case ends != 1:
			t.Errorf("run %s has %d end rows, want 1", id, ends)
		case pastLease && (late != 1 || run.Status != ledger.RunInterrupted || run.HeldUnits != run.ReserveUnits):
			t.Errorf("run %s: %s/%s held %d, %d late ends; want interrupted holding its reserve, one late end", id, run.Status, run.Usage, run.HeldUnits, late)
		case !pastLease && (late != 0 || run.Usage != ledger.UsageTrusted):
			t.Errorf("run %s: %s/%s, %d late ends; want settled on its usage, none late", id, run.Status, run.Usage, late)
		}
	}
	after := balanceOf(ctx, t, st, "a")
	if pastLease && (after.SpentUnits != before.SpentUnits || after.HeldUnits-before.HeldUnits != reserve) {
		t.Errorf("tenant a spent %d→%d held %d→%d; want nothing spent and the %d reserved held", before.SpentUnits, after.SpentUnits,
			before.HeldUnits, after.HeldUnits, reserve)
	}
	var cancelHeld ledger.Units
	if !pastLease {
		if status := <-cancelStatus; status != http.StatusAccepted {
			t.Errorf("cancel on gw-1 of a run on gw-0 sent during the cut: %d, want 202", status)
		}
		run := waitRun(ctx, t, st, cancelled, func(r ledger.Run) bool { return r.Status.Ended() })
		if run.Status != ledger.RunCancelled || endRows(ctx, t, st, cancelled) != 1 {
			t.Errorf("run %s cancelled during the cut: %s/%s; want cancelled once", cancelled, run.Status, run.Usage)
		}
		cancelHeld = run.HeldUnits
	}
	if !pastLease && (after.HeldUnits-before.HeldUnits != cancelHeld || after.SpentUnits <= before.SpentUnits) {
		t.Errorf("tenant a spent %d→%d held %d→%d; want the usage spent and nothing held", before.SpentUnits, after.SpentUnits,
			before.HeldUnits, after.HeldUnits)
	}
	admitted := admitAgain(ctx, t, gw0, restored)
	// The others must not take gw-0's new run for a dead one's.
	if run := waitRun(ctx, t, st, ledger.RunID(admitted), func(r ledger.Run) bool { return r.Status.Ended() }); run.Usage != ledger.UsageTrusted {
		t.Errorf("gw-0's run admitted after the cut ended %s/%s (%s); want settled by gw-0", run.Status, run.Usage, run.Evidence)
	}
	checkLedger(ctx, t, st, dsn)
}

// admitAgain posts to gw until a call is admitted and read whole.
func admitAgain(ctx context.Context, t *testing.T, gw *gateway, since time.Time) string {
	t.Helper()
	for {
		a := post(ctx, gw, keyA, chatBody("hello", 20))
		if a.status == http.StatusOK {
			if !readsDone(a.resp) {
				t.Errorf("gw-0's first call after the cut did not end with [DONE]")
			}
			t.Logf("gw-0 admitted again %v after the proxy was restored", time.Since(since).Round(time.Millisecond))
			return a.runID
		}
		if a.code != ledger.CodeLedgerUnavailable {
			t.Fatalf("gw-0 after the cut: %d %s", a.status, a.code)
		}
		select {
		case <-ctx.Done():
			t.Fatal("gw-0 never admitted again after the cut")
		case <-time.After(100 * time.Millisecond): // as the Retry-After bids, shorter
		}
	}
}

func startDemo(t *testing.T) *demo.Server {
	d, err := demo.Start(demo.Options{APIKey: "sk-provider", Models: []string{"demo-chat", "demo-guarded"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func openStore(ctx context.Context, t *testing.T, dsn string) *postgres.Store {
	st, err := postgres.Open(ctx, dsn, postgres.Options{Instance: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func runIDs(as []answer) []ledger.RunID {
	var ids []ledger.RunID
	for _, a := range as {
		ids = append(ids, ledger.RunID(a.runID))
	}
	return ids
}

// readAll reads the admitted streams to their end in the background and
// sends how each ended (readEnd).
func readAll(as []answer) <-chan []string {
	out := make(chan []string, 1)
	go func() {
		ends := make([]string, len(as))
		var wg sync.WaitGroup
		for i, a := range as {
			wg.Add(1)
			go func() { defer wg.Done(); ends[i] = readEnd(a.resp) }()
		}
		wg.Wait()
		out <- ends
	}()
	return out
}

// readEnd reads a stream to its end: "[DONE]", "ledger error event" (the
// answer was whole but its end could not be recorded within the gateway's
// wait), or "EOF" (neither: a bare end no SDK can read).
func readEnd(resp *http.Response) string {
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	switch body := string(b); {
	case strings.Contains(body, "data: [DONE]"):
		return "[DONE]"
	case strings.Contains(body, `"error"`) && strings.Contains(body, "ledger could not record"):
		return "ledger error event"
	}
	return "EOF"
}

// waitEnded waits until every run ended and returns when the last did.
func waitEnded(ctx context.Context, t *testing.T, st *postgres.Store, ids []ledger.RunID) time.Time {
	t.Helper()
	for _, id := range ids {
		waitRun(ctx, t, st, id, func(r ledger.Run) bool { return r.Status.Ended() })
	}
	return time.Now()
}

// waitLateEnds waits for a late_end row of every run.
func waitLateEnds(ctx context.Context, t *testing.T, st *postgres.Store, ids []ledger.RunID) {
	t.Helper()
	for _, id := range ids {
		for {
			rows, err := st.Audit(ctx, ledger.AuditFilter{RunID: id, Kind: ledger.AuditLateEnd})
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) > 0 {
				break
			}
			select {
			case <-ctx.Done():
				t.Fatalf("run %s: no late end kept", id)
			case <-time.After(50 * time.Millisecond): // written by another process
			}
		}
	}
}

func auditOf(ctx context.Context, t *testing.T, st *postgres.Store, id ledger.RunID) []ledger.AuditEntry {
	t.Helper()
	rows, err := st.Audit(ctx, ledger.AuditFilter{RunID: id})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// endRows counts the rows that end run id.
func endRows(ctx context.Context, t *testing.T, st *postgres.Store, id ledger.RunID) int {
	n := 0
	for _, e := range auditOf(ctx, t, st, id) {
		switch e.Kind {
		case ledger.AuditSettle, ledger.AuditHold, ledger.AuditRecover, ledger.AuditRelease, ledger.AuditCancel:
			n++
		}
	}
	return n
}

// checkSettled: every run settled on trusted usage.
func checkSettled(ctx context.Context, t *testing.T, st *postgres.Store, ids []ledger.RunID) {
	t.Helper()
	for _, id := range ids {
		run := waitRun(ctx, t, st, id, func(r ledger.Run) bool { return r.Status.Ended() })
		if run.Usage != ledger.UsageTrusted {
			t.Errorf("run %s ended %s/%s (%s); want settled on its usage", id, run.Status, run.Usage, run.Evidence)
		}
	}
}

// checkLedger: no run stays open and verify is clean.
func checkLedger(ctx context.Context, t *testing.T, st *postgres.Store, dsn string) {
	t.Helper()
	runs, err := st.Runs(ctx, ledger.RunFilter{HoldingOnly: true, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if !r.Status.Ended() {
			t.Errorf("run %s is still %s", r.ID, r.Status)
		}
	}
	problems, err := postgres.Verify(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("verify: %d problems", len(problems))
	for _, p := range problems {
		t.Error("verify:", p)
	}
}

func balanceOf(ctx context.Context, t *testing.T, st *postgres.Store, tenant string) ledger.Balance {
	t.Helper()
	bs, err := st.Balances(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bs {
		if b.TenantID == tenant {
			return b
		}
	}
	t.Fatalf("no balance of tenant %s", tenant)
	return ledger.Balance{}
}

// postRetryAfter sends a call and reads its status, error code and
// Retry-After, reading an admitted stream to its end.
func postRetryAfter(ctx context.Context, gw *gateway, key, body string) (int, string, string) {
	req, _ := http.NewRequestWithContext(ctx, "POST", gw.url+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return -1, err.Error(), ""
	}
	defer resp.Body.Close()
	var e struct{ Error struct{ Code string } }
	if resp.StatusCode != http.StatusOK {
		json.NewDecoder(resp.Body).Decode(&e)
	} else {
		io.Copy(io.Discard, resp.Body)
	}
	return resp.StatusCode, e.Error.Code, resp.Header.Get("Retry-After")
}

// traffic is steady calls to every gateway: one started every 100 ms on
// each, whatever the earlier ones wait for.
type traffic struct {
	stopc chan struct{}
	wg    sync.WaitGroup
	mu    sync.Mutex
	tally trafficTally
}

type trafficTally struct {
	byStatus     map[string]int // "200 [DONE]", "503 ledger_unavailable", …
	noRetryAfter int
	admitted     []ledger.RunID
}

func startTraffic(ctx context.Context, gws []*gateway) *traffic {
	tr := &traffic{stopc: make(chan struct{}), tally: trafficTally{byStatus: map[string]int{}}}
	for _, gw := range gws {
		tr.wg.Add(1)
		go func() {
			defer tr.wg.Done()
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-tr.stopc:
					return
				case <-tick.C:
				}
				tr.wg.Add(1)
				go func() { defer tr.wg.Done(); tr.one(ctx, gw) }()
			}
		}()
	}
	return tr
}

func (tr *traffic) one(ctx context.Context, gw *gateway) {
	req, _ := http.NewRequestWithContext(ctx, "POST", gw.url+"/v1/chat/completions", strings.NewReader(chatBody("hello", 20)))
	req.Header.Set("Authorization", "Bearer "+keyA)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	key, ra := "", ""
	var id ledger.RunID
	if err != nil {
		key = "error " + err.Error()
	} else {
		ra, id = resp.Header.Get("Retry-After"), ledger.RunID(resp.Header.Get("X-Run-Id"))
		key = fmt.Sprint(resp.StatusCode)
		if resp.StatusCode != http.StatusOK {
			var e struct{ Error struct{ Code string } }
			json.NewDecoder(resp.Body).Decode(&e)
			resp.Body.Close()
			key += " " + e.Error.Code
		} else {
			key = "200 " + readEnd(resp)
		}
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.tally.byStatus[key]++
	if strings.HasPrefix(key, "503") && ra == "" {
		tr.tally.noRetryAfter++
	}
	if id != "" && strings.HasPrefix(key, "200") {
		tr.tally.admitted = append(tr.tally.admitted, id)
	}
}

func (tr *traffic) stop() trafficTally {
	close(tr.stopc)
	tr.wg.Wait()
	return tr.tally
}

// tcpProxy relays connections to a PostgreSQL server over real sockets;
// cutOff drops every relayed connection and refuses new ones (the
// database is unreachable from behind it) until restore.
type tcpProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	cut    bool
	conns  map[net.Conn]bool
	wg     sync.WaitGroup
}

func startProxy(t *testing.T, target string) *tcpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() { ln.Close(); p.cutOff(); p.wg.Wait() })
	return p
}

// dsn is dsn with the server's address replaced by the proxy's.
func (p *tcpProxy) dsn(t *testing.T, dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = p.ln.Addr().String()
	return u.String()
}

func (p *tcpProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.cut {
			p.mu.Unlock()
			c.Close()
			continue
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.conns[c], p.conns[s] = true, true
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(c, s)
		go p.pipe(s, c)
	}
}

func (p *tcpProxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	io.Copy(dst, src)
	dst.Close()
	src.Close()
	p.mu.Lock()
	delete(p.conns, dst)
	delete(p.conns, src)
	p.mu.Unlock()
}

func (p *tcpProxy) cutOff() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for c := range p.conns {
		c.Close()
	}
}

func (p *tcpProxy) restore() {
	p.mu.Lock()
	p.cut = false
	p.mu.Unlock()
}
