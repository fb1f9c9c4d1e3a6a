package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/admin"
	"github.com/quotagate/quotagate/backend/evidence"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/server"
	"github.com/quotagate/quotagate/backend/upstream/demo"
)

func lookupYAML(auto bool) string {
	a := "false"
	if auto {
		a = "true"
	}
	return `
meter: tiktoken
tenants: [{id: a, key: sk-test-aaaaaaaa, budget_units: 100000, max_concurrent: 4}]
upstreams:
  - {name: demo, kind: demo, models: [demo-chat], auto_reconcile: ` + a + `,
     usage_lookup: {kind: openrouter, delay: 50ms, window: 1m}}
`
}

// untilRun waits, on the live hub's changes, until cond holds for run id.
func untilRun(t *testing.T, s *server.Server, id string, cond func(ledger.Run) bool) ledger.Run {
	t.Helper()
	sub := s.Hub().Subscribe()
	defer sub.Close()
	timeout := time.After(15 * time.Second)
	for {
		run, err := s.Store().Run(context.Background(), ledger.RunID(id))
		if err == nil && cond(run) {
			return run
		}
		select {
		case <-sub.C():
		case <-timeout:
			t.Fatalf("run %s: condition never held; last %+v %v", id, run, err)
		}
	}
}

// untilFinding waits until the state shows a finding in state st for run id.
func untilFinding(t *testing.T, s *server.Server, id string, st evidence.State) evidence.Finding {
	t.Helper()
	sub := s.Hub().Subscribe()
	defer sub.Close()
	timeout := time.After(15 * time.Second)
	for {
		state, err := s.State(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if f, ok := state.Evidence[ledger.RunID(id)]; ok && f.State == st {
			return f
		}
		select {
		case <-sub.C():
		case <-timeout:
			t.Fatalf("run %s: no %s finding; evidence %+v", id, st, state.Evidence)
		}
	}
}

// A cut stream against the demo with a usage lookup: the hold shows the
// provider's figure within the delay, and Apply through the admin API
// settles it at exactly that figure, by the operator with the provider
// as the source; verify is clean.
func TestCutStreamAppliedFromProvider(t *testing.T) {
	s := openYAML(t, lookupYAML(false))
	_, id := chatPlan(t, s, "sk-test-aaaaaaaa", "kind=cut&after=1")
	held := untilRun(t, s, id, func(r ledger.Run) bool { return r.Usage == ledger.UsageUnknown })
	if !strings.HasPrefix(held.ProviderID, "chatcmpl-demo-") {
		t.Fatalf("provider id %q", held.ProviderID)
	}
	f := untilFinding(t, s, id, evidence.Found)
	if code, b := post(t, s, "/admin/api/holds/"+id+"/reconcile", `{"from_provider": true}`); code != 200 {
		t.Fatalf("reconcile from provider: %d %s", code, b)
	}
	run, _ := s.Store().Run(context.Background(), ledger.RunID(id))
	if run.Usage != ledger.UsageReconciled || int64(run.SpentUnits)+int64(run.OverrunUnits) != f.Input+f.Output {
		t.Fatalf("run %+v, finding %+v", run, f)
	}
	rows, _ := s.Store().Audit(context.Background(), ledger.AuditFilter{RunID: ledger.RunID(id), Kind: ledger.AuditReconcile})
	if len(rows) != 1 || rows[0].Actor != admin.Actor || !strings.Contains(rows[0].Evidence, "source: provider:demo") {
		t.Fatalf("reconcile rows %+v", rows)
	}
	if diffs, err := s.Store().Verify(context.Background()); err != nil || len(diffs) > 0 {
		t.Fatalf("verify: %v %v", diffs, err)
	}
	if code, _ := post(t, s, "/admin/api/holds/"+id+"/reconcile", `{"from_provider": true, "units": 3}`); code != 400 {
		t.Fatalf("from_provider with units: %d, want 400", code)
	}
}

// With auto_reconcile, a cut stream ends settled at the provider's figure
// with nobody typing a number, after the demo's lookup answered 404 twice;
// the audit row's actor is the provider.
func TestCutStreamAutoReconciled(t *testing.T) {
	s := openYAML(t, lookupYAML(true))
	s.Demo("demo").SetLookup(demo.Lookup{Late: 2})
	cut := time.Now()
	_, id := chatPlan(t, s, "sk-test-aaaaaaaa", "kind=cut&after=1")
	run := untilRun(t, s, id, func(r ledger.Run) bool { return r.Usage == ledger.UsageReconciled })
	t.Logf("settled %s after the cut, after %d lookups", time.Since(cut).Round(time.Millisecond), s.Demo("demo").Lookups())
	rows, _ := s.Store().Audit(context.Background(), ledger.AuditFilter{RunID: ledger.RunID(id), Kind: ledger.AuditReconcile})
	if len(rows) != 1 || rows[0].Actor != ledger.Provider("demo") || run.HeldUnits != 0 {
		t.Fatalf("reconcile rows %+v, run %+v", rows, run)
	}
	b, _ := json.Marshal(run)
	if !strings.Contains(string(b), `"provider_id":"chatcmpl-demo-`) {
		t.Fatalf("run JSON %s", b)
	}
}
