package gateway_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/gate"
	"github.com/quotagate/quotagate/backend/gateway"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/price"
	"github.com/quotagate/quotagate/backend/upstream"
	"github.com/quotagate/quotagate/backend/upstream/demo"
)

// A route of two upstreams for demo-chat: the env's demo upstream ("demo",
// priority 0, 1 micro a token) first, a second demo ("paid", priority 1, 3
// micros a token) after it.
const (
	firstPrice  = 1
	secondPrice = 3
)

// routeEnv is env with the second upstream of the route; first is the
// env's demo (or the test's own upstream in o.upstream).
type routeEnv struct {
	*env
	second *demo.Server
	guard  *evictor
}

func newRouteEnv(t *testing.T, o envOpts) *routeEnv {
	t.Helper()
	second, err := demo.Start(demo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { second.Close() })
	paid, err := upstream.New(upstream.Options{Name: "paid", BaseURL: second.URL(), Models: second.Models()})
	if err != nil {
		t.Fatal(err)
	}
	guard := &evictor{evicted: map[string]bool{}}
	modify := o.modify
	o.modify = func(opts *gateway.Options) {
		opts.Upstreams = append(opts.Upstreams, paid)
		opts.Routes = gateway.Routes{Priority: map[string]int{"paid": 1}}
		opts.Quota = guard
		opts.Money = gateway.Money{Currency: "USD", At: map[string]map[string]price.Price{
			"demo": {"demo-chat": perToken(firstPrice)}, "paid": {"demo-chat": perToken(secondPrice)}}}
		if modify != nil {
			modify(opts)
		}
	}
	return &routeEnv{env: newEnv(t, o), second: second, guard: guard}
}

// perToken is a price of n micros a token, in and out.
func perToken(n int64) price.Price {
	q := price.Quote{Input: price.Micros(n * 1_000_000), CachedInput: price.Micros(n * 1_000_000),
		CacheWrite: price.Micros(n * 1_000_000), Output: price.Micros(n * 1_000_000)}
	return q.Price()
}

// evictor is a quota guard whose evictions the test sets.
type evictor struct {
	mu      sync.Mutex
	evicted map[string]bool
}

func (e *evictor) set(upstream string, evicted bool) {
	e.mu.Lock()
	e.evicted[upstream] = evicted
	e.mu.Unlock()
}

func (e *evictor) Check(upstream, model string) (*ledger.QuotaCheck, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.evicted[upstream] {
		return nil, &ledger.Error{Code: ledger.CodeQuotaGuard, RetryAfter: time.Minute,
			Message: "the quota guard evicted " + upstream + "/" + model}
	}
	return nil, nil
}

const routeBody = `{"model":"demo-chat","messages":[{"role":"user","content":"hi"}]}`

// served posts routeBody and returns the answering run, checking that the
// call succeeded.
func (e *routeEnv) served(ctx context.Context, stream bool) ledger.Run {
	e.t.Helper()
	body := routeBody
	if stream {
		body = strings.Replace(body, `"messages"`, `"stream":true,"messages"`, 1)
	}
	resp := e.chat(ctx, "key-a", body, "")
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	return e.waitEnd(runID(e.t, resp))
}

// failovers are the failover audit rows, oldest first.
func (e *routeEnv) failovers() []ledger.AuditEntry {
	e.t.Helper()
	rows, err := e.store.Audit(context.Background(), ledger.AuditFilter{Kind: ledger.AuditFailover})
	if err != nil {
		e.t.Fatal(err)
	}
	return rows
}

// checkCharged checks that the tenant paid for run alone, at price
// micros a token, and holds nothing.
func (e *routeEnv) checkCharged(run ledger.Run, spentBefore price.Micros, perTokenMicros int64) {
	e.t.Helper()
	if run.Usage != ledger.UsageTrusted || run.CostMicros != price.Micros(perTokenMicros*int64(run.SpentUnits)) {
		e.t.Errorf("run %s at %s: usage %s, cost %d for %d tokens, want %d a token", run.ID, run.Upstream, run.Usage, run.CostMicros, run.SpentUnits, perTokenMicros)
	}
	b := e.balance("a")
	if b.HeldUnits != 0 || b.HeldMicros != 0 || b.SpentMicros-spentBefore != run.CostMicros {
		e.t.Errorf("balance held %d (%d micros), spent %d micros more, want 0 held and %d spent", b.HeldUnits, b.HeldMicros, b.SpentMicros-spentBefore, run.CostMicros)
	}
}

// The first target's quota guard evicted the model: calls go to the
// second, which the first never sees, at the second's price; once the
// guard restores the first, calls go back to it.
func TestFailoverEvictedByGuard(t *testing.T) {
	e := newRouteEnv(t, envOpts{tenants: []ledger.Tenant{tenant("a", 100_000, 4)}})
	ctx := ctxT(t)
	e.guard.set("demo", true)
	run := e.served(ctx, false)
	if run.Upstream != "paid" || e.demo.Stats().Received != 0 {
		t.Fatalf("served by %s; the first saw %d requests", run.Upstream, e.demo.Stats().Received)
	}
	e.checkCharged(run, 0, secondPrice)
	if run.Attempts != 1 || run.FailoverOf != "" {
		t.Fatalf("attempts %d after %q: the evicted target admitted none", run.Attempts, run.FailoverOf)
	}
	rows := e.failovers()
	if len(rows) != 1 || rows[0].Reason != ledger.CodeQuotaGuard || rows[0].RunID != "" ||
		rows[0].Detail != "demo/demo-chat → paid/demo-chat" || rows[0].TenantID != "a" {
		t.Fatalf("failover rows %+v", rows)
	}

	e.guard.set("demo", false)
	spent := e.balance("a").SpentMicros
	back := e.served(ctx, true)
	if back.Upstream != "demo" || e.second.Stats().Received != 1 {
		t.Fatalf("after the restore served by %s; the second saw %d requests", back.Upstream, e.second.Stats().Received)
	}
	e.checkCharged(back, spent, firstPrice)
	if n := len(e.failovers()); n != 1 {
		t.Fatalf("%d failover rows after the restore, want still 1", n)
	}
}

// The first target refuses before any output — 500, 429 with
// Retry-After, no connection at all: the second serves the call, the
// first attempt's hold is released with the refusal as evidence, and the
// balance and the audit agree.
func TestFailoverRefusedBeforeOutput(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	nowhere := "http://" + closed.Addr().String() + "/v1"
	closed.Close()
	for _, tc := range []struct {
		name     string
		plan     demo.Plan
		upstream upstream.Options
		reason   string
		evidence string
	}{
		{name: "Status500", plan: demo.Plan{Kind: demo.KindError, Status: 500}, reason: ledger.CodeUpstreamError, evidence: "upstream_status=500"},
		{name: "Status429RetryAfter", plan: demo.Plan{Kind: demo.KindError, Status: 429, RetryAfter: "30"}, reason: ledger.CodeUpstreamBusy, evidence: "upstream_status=429"},
		{name: "NoConnection", upstream: upstream.Options{Name: "demo", BaseURL: nowhere, Models: []string{"demo-chat"}},
			reason: ledger.CodeUpstreamError, evidence: "upstream_connect_error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newRouteEnv(t, envOpts{tenants: []ledger.Tenant{tenant("a", 100_000, 4)}, plan: tc.plan, upstream: tc.upstream})
			run := e.served(ctxT(t), true)
			if run.Upstream != "paid" {
				t.Fatalf("served by %s", run.Upstream)
			}
			e.checkCharged(run, 0, secondPrice)
			rows := e.failovers()
			if len(rows) != 1 || rows[0].Reason != tc.reason || rows[0].RunID == "" || rows[0].Detail != "demo/demo-chat → paid/demo-chat" {
				t.Fatalf("failover rows %+v", rows)
			}
			first, err := e.store.Run(context.Background(), rows[0].RunID)
			if err != nil {
				t.Fatal(err)
			}
			if first.Upstream != "demo" || first.Status != ledger.RunFailed || first.Usage != ledger.UsageReleased ||
				first.HeldUnits != 0 || first.CostMicros != 0 || !strings.Contains(first.Evidence, tc.evidence) || first.Attempts != 1 {
				t.Fatalf("first attempt %+v", first)
			}
			if run.Attempts != 2 || run.FailoverOf != first.ID {
				t.Fatalf("the answering run took %d attempts after %q, want 2 after %s", run.Attempts, run.FailoverOf, first.ID)
			}
			if b := e.balance("a"); b.SpentUnits != run.SpentUnits || b.Active != 0 {
				t.Fatalf("balance %+v, want only the answering run's %d units spent", b, run.SpentUnits)
			}
		})
	}
}

// The first target cuts its stream after a byte: nothing fails over, the
// run keeps its hold as a single upstream's would, and the second never
// sees the call.
func TestFailoverNotAfterFirstByte(t *testing.T) {
	e := newRouteEnv(t, envOpts{tenants: []ledger.Tenant{tenant("a", 100_000, 4)}, plan: demo.Plan{Kind: demo.KindCut, CutAfter: 1}})
	resp := e.chat(ctxT(t), "key-a", strings.Replace(routeBody, `"messages"`, `"stream":true,"messages"`, 1), "")
	s := readSSE(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || s.errorCode() != ledger.CodeUpstreamInterrupt {
		t.Fatalf("status %d, stream %+v", resp.StatusCode, s.data)
	}
	run := e.waitEnd(runID(t, resp))
	if run.Upstream != "demo" || run.Status != ledger.RunInterrupted || run.HeldUnits == 0 {
		t.Fatalf("run %+v", run)
	}
	if n := e.second.Stats().Received; n != 0 || len(e.failovers()) != 0 {
		t.Fatalf("the second saw %d requests; failover rows %+v", n, e.failovers())
	}
}

// Concurrent callers over a route whose first target refuses every call
// with a 500, with budget for exactly n calls (each spends its whole
// reserve): exactly n are served, by the second, the others refused 402,
// and nothing stays held.
func TestFailoverConcurrentBudget(t *testing.T) {
	const callers, n, answer = 200, 37, "0123456789" // the answer is the output cap: each call spends its reserve
	body := `{"model":"demo-chat","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`
	probe := newRouteEnv(t, envOpts{tenants: []ledger.Tenant{tenant("a", 100_000, 4)}})
	resp := probe.chat(ctxT(t), "key-a", body, "")
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	bodyReserve := probe.waitEnd(runID(t, resp)).ReserveUnits
	e := newRouteEnv(t, envOpts{tenants: []ledger.Tenant{tenant("a", n*bodyReserve, callers)},
		plan: demo.Plan{Kind: demo.KindError, Status: 500}})
	e.second.SetPlan(demo.Plan{Text: answer})
	ctx := ctxT(t)
	codes := make([]int, callers)
	ids := make([]ledger.RunID, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp := e.chat(ctx, "key-a", body, "")
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			codes[i], ids[i] = resp.StatusCode, ledger.RunID(resp.Header.Get("X-Run-Id"))
		}()
	}
	wg.Wait()
	count := map[int]int{}
	for _, c := range codes {
		count[c]++
	}
	if count[http.StatusOK] != n || count[http.StatusPaymentRequired] != callers-n {
		t.Fatalf("answers %v, want %d served and %d refused 402", count, n, callers-n)
	}
	b := e.balance("a")
	if b.SpentUnits != n*bodyReserve || b.HeldUnits != 0 || b.Active != 0 {
		t.Fatalf("balance %+v, want %d spent and nothing held", b, n*bodyReserve)
	}
	if got := e.second.Stats().Received; got != n {
		t.Fatalf("the second served %d calls, want %d", got, n)
	}
	if got := e.demo.Stats().Received; got < n {
		t.Fatalf("the first saw %d calls, want every served one first (%d)", got, n)
	}
	// Never two holds of one call: each answering run was admitted after
	// its first attempt's release.
	rows, err := e.store.Audit(context.Background(), ledger.AuditFilter{TenantID: "a"})
	if err != nil {
		t.Fatal(err)
	}
	seq := map[string]int64{}
	for _, r := range rows {
		seq[string(r.Kind)+" "+string(r.RunID)] = r.Seq
	}
	for i, id := range ids {
		if codes[i] != http.StatusOK {
			continue
		}
		run, err := e.store.Run(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		released, admitted := seq["release "+string(run.FailoverOf)], seq["admit "+string(id)]
		if run.Upstream != "paid" || run.Attempts != 2 || released == 0 || released > admitted {
			t.Fatalf("run %+v: its first attempt released at seq %d, it was admitted at seq %d", run, released, admitted)
		}
	}
}

// The first target's gate is full while the second's has room: the call
// goes to the second. With both full, it waits at the first, as a call to
// a single upstream does.
func TestFailoverGateFull(t *testing.T) {
	gates := gate.NewGates()
	for _, name := range []string{"demo", "paid"} {
		gates.Set(name, gate.Options{MaxConcurrent: 1, MaxWaiters: 4, MaxWait: 10 * time.Second})
	}
	slow := demo.Plan{LatencyMin: 700 * time.Millisecond, LatencyMax: 700 * time.Millisecond}
	e := newRouteEnv(t, envOpts{tenants: []ledger.Tenant{tenant("a", 100_000, 8)}, plan: slow,
		modify: func(o *gateway.Options) { o.Gate = gateway.FromGates(gates) }})
	e.second.SetPlan(slow)
	ctx := ctxT(t)
	inFlight := func(s demo.Stats) bool { return s.InFlight == 1 }
	served := make(chan ledger.Run, 3)
	call := func() { served <- e.served(ctx, false) }
	go call() // A: the first's one slot
	if err := e.demo.Wait(ctx, inFlight); err != nil {
		t.Fatal(err)
	}
	go call() // B: the first is full, the second has room
	if err := e.second.Wait(ctx, inFlight); err != nil {
		t.Fatal(err)
	}
	go call() // C: both full
	at := map[string]int{}
	for range 3 {
		at[(<-served).Upstream]++
	}
	if at["demo"] != 2 || at["paid"] != 1 {
		t.Fatalf("served at %v, want two at the first (one after waiting) and one at the second", at)
	}
	rows := e.failovers()
	if len(rows) != 1 || rows[0].Reason != ledger.CodeUpstreamBusy || rows[0].RunID != "" || rows[0].Detail != "demo/demo-chat → paid/demo-chat" {
		t.Fatalf("failover rows %+v, want B's alone (C waited)", rows)
	}
}
