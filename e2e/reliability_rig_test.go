package e2e_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/config"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/server"
	"github.com/quotagate/quotagate/backend/upstream/demo"
)

// The reliability rig: the assembled server (server.Open, real SQLite in a
// temp dir, real loopback HTTP) in front of a demo upstream the test starts
// itself, configured as an ordinary OpenAI-compatible upstream. Owning the
// demo lets a test observe what the provider saw (requests, headers,
// disconnects) instead of guessing; plans are chosen in-band with the demo's
// "/demo kind=…" directive as the last user message.

// Canary secrets: a grep for them anywhere a person or another program can
// read (logs, bodies, headers, exports, the ledger files) must find nothing.
const (
	canaryKeyA     = "sk-canary-tenantA-Q7vX2mLp9RwT4zK8nB3cY6dF1hJ5sU0e"
	canaryKeyB     = "sk-canary-tenantB-W3eR5tY7uI9oP1aS2dF4gH6jK8lZ0xCv"
	canaryUpstream = "sk-canary-provider-M1nB2vC3xZ4aS5dF6gH7jK8lP9oI0uY"
	canaryAdmin    = "canary-admin-N8mB7vC6xZ5aS4dF3gH2jK1lP0oI9uYt"
)

type rig struct {
	t    *testing.T
	s    *server.Server
	demo *demo.Server
	cfg  *config.Config
	dir  string
	logs *syncBuffer
	keyA string // tenant a: large budget
	keyB string // tenant b: budget 1000 (seed T01)
}

// rigOptions change the rig's config before the server opens.
type rigOptions struct {
	writeTimeout    string // limits.write_timeout; default 30s
	upstreamTimeout string // limits.upstream_timeout; default 120s
	budgetB         int    // tenant b's budget; default 1000
	extraUpstreams  string // more YAML list items under upstreams:
	finishGrace     string // limits.finish_grace; default unset (the gateway's 5s)
	dir             string // reuse a data dir (restart tests)
	demo            *demo.Server
}

const rigConfig = `
meter: utf8-bytes-v1
admin_token: %q
tenants:
  - {id: a, key: %q, budget_units: 100000000, max_concurrent: 200}
  - {id: b, key: %q, budget_units: %d, max_concurrent: 200}
upstreams:
  - {name: up, kind: openai, base_url: %q, api_key: %q, models: [demo-chat], max_concurrent: 200, queue: {max_waiters: 200, max_wait: 8s}}
%s
limits: {write_timeout: %s, upstream_timeout: %s, request_bytes_max: 65536%s}
`

// requestBytesMax is the rig's configured body limit.
const requestBytesMax = 65536

func newRig(t *testing.T, o rigOptions) *rig {
	t.Helper()
	d := o.demo
	if d == nil {
		var err error
		d, err = demo.Start(demo.Options{APIKey: canaryUpstream})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
	}
	if o.dir == "" {
		o.dir = t.TempDir()
	}
	cfg, err := rigConfigFor(d.URL(), o)
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	s, err := server.Open(context.Background(), server.Options{
		Config: cfg, DataDir: o.dir, Addr: "127.0.0.1:0", Version: "e2e-reliability",
		Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return &rig{t: t, s: s, demo: d, cfg: cfg, dir: o.dir, logs: logs, keyA: canaryKeyA, keyB: canaryKeyB}
}

// rigConfigFor is the rig's configuration in front of the upstream at
// demoURL, with o's defaults filled in.
func rigConfigFor(demoURL string, o rigOptions) (*config.Config, error) {
	if o.writeTimeout == "" {
		o.writeTimeout = "30s"
	}
	if o.upstreamTimeout == "" {
		o.upstreamTimeout = "120s"
	}
	if o.budgetB == 0 {
		o.budgetB = 1000
	}
	grace := ""
	if o.finishGrace != "" {
		grace = ", finish_grace: " + o.finishGrace
	}
	yaml := fmt.Sprintf(rigConfig, canaryAdmin, canaryKeyA, canaryKeyB, o.budgetB, demoURL, canaryUpstream,
		o.extraUpstreams, o.writeTimeout, o.upstreamTimeout, grace)
	cfg, err := config.Parse([]byte(yaml), func(string) (string, bool) { return "", false })
	if err != nil {
		return nil, fmt.Errorf("rig config: %w\n%s", err, yaml)
	}
	return cfg, nil
}

func (r *rig) addr() string { return strings.TrimPrefix(r.s.URL(), "http://") }

func (r *rig) port() string {
	_, p, _ := net.SplitHostPort(r.addr())
	return p
}

// chatBody is a chat request whose last user message is content.
func chatBody(content string, stream bool, maxTokens int) string {
	c, _ := json.Marshal(content)
	return fmt.Sprintf(`{"model":"demo-chat","stream":%v,"max_tokens":%d,"messages":[{"role":"user","content":%s}]}`, stream, maxTokens, c)
}

// reply is one finished HTTP exchange.
type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) runID() ledger.RunID { return ledger.RunID(r.header.Get("X-Run-Id")) }

// errorCode returns error.code of an OpenAI-shaped body, or "".
func (r reply) errorCode() string {
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(r.body, &e)
	return e.Error.Code
}

func (r *rig) do(method, path, key, contentType, body string, hdr ...string) reply {
	r.t.Helper()
	req, err := http.NewRequest(method, r.s.URL()+path, strings.NewReader(body))
	if err != nil {
		r.t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			req.Host = hdr[i+1]
		} else {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	return send(r.t, req)
}

func (r *rig) chat(key, body string) reply {
	r.t.Helper()
	return r.do("POST", "/v1/chat/completions", key, "application/json", body)
}

func (r *rig) admin(method, path, body string) reply {
	r.t.Helper()
	ct := ""
	if body != "" {
		ct = "application/json"
	}
	return r.do(method, path, canaryAdmin, ct, body)
}

// waitRun polls the ledger (an observable state, with a deadline) until the
// run has ended, and returns it.
func (r *rig) waitRun(id ledger.RunID) ledger.Run {
	r.t.Helper()
	return waitEnded(r.t, r.s, id)
}

// waitEnded is waitRun for any server.
func waitEnded(t *testing.T, s *server.Server, id ledger.RunID) ledger.Run {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		run, err := s.Store().Run(context.Background(), id)
		if err != nil {
			t.Fatalf("run %s: %v", id, err)
		}
		if run.Status.Ended() {
			return run
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s did not end: %+v", id, run)
		}
		time.Sleep(5 * time.Millisecond) // polling, not guessing: the loop ends on the observed state
	}
}

// ledgerCounts is everything a write would change: audit rows, runs, and each
// tenant's balance. Equal counts before and after mean nothing was written.
type ledgerCounts struct {
	audit    int
	runs     int
	balances string
}

func (r *rig) counts() ledgerCounts {
	r.t.Helper()
	ctx := context.Background()
	st := r.s.Store()
	a, err := st.Audit(ctx, ledger.AuditFilter{Limit: 1_000_000})
	if err != nil {
		r.t.Fatal(err)
	}
	runs, err := st.Runs(ctx, ledger.RunFilter{Limit: 1_000_000})
	if err != nil {
		r.t.Fatal(err)
	}
	bs, err := st.Balances(ctx)
	if err != nil {
		r.t.Fatal(err)
	}
	b, _ := json.Marshal(bs)
	return ledgerCounts{audit: len(a), runs: len(runs), balances: string(b)}
}

// verify recomputes every balance from the runs and the audit trail.
func (r *rig) verify() {
	r.t.Helper()
	diffs, err := r.s.Store().Verify(context.Background())
	if err != nil || len(diffs) > 0 {
		r.t.Fatalf("ledger verify: %v %q", err, diffs)
	}
}

func (r *rig) balance(tenant string) ledger.Balance {
	r.t.Helper()
	b, err := r.s.Store().Balance(context.Background(), tenant)
	if err != nil {
		r.t.Fatal(err)
	}
	return b
}

// sseEvents splits an SSE body into its data payloads (comments dropped).
func sseEvents(body []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, d)
		}
	}
	return out
}

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// doURL is rig.do against any base URL (a server in a child process).
func doURL(t *testing.T, base, method, path, key, body string) reply {
	t.Helper()
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return send(t, req)
}

// send makes the request and reads the whole answer.
func send(t *testing.T, req *http.Request) reply {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL.RequestURI(), err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", req.Method, req.URL.RequestURI(), err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: b}
}
