package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestRunFactsEverywhere: the per-run facts (door, upstream protocol,
// Idempotency-Key, X-Stainless-Retry-Count) of a held Messages call show on
// /v1/runs, on /admin/api/state's runs and holds, and in the admit row of
// audit.csv; a second call with the key is a 409 naming the run, audited as
// a duplicate_request refusal.
func TestRunFactsEverywhere(t *testing.T) {
	s := openYAML(t, `
meter: utf8-bytes-v1
tenants: [{id: a, key: sk-test-aaaaaaaa, budget_units: 100000, max_concurrent: 4}]
upstreams:
  - {name: demo, kind: demo, models: [demo-chat]}
`)
	const key = "sk-test-aaaaaaaa"
	call := func() *http.Response {
		req, _ := http.NewRequest("POST", s.URL()+"/v1/messages",
			strings.NewReader(`{"model":"demo-chat","max_tokens":10,"messages":[{"role":"user","content":"/demo kind=cut&after=1"}]}`))
		req.Header.Set("x-api-key", key)
		req.Header.Set("anthropic-version", "2023-06-01")
		req.Header.Set("Idempotency-Key", "user-call-42")
		req.Header.Set("X-Stainless-Retry-Count", "0")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	first := call()
	id := first.Header.Get("X-Run-Id")
	if first.StatusCode != http.StatusBadGateway || id == "" {
		t.Fatalf("cut call: %d, run %q", first.StatusCode, id)
	}
	if run := waitRun(t, s, key, id); !run.Usage.Holding() || run.Door != "messages" || run.IdempotencyKey != "user-call-42" {
		t.Fatalf("run %+v", run)
	}
	if dup := call(); dup.StatusCode != http.StatusConflict || dup.Header.Get("X-Run-Id") != id || dup.Header.Get("X-Should-Retry") != "false" {
		t.Fatalf("duplicate: %d X-Run-Id %q", dup.StatusCode, dup.Header.Get("X-Run-Id"))
	}

	type facts struct {
		ID               string `json:"id"`
		Door             string `json:"door"`
		UpstreamProtocol string `json:"upstream_protocol"`
		IdempotencyKey   string `json:"idempotency_key"`
		RetryCount       *int   `json:"retry_count"`
		CachedTokens     *int64 `json:"cached_tokens"`
	}
	want := func(where string, f facts) {
		t.Helper()
		if f.ID != id || f.Door != "messages" || f.UpstreamProtocol != "messages" || f.IdempotencyKey != "user-call-42" ||
			f.RetryCount == nil || *f.RetryCount != 0 || f.CachedTokens == nil {
			t.Errorf("%s: %+v", where, f)
		}
	}
	_, b := do(t, "GET", s.URL()+"/v1/runs?limit=5", key, "")
	var list struct{ Data []facts }
	if err := json.Unmarshal(b, &list); err != nil || len(list.Data) != 1 {
		t.Fatalf("/v1/runs: %v %s", err, b)
	}
	want("/v1/runs", list.Data[0])
	_, b = do(t, "GET", s.URL()+"/admin/api/state", s.AdminToken(), "")
	var st struct{ Runs, Holds []facts }
	if err := json.Unmarshal(b, &st); err != nil || len(st.Runs) != 1 || len(st.Holds) != 1 {
		t.Fatalf("/admin/api/state: %v %s", err, b)
	}
	want("state runs", st.Runs[0])
	want("state holds", st.Holds[0])
	_, b = do(t, "GET", s.URL()+"/admin/api/audit.csv?tenant=a", s.AdminToken(), "")
	csv := string(b)
	if !strings.Contains(csv, "door=messages upstream_protocol=messages idempotency_key=user-call-42") ||
		!strings.Contains(csv, "duplicate_request") {
		t.Fatalf("audit.csv lacks the admit row's facts or the refusal:\n%s", csv)
	}
}
