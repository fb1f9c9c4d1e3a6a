package gateway_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/gate"
	"github.com/quotagate/quotagate/backend/gateway"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/ratelimit"
	"github.com/quotagate/quotagate/backend/upstream"
	"github.com/quotagate/quotagate/backend/upstream/demo"
)

var update = flag.Bool("update", false, "rewrite testdata/errors/*.golden.json")

const hiBody = `{"model":"demo-chat","stream":true,"max_tokens":20,"messages":[{"role":"user","content":"hi"}]}`

// evictedGuard is a quota guard whose model is evicted: the seam's refusal.
type evictedGuard struct{}

func (evictedGuard) Check(up, model string) (*ledger.QuotaCheck, error) {
	return nil, &ledger.Error{Code: ledger.CodeQuotaGuard, RetryAfter: 30 * time.Second,
		Message: "the daily quota of " + up + "/" + model + " is nearly used up; the model is paused until tomorrow"}
}
func (evictedGuard) Observe(context.Context, string, string) error { return nil }

// TestErrorBodies pins the errors the gateway answers before its first
// byte: status, OpenAI-shaped body (golden file per code) and Retry-After
// for the 429 family.
func TestErrorBodies(t *testing.T) {
	tests := []struct {
		code   string
		status int
		env    envOpts
		// do makes the failing request (after any setup) and returns the response.
		do func(t *testing.T, e *env) *http.Response
	}{
		{code: ledger.CodeInvalidRequest, status: 400, do: func(t *testing.T, e *env) *http.Response {
			return e.chat(ctxT(t), "key-a", `{"model":"demo-chat","tenant":"b","messages":[{"role":"user","content":"hi"}]}`, "")
		}},
		{code: ledger.CodeInvalidAPIKey, status: 401, do: func(t *testing.T, e *env) *http.Response {
			return e.chat(ctxT(t), "key-nobody", hiBody, "")
		}},
		{code: ledger.CodeInsufficientBudget, status: 402, do: func(t *testing.T, e *env) *http.Response {
			return e.chat(ctxT(t), "key-a", `{"model":"demo-chat","max_tokens":200,"messages":[{"role":"user","content":"hi"}]}`, "")
		}},
		{code: ledger.CodeModelNotFound, status: 404, do: func(t *testing.T, e *env) *http.Response {
			return e.chat(ctxT(t), "key-a", `{"model":"gpt-nope","messages":[{"role":"user","content":"hi"}]}`, "")
		}},
		{code: ledger.CodeRunNotFound, status: 404, do: func(t *testing.T, e *env) *http.Response {
			return e.do(ctxT(t), http.MethodGet, "/v1/runs/run_nope", "key-a", "", nil)
		}},
		{code: ledger.CodeRequestTooLarge, status: 413,
			env: envOpts{modify: func(o *gateway.Options) { o.RequestBytesMax = 1024 }},
			do: func(t *testing.T, e *env) *http.Response {
				return e.chat(ctxT(t), "key-a", `{"model":"demo-chat","messages":[{"role":"user","content":"`+strings.Repeat("x", 2048)+`"}]}`, "")
			}},
		{code: ledger.CodeConcurrencyLimit, status: 429, env: envOpts{plan: demo.Plan{Kind: demo.KindStall}},
			do: func(t *testing.T, e *env) *http.Response {
				first := e.chat(ctxT(t), "key-a", hiBody, "")
				t.Cleanup(func() { first.Body.Close() })
				return e.chat(ctxT(t), "key-a", hiBody, "")
			}},
		{code: ledger.CodeRateLimited, status: 429,
			env: envOpts{modify: func(o *gateway.Options) {
				l := ratelimit.New(ratelimit.Options{})
				l.SetLimits("a", ratelimit.Limits{PerMinute: 1})
				o.RateLimiter = l
			}},
			do: func(t *testing.T, e *env) *http.Response {
				first := e.chat(ctxT(t), "key-a", hiBody, "")
				io.Copy(io.Discard, first.Body)
				first.Body.Close()
				return e.chat(ctxT(t), "key-a", hiBody, "")
			}},
		{code: ledger.CodeUpstreamBusy, status: 429,
			env: envOpts{tenants: []ledger.Tenant{tenant("a", 1000, 4)}, plan: demo.Plan{Kind: demo.KindStall},
				modify: func(o *gateway.Options) {
					gs := gate.NewGates()
					gs.Set("demo", gate.Options{MaxConcurrent: 1, MaxWaiters: -1})
					o.Gate = gateway.FromGates(gs)
				}},
			do: func(t *testing.T, e *env) *http.Response {
				first := e.chat(ctxT(t), "key-a", hiBody, "")
				t.Cleanup(func() { first.Body.Close() })
				return e.chat(ctxT(t), "key-a", hiBody, "")
			}},
		{code: ledger.CodeQuotaGuard, status: 429,
			env: envOpts{modify: func(o *gateway.Options) { o.Quota = evictedGuard{} }},
			do: func(t *testing.T, e *env) *http.Response {
				return e.chat(ctxT(t), "key-a", hiBody, "")
			}},
		{code: ledger.CodeUpstreamError, status: 502, env: envOpts{plan: demo.Plan{Kind: demo.KindError, Status: 500}},
			do: func(t *testing.T, e *env) *http.Response { return e.chat(ctxT(t), "key-a", hiBody, "") }},
		{code: ledger.CodeUpstreamTimeout, status: 504, env: envOpts{plan: demo.Plan{Kind: demo.KindError, Status: 504}},
			do: func(t *testing.T, e *env) *http.Response { return e.chat(ctxT(t), "key-a", hiBody, "") }},
		{code: ledger.CodeDuplicateRequest, status: 409,
			env: envOpts{modify: func(o *gateway.Options) {
				n := 0
				o.NewRunID = func() ledger.RunID { n++; return ledger.RunID(fmt.Sprint("run_golden", n)) }
			}},
			do: func(t *testing.T, e *env) *http.Response {
				hdr := map[string]string{"Idempotency-Key": "user-call-1"}
				r := e.do(ctxT(t), http.MethodPost, "/v1/chat/completions", "key-a", hiBody, hdr)
				io.Copy(io.Discard, r.Body)
				r.Body.Close()
				e.waitEnd(runID(t, r))
				return e.do(ctxT(t), http.MethodPost, "/v1/chat/completions", "key-a", hiBody, hdr)
			}},
		{code: ledger.CodeRunEnded, status: 409,
			env: envOpts{modify: func(o *gateway.Options) { o.NewRunID = func() ledger.RunID { return "run_golden" } }},
			do: func(t *testing.T, e *env) *http.Response {
				r := e.chat(ctxT(t), "key-a", hiBody, "")
				io.Copy(io.Discard, r.Body)
				r.Body.Close()
				id := runID(t, r)
				e.waitEnd(id)
				return e.do(ctxT(t), http.MethodDelete, "/v1/runs/"+string(id), "key-a", "", nil)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.code, func(t *testing.T) {
			e := newEnv(t, tt.env)
			resp := tt.do(t, e)
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, body)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			if ra := resp.Header.Get("Retry-After"); (tt.status == 429) != (ra != "") {
				t.Errorf("Retry-After %q on a %d", ra, tt.status)
			}
			golden(t, filepath.Join("testdata", "errors", tt.code+".golden.json"), body)
		})
	}
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs:\n got: %s\nwant: %s", path, got, want)
	}
}

// The terminal event of a cut stream is pinned too.
func TestInterruptedEventGolden(t *testing.T) {
	e := newEnv(t, envOpts{plan: demo.Plan{Kind: demo.KindCut, Parts: []string{"part", "more"}, CutAfter: 1}})
	resp := e.chat(ctxT(t), "key-a", hiBody, "")
	defer resp.Body.Close()
	s := readSSE(resp.Body)
	golden(t, filepath.Join("testdata", "errors", ledger.CodeUpstreamInterrupt+".golden.json"), []byte(s.data[len(s.data)-1]+"\n"))
}

// Accounting fields in the body are refused: a client cannot name its own
// identity or price, and nothing reaches the ledger or the upstream.
func TestAccountingFieldsAreRefused(t *testing.T) {
	e := newEnv(t, envOpts{})
	for _, f := range []string{`"usage":{"prompt_tokens":0,"completion_tokens":0}`, `"tenant":"b"`, `"tenant_id":"b"`} {
		resp := e.chat(ctxT(t), "key-a", `{"model":"demo-chat",`+f+`,"messages":[{"role":"user","content":"hi"}]}`, "")
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(string(b), `"code":"invalid_request"`) {
			t.Errorf("%s: %d %s", f, resp.StatusCode, b)
		}
	}
	if n := len(e.demo.Stats().Requests); n != 0 {
		t.Errorf("upstream saw %d requests", n)
	}
	runs, err := e.store.Runs(context.Background(), ledger.RunFilter{})
	if err != nil || len(runs) != 0 {
		t.Errorf("ledger has %d runs (%v)", len(runs), err)
	}
}

// An HTTP error answer before any output releases the hold with the answer
// as evidence; the client gets the mapped error and the run id.
func TestUpstreamHTTPErrorReleasesHold(t *testing.T) {
	tests := []struct {
		plan       demo.Plan
		status     int
		code       string
		retryAfter string
	}{
		{demo.Plan{Kind: demo.KindError, Status: 500}, 502, ledger.CodeUpstreamError, ""},
		{demo.Plan{Kind: demo.KindError, Status: 429, RetryAfter: "7"}, 429, ledger.CodeUpstreamBusy, "7"},
		{demo.Plan{Kind: demo.KindError, Status: 504}, 504, ledger.CodeUpstreamTimeout, ""},
	}
	for _, tt := range tests {
		t.Run(tt.code, func(t *testing.T) {
			e := newEnv(t, envOpts{plan: tt.plan})
			resp := e.chat(ctxT(t), "key-a", hiBody, "")
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			id := runID(t, resp)
			if resp.StatusCode != tt.status || !strings.Contains(string(b), `"code":"`+tt.code+`"`) || resp.Header.Get("Retry-After") != tt.retryAfter {
				t.Errorf("got %d Retry-After=%q %s", resp.StatusCode, resp.Header.Get("Retry-After"), b)
			}
			run := e.waitEnd(id)
			if run.Status != ledger.RunFailed || run.Usage != ledger.UsageReleased || run.HeldUnits != 0 || run.SpentUnits != 0 ||
				!strings.Contains(run.Evidence, fmt.Sprintf("upstream_status=%d", tt.plan.Status)) {
				t.Errorf("run %+v, want failed/released with the upstream status as evidence", run)
			}
			if b := e.balance("a"); b.AvailableUnits != 110 {
				t.Errorf("balance %+v, want everything available again", b)
			}
		})
	}
}

// An upstream that cannot be reached did no work: released, 502.
func TestUnreachableUpstreamReleasesHold(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	e := newEnv(t, envOpts{modify: func(o *gateway.Options) {
		c, err := upstream.New(upstream.Options{Name: "demo", BaseURL: "http://" + addr + "/v1", Models: []string{"demo-chat"}})
		if err != nil {
			t.Fatal(err)
		}
		o.Upstreams = []gateway.Upstream{c}
	}})
	resp := e.chat(ctxT(t), "key-a", hiBody, "")
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 502 || !strings.Contains(string(b), `"code":"upstream_error"`) {
		t.Errorf("got %d %s", resp.StatusCode, b)
	}
	run := e.waitEnd(runID(t, resp))
	if run.Usage != ledger.UsageReleased || run.HeldUnits != 0 || !strings.HasPrefix(run.Evidence, "upstream_connect_error") {
		t.Errorf("run %+v", run)
	}
}

// A request that reached the upstream but got no headers in time keeps its
// hold: the provider may be working on it.
func TestResponseHeaderTimeoutKeepsHold(t *testing.T) {
	e := newEnv(t, envOpts{plan: demo.Plan{LatencyMin: time.Minute},
		upstream: upstream.Options{ResponseHeaderTimeout: 100 * time.Millisecond}})
	resp := e.chat(ctxT(t), "key-a", hiBody, "")
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 504 || !strings.Contains(string(b), `"code":"upstream_timeout"`) {
		t.Errorf("got %d %s", resp.StatusCode, b)
	}
	run := e.waitEnd(runID(t, resp))
	if run.Status != ledger.RunFailed || run.Usage != ledger.UsageUnknown || run.HeldUnits != 22 {
		t.Errorf("run %+v, want failed/unknown with 22 held", run)
	}
}
