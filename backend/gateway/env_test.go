package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/gateway"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/meter"
	"github.com/quotagate/quotagate/backend/sqlite"
	"github.com/quotagate/quotagate/backend/upstream"
	"github.com/quotagate/quotagate/backend/upstream/demo"
)

// env is a gateway on a loopback socket with a real SQLite ledger in
// t.TempDir() and the demo upstream on its own listener.
type env struct {
	t     *testing.T
	store *sqlite.Store
	demo  *demo.Server
	gw    *gateway.Gateway
	srv   *httptest.Server
	log   *eventLog
}

type envOpts struct {
	meter    string // default utf8-bytes-v1
	tenants  []ledger.Tenant
	plan     demo.Plan
	modify   func(*gateway.Options)
	connCtx  func(context.Context, net.Conn) context.Context
	upstream upstream.Options // overrides for the client (timeouts); with a BaseURL, the upstream instead of the demo
	demo     func(*demo.Options, meter.Meter)
}

// tenant returns a tenant whose key is "key-"+id.
func tenant(id string, budget ledger.Units, maxConcurrent int) ledger.Tenant {
	return ledger.Tenant{ID: id, KeyHashes: []string{ledger.HashKey("key-" + id)}, BudgetUnits: budget, MaxConcurrent: maxConcurrent}
}

func newEnv(t *testing.T, o envOpts) *env {
	t.Helper()
	if o.meter == "" {
		o.meter = meter.NameUTF8Bytes
	}
	if o.tenants == nil {
		o.tenants = []ledger.Tenant{tenant("a", 110, 1), tenant("b", 110, 1)}
	}
	store, err := sqlite.Open(filepath.Join(t.TempDir(), "ledger.db"), sqlite.Options{Synchronous: "OFF"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	if err := store.ApplyTenants(context.Background(), o.tenants, ledger.System("test")); err != nil {
		t.Fatal(err)
	}
	m, err := meter.New(o.meter)
	if err != nil {
		t.Fatal(err)
	}
	dopts := demo.Options{Plan: o.plan}
	if o.demo != nil {
		o.demo(&dopts, m)
	}
	d, err := demo.Start(dopts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	uo := o.upstream
	if uo.BaseURL == "" { // else the test's own upstream (the demo idles)
		uo.Name, uo.BaseURL, uo.Models = "demo", d.URL(), d.Models()
	}
	up, err := upstream.New(uo)
	if err != nil {
		t.Fatal(err)
	}
	log := &eventLog{changed: make(chan struct{})}
	opts := gateway.Options{
		Store: store, Meter: m, Upstreams: []gateway.Upstream{up},
		Reserve:        meter.ReservePolicy{DefaultOutputUnits: 100},
		ForwardHeaders: []string{demo.PlanHeader},
	}
	if o.modify != nil {
		o.modify(&opts)
	}
	// What the server wires: the commit hook tells the test (and a guard
	// that observes) what each ledger commit changed.
	observer, _ := opts.Quota.(interface {
		Observe(ctx context.Context, upstream, model string) error
	})
	store.OnCommit(func(ctx context.Context, changes []ledger.Change) {
		for _, c := range changes {
			log.add(c)
			if observer != nil && c.Guarded() {
				_ = observer.Observe(ctx, c.Upstream, c.Model)
			}
		}
	})
	gw := gateway.New(opts)
	srv := httptest.NewUnstartedServer(gw)
	srv.Config.ConnContext = o.connCtx
	srv.Start()
	t.Cleanup(srv.Close)
	return &env{t: t, store: store, demo: d, gw: gw, srv: srv, log: log}
}

// Kinds of the events tests wait on: what the ledger committed, named by
// the outcome of the run (a cancelled run ends held or released).
const (
	evAdmit   = "admit"
	evStart   = "start"
	evReject  = "reject"
	evSettle  = "settle"
	evHold    = "hold"
	evRelease = "release"
)

// event is one committed ledger change as the tests see it.
type event struct {
	Kind     string
	RunID    ledger.RunID
	TenantID string
}

// eventLog records the ledger's committed changes; tests wait on them
// instead of sleeping.
type eventLog struct {
	mu      sync.Mutex
	events  []event
	changed chan struct{}
}

func (l *eventLog) add(c ledger.Change) {
	e := event{Kind: string(c.Kind), RunID: c.RunID, TenantID: c.TenantID}
	if c.Kind == ledger.AuditCancel {
		e.Kind = evHold
		if c.Usage == ledger.UsageReleased {
			e.Kind = evRelease
		}
	}
	l.mu.Lock()
	l.events = append(l.events, e)
	close(l.changed)
	l.changed = make(chan struct{})
	l.mu.Unlock()
}

// until waits (10 s at most) for cond to hold over the events so far and
// returns them; what names the condition in the failure.
func (l *eventLog) until(t *testing.T, what string, cond func([]event) bool) []event {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		l.mu.Lock()
		ch := l.changed
		evs := append([]event(nil), l.events...)
		l.mu.Unlock()
		if cond(evs) {
			return evs
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("no %s within 10s; events: %+v", what, evs)
		}
	}
}

// kinds returns the events of kind, in order.
func kinds(evs []event, kind string) []event {
	var out []event
	for _, e := range evs {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// wait returns the first event matching kind and run (run "" matches any).
func (l *eventLog) wait(t *testing.T, kind string, run ledger.RunID) event {
	t.Helper()
	var got event
	l.until(t, fmt.Sprintf("%s event for run %q", kind, run), func(evs []event) bool {
		for _, e := range kinds(evs, kind) {
			if run == "" || e.RunID == run {
				got = e
				return true
			}
		}
		return false
	})
	return got
}

// waitEnd waits until the run's outcome is in the ledger and returns the run.
func (e *env) waitEnd(id ledger.RunID) ledger.Run {
	e.t.Helper()
	e.log.until(e.t, fmt.Sprintf("end of run %s", id), func(evs []event) bool {
		for _, ev := range evs {
			switch ev.Kind {
			case evSettle, evHold, evRelease:
				if ev.RunID == id {
					return true
				}
			}
		}
		return false
	})
	run, err := e.store.Run(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return run
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func (e *env) do(ctx context.Context, method, path, key, body string, hdr map[string]string) *http.Response {
	e.t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, e.srv.URL+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp
}

func (e *env) chat(ctx context.Context, key, body string, plan string) *http.Response {
	e.t.Helper()
	var hdr map[string]string
	if plan != "" {
		hdr = map[string]string{demo.PlanHeader: plan}
	}
	return e.do(ctx, http.MethodPost, "/v1/chat/completions", key, body, hdr)
}

func (e *env) balance(tenantID string) ledger.Balance {
	e.t.Helper()
	b, err := e.store.Balance(context.Background(), tenantID)
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

// sse reads data payloads of an SSE body until it ends; err is the read
// error that ended it (nil at a clean end).
type sse struct {
	data []string
	err  error
}

func readSSE(r io.Reader) sse {
	var s sse
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		if d, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), "data: "); ok {
			s.data = append(s.data, d)
		}
		if err != nil {
			if err != io.EOF {
				s.err = err
			}
			return s
		}
	}
}

func (s sse) done() bool { return len(s.data) > 0 && s.data[len(s.data)-1] == "[DONE]" }

// text concatenates delta.content of every chunk.
func (s sse) text() string {
	var b strings.Builder
	for _, d := range s.data {
		var c struct {
			Choices []struct {
				Delta struct{ Content string } `json:"delta"`
			} `json:"choices"`
		}
		if json.Unmarshal([]byte(d), &c) == nil {
			for _, ch := range c.Choices {
				b.WriteString(ch.Delta.Content)
			}
		}
	}
	return b.String()
}

// errorCode is the code of a terminal {"error":…} event, or "".
func (s sse) errorCode() string {
	if len(s.data) == 0 {
		return ""
	}
	var e struct {
		Error *struct{ Code string } `json:"error"`
	}
	if json.Unmarshal([]byte(s.data[len(s.data)-1]), &e) != nil || e.Error == nil {
		return ""
	}
	return e.Error.Code
}

func decode[T any](t *testing.T, r io.Reader) T {
	t.Helper()
	var v T
	if err := json.NewDecoder(r).Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func runID(t *testing.T, resp *http.Response) ledger.RunID {
	t.Helper()
	id := resp.Header.Get("X-Run-Id")
	if id == "" {
		t.Fatalf("response %d has no X-Run-Id", resp.StatusCode)
	}
	return ledger.RunID(id)
}
