package server_test

import (
	"context"
	"encoding/csv"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/server"
)

func post(t *testing.T, s *server.Server, path, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", s.URL()+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+s.AdminToken())
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestReconcileAndAudit drives the admin API against the real SQLite ledger:
// a run interrupted mid-stream keeps its 102-unit hold (seed 000), the
// operator reconciles it at 15 with evidence, exactly once, and the audit
// export shows it with the evidence made formula-safe.
func TestReconcileAndAudit(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, nil)
	ctx := context.Background()
	st := s.Store()
	if _, err := st.Admit(ctx, ledger.AdmitRequest{RunID: "run_1", TenantID: "local", Upstream: "demo", Model: "demo-chat", ReserveUnits: 102, Actor: ledger.System("test")}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.KeepHold(ctx, "run_1", ledger.RunInterrupted, "stream cut before [DONE]", ledger.System("test")); err != nil {
		t.Fatal(err)
	}
	state, err := s.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(state.Holds) != 1 || state.Tenants[0].HeldUnits != 102 || state.Tenants[0].AvailableUnits != 1_000_000-102 {
		t.Fatalf("before reconcile: holds %v tenants %+v", state.Holds, state.Tenants)
	}

	sub := s.Hub().Subscribe()
	defer sub.Close()
	for _, tc := range []struct {
		name, path, body string
		want             int
		contains         string
	}{
		{"NoEvidence", "/admin/api/holds/run_1/reconcile", `{"units":15,"evidence":""}`, 400, "invalid_request"},
		{"OverReserve", "/admin/api/holds/run_1/reconcile", `{"units":103,"evidence":"bill"}`, 400, "invalid_request"},
		{"MissingUnits", "/admin/api/holds/run_1/reconcile", `{"evidence":"bill"}`, 400, "units is required"},
		{"UnknownRun", "/admin/api/holds/nope/reconcile", `{"units":1,"evidence":"bill"}`, 404, "run_not_found"},
		{"OK", "/admin/api/holds/run_1/reconcile", `{"units":15,"evidence":"=console figure 15"}`, 200, `"usage":"reconciled"`},
		{"Twice", "/admin/api/holds/run_1/reconcile", `{"units":15,"evidence":"again"}`, 409, "not_held"},
	} {
		code, body := post(t, s, tc.path, tc.body)
		if code != tc.want || !strings.Contains(body, tc.contains) {
			t.Errorf("%s: %d %s, want %d containing %q", tc.name, code, body, tc.want, tc.contains)
		}
	}
	if c := <-sub.C(); len(c.Commit) != 1 || c.Commit[0].RunID != "run_1" || c.Commit[0].Kind != ledger.AuditReconcile {
		t.Fatalf("change %+v, want the reconcile of run_1", c)
	}
	state, _ = s.State(ctx)
	if len(state.Holds) != 0 || state.Tenants[0].SpentUnits != 15 || state.Tenants[0].AvailableUnits != 1_000_000-15 {
		t.Fatalf("after reconcile: holds %v tenants %+v", state.Holds, state.Tenants)
	}

	resp := get(t, s, "/admin/api/audit.csv?tenant=local", s.AdminToken())
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/csv") {
		t.Fatalf("content type %q", ct)
	}
	rows, err := csv.NewReader(resp.Body).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, r := range rows[1:] {
		if r[2] == "reconcile" {
			found = r[4] == "run_1" && r[5] == "operator:admin" && r[7] == "15" && r[11] == "'=console figure 15"
		}
	}
	if !found {
		t.Fatalf("no reconcile row with actor admin, 15 units and escaped evidence in %q", rows)
	}
	if code := get(t, s, "/admin/api/audit.csv?from=yesterday", s.AdminToken()).StatusCode; code != 400 {
		t.Fatalf("bad from: %d, want 400", code)
	}
	var sb strings.Builder
	if err := s.WriteAuditCSV(ctx, &sb, "", "", "local"); err != nil || !strings.Contains(sb.String(), "reconcile") {
		t.Fatalf("WriteAuditCSV: %v %q", err, sb.String())
	}

	s.Close()
	diffs, err := server.Verify(ctx, server.Options{DataDir: dir})
	if err != nil || len(diffs) != 0 {
		t.Fatalf("Verify after reconcile: %v %v", diffs, err)
	}
}
