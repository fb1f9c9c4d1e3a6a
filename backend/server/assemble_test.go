package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/config"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/server"
)

func do(t *testing.T, method, url, tok, body string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// The embedded default (`make run`) serves a real completion: the local key,
// the demo upstream over loopback, tiktoken metering, a trusted settlement,
// and the dashboard's state showing it.
func TestDefaultAssemblyStreamsAndSettles(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "data"), nil)
	key := s.GeneratedKeys()["local"]

	resp, body := do(t, "POST", s.URL()+"/v1/chat/completions", key,
		`{"model":"demo-chat","stream":true,"max_tokens":64,"messages":[{"role":"user","content":"Say hello."}]}`)
	if resp.StatusCode != 200 {
		t.Fatalf("chat: %d %s", resp.StatusCode, body)
	}
	id := resp.Header.Get("X-Run-Id")
	if id == "" || !bytes.HasSuffix(bytes.TrimSpace(body), []byte("data: [DONE]")) {
		t.Fatalf("run id %q, stream tail %q", id, body[max(0, len(body)-80):])
	}
	run := waitRun(t, s, key, id)
	if run.Status != ledger.RunCompleted || run.Usage != ledger.UsageTrusted || run.SpentUnits <= 0 || run.HeldUnits != 0 {
		t.Fatalf("run = %+v, want completed, trusted, spent > 0, nothing held", run)
	}

	_, b := do(t, "GET", s.URL()+"/admin/api/state", s.AdminToken(), "")
	var st struct {
		Tenants []ledger.Balance `json:"tenants"`
		Gates   []struct {
			Upstream string `json:"upstream"`
			Admitted int    `json:"admitted"`
		} `json:"gates"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Tenants) != 1 || st.Tenants[0].SpentUnits != run.SpentUnits || st.Tenants[0].Check() != nil {
		t.Errorf("state tenants = %+v, want local with spent %d", st.Tenants, run.SpentUnits)
	}
	if len(st.Gates) != 1 || st.Gates[0].Upstream != "demo" || st.Gates[0].Admitted != 1 {
		t.Errorf("state gates = %+v, want demo with one admitted call", st.Gates)
	}
}

// The operator's cancel from the dashboard reaches a run in flight: the demo
// stalls, the admin API cancels, the run ends cancelled with its hold kept.
func TestAdminCancelsRunInFlight(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "data"), nil)
	key := s.GeneratedKeys()["local"]
	req, _ := http.NewRequest("POST", s.URL()+"/v1/chat/completions",
		strings.NewReader(`{"model":"demo-chat","stream":true,"max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("X-Demo-Plan", "kind=stall")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	id := resp.Header.Get("X-Run-Id")
	if resp.StatusCode != 200 || id == "" {
		t.Fatalf("chat: %d, run id %q", resp.StatusCode, id)
	}
	cr, b := do(t, "POST", s.URL()+"/admin/api/runs/"+id+"/cancel", s.AdminToken(), "")
	if cr.StatusCode != http.StatusAccepted {
		t.Fatalf("cancel: %d %s", cr.StatusCode, b)
	}
	rest, _ := io.ReadAll(bufio.NewReader(resp.Body))
	if bytes.Contains(rest, []byte("[DONE]")) {
		t.Errorf("a cancelled stream ended with [DONE]: %q", rest)
	}
	run := waitRun(t, s, key, id)
	if run.Status != ledger.RunCancelled || run.Usage != ledger.UsageUnknown || run.HeldUnits != run.ReserveUnits {
		t.Fatalf("run = %+v, want cancelled, usage unknown, reserve held", run)
	}
}

// A guarded model refuses until its balance is known, then admits against
// the limit the manual reading gives, and shows it in the admin state.
func TestGuardedModelFollowsManualBalance(t *testing.T) {
	s := openYAML(t, `
meter: utf8-bytes-v1
tenants: [{id: a, key: sk-test-aaaaaaaa, budget_units: 100000, max_concurrent: 2}]
upstreams:
  - {name: demo, kind: demo, models: [demo-chat], quota: {daily_cap: 2000000, timezone: UTC}}
`)
	chat := `{"model":"demo-chat","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`

	resp, b := do(t, "POST", s.URL()+"/v1/chat/completions", "sk-test-aaaaaaaa", chat)
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(b), "quota_guard") {
		t.Fatalf("before any balance reading: %d %s, want 429 quota_guard", resp.StatusCode, b)
	}
	resp, b = do(t, "POST", s.URL()+"/admin/api/quota/demo/demo-chat/balance", s.AdminToken(), `{"b0": 1000000}`)
	if resp.StatusCode != 200 {
		t.Fatalf("record b0: %d %s", resp.StatusCode, b)
	}
	resp, b = do(t, "POST", s.URL()+"/v1/chat/completions", "sk-test-aaaaaaaa", chat)
	if resp.StatusCode != 200 {
		t.Fatalf("after b0: %d %s", resp.StatusCode, b)
	}
	_, b = do(t, "GET", s.URL()+"/admin/api/state", s.AdminToken(), "")
	var st struct {
		Quota []struct {
			Upstream   string       `json:"upstream"`
			Limit      ledger.Units `json:"limit"`
			UsageToday ledger.Units `json:"usage_today"`
			Evicted    bool         `json:"evicted"`
		} `json:"quota"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	// limit = min(cap, B0 − small buffer 50,000)
	if len(st.Quota) != 1 || st.Quota[0].Limit != 950_000 || st.Quota[0].UsageToday <= 0 || st.Quota[0].Evicted {
		t.Fatalf("quota state = %+v, want limit 950000 and today's usage counted", st.Quota)
	}
}

func waitRun(t *testing.T, s *server.Server, key, id string) ledger.Run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		_, b := do(t, "GET", s.URL()+"/v1/runs/"+id, key, "")
		var run ledger.Run
		if err := json.Unmarshal(b, &run); err != nil {
			t.Fatalf("run %s: %v (%s)", id, err, b)
		}
		if run.Status.Ended() {
			return run
		}
		select {
		case <-ctx.Done():
			t.Fatalf("run %s did not end: %+v", id, run)
		case <-time.After(10 * time.Millisecond): // polling an observable state, with a deadline
		}
	}
}

// Units settled by a reconciliation count toward a guarded model's usage at
// once: reconciling a held run past the usage wall evicts the model.
func TestReconcileReachesQuotaGuard(t *testing.T) {
	s := openYAML(t, `
meter: utf8-bytes-v1
tenants: [{id: a, key: sk-test-aaaaaaaa, budget_units: 100000, max_concurrent: 2}]
upstreams:
  - {name: demo, kind: demo, models: [demo-chat],
     quota: {daily_cap: 1000, small_buffer: 10, usage_wall: 500, balance_wall: 1, burst_sync: 1000000, timezone: UTC}}
`)
	if resp, b := do(t, "POST", s.URL()+"/admin/api/quota/demo/demo-chat/balance", s.AdminToken(), `{"b0": 1000}`); resp.StatusCode != 200 {
		t.Fatalf("record b0: %d %s", resp.StatusCode, b)
	}
	req, _ := http.NewRequest("POST", s.URL()+"/v1/chat/completions",
		strings.NewReader(`{"model":"demo-chat","stream":true,"max_tokens":600,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer sk-test-aaaaaaaa")
	req.Header.Set("X-Demo-Plan", "kind=cut&after=1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	id := resp.Header.Get("X-Run-Id")
	if run := waitRun(t, s, "sk-test-aaaaaaaa", id); run.HeldUnits != 602 {
		t.Fatalf("cut run %+v, want 602 held", run)
	}
	if resp, b := do(t, "POST", s.URL()+"/admin/api/holds/"+id+"/reconcile", s.AdminToken(),
		`{"units": 600, "evidence": "provider console: 600 tokens"}`); resp.StatusCode != 200 {
		t.Fatalf("reconcile: %d %s", resp.StatusCode, b)
	}
	// The eviction is audited by the reconcile itself, before any reader
	// (the dashboard's state, the next call) looks at the guard.
	audit, err := s.Store().Audit(context.Background(), ledger.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	at := slices.IndexFunc(audit, func(e ledger.AuditEntry) bool { return e.Kind == ledger.AuditReconcile })
	if at < 0 || !slices.ContainsFunc(audit[at:], func(e ledger.AuditEntry) bool { return e.Kind == ledger.AuditEvict }) {
		t.Fatalf("no eviction audited after the reconcile: %+v", audit)
	}
	_, b := do(t, "GET", s.URL()+"/admin/api/state", s.AdminToken(), "")
	var st struct {
		Quota []struct {
			UsageToday ledger.Units `json:"usage_today"`
			Evicted    bool         `json:"evicted"`
		} `json:"quota"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Quota) != 1 || st.Quota[0].UsageToday != 600 || !st.Quota[0].Evicted {
		t.Fatalf("quota after reconcile = %+v, want usage 600 and evicted at the 500 wall", st.Quota)
	}
}

// The nightly top-up spends what is left of the day's free quota through the
// gateway itself, as the system tenant, and stops below the usage wall. The
// quota's zone is chosen so that it is about noon there, and top_up.at 06:00
// is then past, whatever the time of the run; the balance comes from a
// loopback http-json source.
func TestTopUpSpendsThroughTheGateway(t *testing.T) {
	bal := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, `{"data":{"available":20000}}`)
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go bal.Serve(ln)
	t.Cleanup(func() { bal.Close() })
	offset := 12 - time.Now().UTC().Hour()     // hours east of UTC where it is about noon
	zone := fmt.Sprintf("Etc/GMT%+d", -offset) // POSIX sign: Etc/GMT-3 is UTC+3
	loc, err := time.LoadLocation(zone)
	if err != nil {
		t.Fatal(err)
	}
	s := openYAML(t, `
meter: utf8-bytes-v1
tenants: [{id: a, key: sk-test-aaaaaaaa, budget_units: 100000}]
upstreams:
  - name: demo
    kind: demo
    models: [demo-chat]
    quota:
      daily_cap: 20000
      small_buffer: 100
      usage_wall: 19000
      balance_wall: 1
      timezone: `+zone+`
      top_up: {enabled: true, at: "06:00"}
      balance: {kind: http-json, url: "http://`+ln.Addr().String()+`/b", field: data.available}
`)
	if _, ok := s.GeneratedKeys()["topup"]; ok {
		t.Error("the top-up tenant's key is printed with the generated keys")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var done ledger.AuditEntry
	for done.Seq == 0 {
		audit, err := s.Store().Audit(ctx, ledger.AuditFilter{TenantID: "topup"})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range audit {
			if e.Reason == "topup_done" {
				done = e
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no topup_done audited; audit so far: %+v", audit)
		case <-time.After(20 * time.Millisecond): // polling the audit log, with a deadline
		}
	}
	b, err := s.Store().Balance(ctx, "topup")
	if err != nil {
		t.Fatal(err)
	}
	day := time.Now().In(loc).Format("2006-01-02")
	q, err := s.Store().QuotaUsage(ctx, "demo", "demo-chat", day)
	if err != nil {
		t.Fatal(err)
	}
	// Each filler call needs 4,608 units of room below the wall (19,000 − 1).
	if b.SpentUnits <= 0 || q.UsageUnits != b.SpentUnits || q.UsageUnits > 19_000-1 || q.UsageUnits < 19_000-1-4608-1000 {
		t.Fatalf("top-up spent %d, quota usage %d; want it to fill up to the wall (done: %+v)", b.SpentUnits, q.UsageUnits, done)
	}
	if diffs, err := s.Store().Verify(ctx); err != nil || len(diffs) > 0 {
		t.Fatalf("verify: %v %v", diffs, err)
	}
}

// A config change takes effect at the next call: a revoked key is refused at
// once (not after the gateway's tenant refresh), and a new request limit
// applies.
func TestApplyTenantsTakesEffectAtOnce(t *testing.T) {
	s := openYAML(t, `
meter: utf8-bytes-v1
tenants: [{id: a, key: sk-old-aaaaaaaa, budget_units: 100000, max_concurrent: 2}]
upstreams: [{name: demo, kind: demo, models: [demo-chat]}]
`)
	chat := `{"model":"demo-chat","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`
	if resp, b := do(t, "POST", s.URL()+"/v1/chat/completions", "sk-old-aaaaaaaa", chat); resp.StatusCode != 200 {
		t.Fatalf("before: %d %s", resp.StatusCode, b)
	}
	next := []config.Tenant{{ID: "a", BudgetUnits: 100000, MaxConcurrent: 2,
		KeyHashes: []string{ledger.HashKey("sk-new-aaaaaaaa")}, RateLimits: config.RateLimits{PerMinute: 1}}}
	if err := s.ApplyTenants(context.Background(), next); err != nil {
		t.Fatal(err)
	}
	if resp, b := do(t, "POST", s.URL()+"/v1/chat/completions", "sk-old-aaaaaaaa", chat); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("revoked key: %d %s, want 401 at once", resp.StatusCode, b)
	}
	if resp, b := do(t, "POST", s.URL()+"/v1/chat/completions", "sk-new-aaaaaaaa", chat); resp.StatusCode != 200 {
		t.Fatalf("new key: %d %s", resp.StatusCode, b)
	}
	if resp, b := do(t, "POST", s.URL()+"/v1/chat/completions", "sk-new-aaaaaaaa", chat); resp.StatusCode != http.StatusTooManyRequests ||
		!strings.Contains(string(b), "rate_limited") {
		t.Fatalf("second call under per_minute 1: %d %s, want 429 rate_limited", resp.StatusCode, b)
	}
}
