package e2e_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/ledger"
)

// TestReliabilityRoutes: the routes as SDKs and misconfigured tools meet
// them: unknown routes 404 not_found and a
// wrong method 405 with Allow, both OpenAI-shaped; a base URL without /v1
// is told to add it; GET /v1/models/{id}; GET /v1/runs?limit=N lists the
// caller's own runs only; the Bearer scheme in any case on /v1 and /admin;
// an upstream 200 that is not an answer (text/html) is an upstream error
// that keeps the hold, never a clean empty completion; the admin API
// refuses duplicate JSON keys and changes nothing.
func TestReliabilityRoutes(t *testing.T) {
	t.Parallel()
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<html><body>Please log in to the proxy</body></html>")
	}))
	t.Cleanup(html.Close)
	r := newRig(t, rigOptions{extraUpstreams: fmt.Sprintf(
		"  - {name: html, kind: openai, base_url: %q, api_key: sk-html-upstream-key-000000, models: [html-chat]}", html.URL)})

	for i := range 3 {
		if got := r.chat(r.keyA, chatBody(fmt.Sprintf("hello %d", i), false, 16)); got.status != 200 {
			t.Fatalf("call %d: %d %s", i, got.status, got.body)
		}
	}
	if got := r.chat(r.keyB, chatBody("b's own", false, 16)); got.status != 200 {
		t.Fatalf("b: %d %s", got.status, got.body)
	}

	for _, tc := range []struct {
		name, method, path, auth string
		status                   int
		code, allow, contains    string
	}{
		{"UnknownRoute", "GET", "/v1/nope", "Bearer " + canaryKeyA, 404, "not_found", "", "not a quotagate endpoint"},
		{"UnknownPost", "POST", "/v1/audio/speech", "Bearer " + canaryKeyA, 404, "not_found", "", ""},
		{"WrongMethodChat", "GET", "/v1/chat/completions", "Bearer " + canaryKeyA, 405, "method_not_allowed", "POST", ""},
		{"WrongMethodModels", "DELETE", "/v1/models", "Bearer " + canaryKeyA, 405, "method_not_allowed", "GET, HEAD", ""},
		{"WrongMethodRun", "POST", "/v1/runs/run_x", "Bearer " + canaryKeyA, 405, "method_not_allowed", "GET, DELETE, HEAD", ""},
		{"MissingV1", "POST", "/chat/completions", "Bearer " + canaryKeyA, 404, "not_found", "", "add /v1"},
		{"ModelByID", "GET", "/v1/models/demo-chat", "Bearer " + canaryKeyA, 200, "", "", `"id":"demo-chat"`},
		{"UnknownModelByID", "GET", "/v1/models/gpt-nope", "Bearer " + canaryKeyA, 404, "model_not_found", "", ""},
		{"BearerLowercase", "GET", "/v1/balance", "bearer " + canaryKeyA, 200, "", "", `"budget_units"`},
		{"BearerUppercase", "GET", "/v1/balance", "BEARER " + canaryKeyA, 200, "", "", `"budget_units"`},
		{"AdminBearerMixedCase", "GET", "/admin/api/state", "bEaReR " + canaryAdmin, 200, "", "", `"tenants"`},
		{"RunsBadLimit", "GET", "/v1/runs?limit=0", "Bearer " + canaryKeyA, 400, "invalid_request", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, r.s.URL()+tc.path, strings.NewReader("{}"))
			req.Header.Set("Authorization", tc.auth)
			req.Header.Set("Content-Type", "application/json")
			got := send(t, req)
			if got.status != tc.status || got.errorCode() != tc.code || !strings.Contains(string(got.body), tc.contains) {
				t.Fatalf("%s %s: %d %s; want %d %q containing %q", tc.method, tc.path, got.status, got.body, tc.status, tc.code, tc.contains)
			}
			if a := got.header.Get("Allow"); a != tc.allow {
				t.Errorf("Allow %q, want %q", a, tc.allow)
			}
			if tc.code != "" && !strings.HasPrefix(got.header.Get("Content-Type"), "application/json") {
				t.Errorf("error Content-Type %q", got.header.Get("Content-Type"))
			}
		})
	}

	t.Run("OwnRuns", func(t *testing.T) {
		got := r.do("GET", "/v1/runs?limit=2", r.keyA, "", "")
		var list struct {
			Object string       `json:"object"`
			Data   []ledger.Run `json:"data"`
		}
		if err := json.Unmarshal(got.body, &list); err != nil || got.status != 200 || list.Object != "list" || len(list.Data) != 2 {
			t.Fatalf("GET /v1/runs?limit=2: %d %s", got.status, got.body)
		}
		for _, run := range list.Data {
			if run.TenantID != "a" {
				t.Errorf("tenant a sees a run of %s", run.TenantID)
			}
		}
		got = r.do("GET", "/v1/runs", r.keyB, "", "")
		if err := json.Unmarshal(got.body, &list); err != nil || len(list.Data) != 1 || list.Data[0].TenantID != "b" {
			t.Errorf("tenant b's runs: %s", got.body)
		}
	})

	t.Run("UpstreamHTMLIsAnError", func(t *testing.T) {
		for _, stream := range []bool{false, true} {
			body := strings.Replace(chatBody("hi", stream, 16), "demo-chat", "html-chat", 1)
			got := r.chat(r.keyA, body)
			if got.status != 502 || got.errorCode() != "upstream_error" || strings.Contains(string(got.body), "[DONE]") {
				t.Fatalf("stream=%v: %d %s; want 502 upstream_error", stream, got.status, got.body)
			}
			run := r.waitRun(got.runID())
			if run.Usage != ledger.UsageUnknown || run.HeldUnits != run.ReserveUnits || !strings.Contains(run.Evidence, "text/html") {
				t.Errorf("stream=%v: run %+v; want its hold kept with the Content-Type as evidence", stream, run)
			}
		}
	})

	t.Run("AdminDuplicateKeys", func(t *testing.T) {
		got := r.chat(r.keyA, chatBody("/demo kind=cut&after=1", true, 16))
		run := r.waitRun(got.runID())
		if run.Usage != ledger.UsageUnknown {
			t.Fatalf("a cut stream: %+v", run)
		}
		before := r.counts()
		rec := r.admin("POST", "/admin/api/holds/"+string(run.ID)+"/reconcile", `{"units":22,"units":0,"evidence":"provider bill #1"}`)
		if rec.status != 400 || !strings.Contains(string(rec.body), "twice") {
			t.Fatalf("reconcile with a duplicate key: %d %s, want 400", rec.status, rec.body)
		}
		if after := r.counts(); after != before {
			t.Errorf("a refused reconcile changed the ledger: %+v → %+v", before, after)
		}
	})
}
