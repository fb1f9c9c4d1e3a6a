package server_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/server"
)

// chatPlan posts a chat completion with a demo plan and returns the status
// and run id once the answer is read whole.
func chatPlan(t *testing.T, s *server.Server, key, plan string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", s.URL()+"/v1/chat/completions",
		strings.NewReader(`{"model":"demo-chat","stream":true,"max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer "+key)
	if plan != "" {
		req.Header.Set("X-Demo-Plan", plan)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return 0, ""
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return resp.StatusCode, resp.Header.Get("X-Run-Id")
}

// waitQueued polls the ledger for a run waiting at the gate.
func waitQueued(t *testing.T, s *server.Server) ledger.RunID {
	t.Helper()
	return waitStatus(t, s, ledger.RunQueued)
}

// waitActive polls the ledger for the one active run.
func waitActive(t *testing.T, s *server.Server) ledger.RunID {
	t.Helper()
	return waitStatus(t, s, ledger.RunActive)
}

// waitStatus polls the ledger (an observable state, with a deadline) for a
// run in status.
func waitStatus(t *testing.T, s *server.Server, status ledger.RunStatus) ledger.RunID {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		runs, err := s.Store().Runs(context.Background(), ledger.RunFilter{})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range runs {
			if r.Status == status {
				return r.ID
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no %s run within 10s", status)
	return ""
}

// Every audit row of every transition of a run names its actor, read back
// through the CSV export: the tenant for its own call (admit, start, settle,
// hold, release) as tenant:<id>, the operator for a cancel and a reconcile
// from the dashboard, the config for tenants applied at start.
func TestAuditNamesEveryActor(t *testing.T) {
	s := openYAML(t, `
meter: utf8-bytes-v1
tenants: [{id: a, key: sk-test-aaaaaaaa, budget_units: 100000, max_concurrent: 4}]
upstreams:
  - {name: demo, kind: demo, models: [demo-chat], max_concurrent: 1, queue: {max_waiters: 4, max_wait: 30s}}
`)
	const key = "sk-test-aaaaaaaa"

	// A stalls holding the gate's one slot; B queues behind it.
	stalled := make(chan string, 1)
	go func() { _, id := chatPlan(t, s, key, "kind=stall"); stalled <- id }()
	stallID := waitActive(t, s)
	queued := make(chan string, 1)
	go func() { _, id := chatPlan(t, s, key, ""); queued <- id }()
	queuedID := waitQueued(t, s)
	// The operator cancels A from the dashboard; B starts and settles.
	if code, b := post(t, s, "/admin/api/runs/"+string(stallID)+"/cancel", ""); code != http.StatusAccepted {
		t.Fatalf("cancel: %d %s", code, b)
	}
	<-stalled
	if id := <-queued; id != string(queuedID) {
		t.Fatalf("queued run %s answered as %s", queuedID, id)
	}
	// C is cut (hold kept), then reconciled by the operator; D is refused
	// by the upstream before any output (hold released).
	_, cutID := chatPlan(t, s, key, "kind=cut&after=1")
	waitRun(t, s, key, cutID)
	if code, b := post(t, s, "/admin/api/holds/"+cutID+"/reconcile", `{"units": 3, "evidence": "console: 3"}`); code != 200 {
		t.Fatalf("reconcile: %d %s", code, b)
	}
	if code, _ := chatPlan(t, s, key, "kind=error&status=500"); code != http.StatusBadGateway {
		t.Fatalf("upstream error: %d, want 502", code)
	}

	resp, body := do(t, "GET", s.URL()+"/admin/api/audit.csv", s.AdminToken(), "")
	if resp.StatusCode != 200 {
		t.Fatalf("audit.csv: %d %s", resp.StatusCode, body)
	}
	rows, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	const kindCol, runCol, actorCol = 2, 4, 5
	got := map[string]map[string]string{} // run → kind → actor
	for _, r := range rows[1:] {
		if r[actorCol] == "" {
			t.Errorf("audit row without an actor: %q", r)
		}
		if r[runCol] == "" {
			continue
		}
		if got[r[runCol]] == nil {
			got[r[runCol]] = map[string]string{}
		}
		got[r[runCol]][r[kindCol]] = r[actorCol]
	}
	want := map[string]map[string]string{
		string(stallID):  {"admit": "tenant:a", "cancel": "operator:admin"},
		string(queuedID): {"admit": "tenant:a", "start": "tenant:a", "settle": "tenant:a"},
		cutID:            {"admit": "tenant:a", "hold": "tenant:a", "reconcile": "operator:admin"},
	}
	for run, kinds := range want {
		for kind, actor := range kinds {
			if got[run][kind] != actor {
				t.Errorf("run %s %s: actor %q, want %q (rows of the run: %v)", run, kind, got[run][kind], actor, got[run])
			}
		}
	}
	released := 0
	for run, kinds := range got {
		if kinds["release"] == "tenant:a" && kinds["admit"] == "tenant:a" {
			released++
			if _, ok := want[run]; ok {
				t.Errorf("run %s released", run)
			}
		}
	}
	if released != 1 {
		t.Errorf("%d runs released by their tenant, want the one the upstream refused: %v", released, got)
	}
}
