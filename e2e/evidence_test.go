package e2e_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/config"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/live"
	"github.com/quotagate/quotagate/backend/server"
	"github.com/quotagate/quotagate/backend/upstream/demo"
)

const evidenceKey = "sk-e2e-evidence-Rw4Kt9Pz2Qm7"

// The provider's figure delay: 2 s after the cut, as a usage endpoint
// that records a call a moment after it ended (OpenRouter's default is
// the gateway's 10 s; shorter here to keep make test quick).
const evidenceConfig = `
meter: tiktoken
tenants: [{id: a, key: ` + evidenceKey + `, budget_units: 100000, max_concurrent: 4}]
upstreams:
  - name: demo
    kind: demo
    models: [demo-chat]
    usage_lookup: {kind: openrouter, delay: 2s, window: 1m}
    auto_reconcile: true
`

// TestCutStreamSettledByProvider: a stream the demo cuts mid-answer, on an
// upstream with usage_lookup and auto_reconcile, ends settled at the
// provider's own figure without anyone typing a number — even though the
// provider answered 404 to the first lookup. The reconcile row's actor is
// provider:demo, audit.csv carries the provider's id, verify is clean. The
// log says how long after the cut it settled.
func TestCutStreamSettledByProvider(t *testing.T) {
	t.Parallel()
	cfg, err := config.Parse([]byte(evidenceConfig), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	s, err := server.Open(context.Background(), server.Options{Config: cfg, DataDir: filepath.Join(t.TempDir(), "data"), Addr: "127.0.0.1:0", Version: "e2e"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	s.Demo("demo").SetLookup(demo.Lookup{Late: 1})
	sub := s.Hub().Subscribe()
	defer sub.Close()

	id := cutStream(t, s)
	cut := time.Now()
	run := waitReconciled(t, s, sub, id)
	t.Logf("settled %s after the cut at %d units (%d lookups)", time.Since(cut).Round(10*time.Millisecond), run.SpentUnits+run.OverrunUnits, s.Demo("demo").Lookups())
	if run.HeldUnits != 0 || !strings.HasPrefix(run.ProviderID, "chatcmpl-demo-") || run.SpentUnits <= run.RelayedUnits {
		t.Fatalf("run %+v", run)
	}
	if diffs, err := s.Store().Verify(context.Background()); err != nil || len(diffs) > 0 {
		t.Fatalf("verify: %v %v", diffs, err)
	}
	creq, _ := http.NewRequest("GET", s.URL()+"/admin/api/audit.csv", nil)
	creq.Header.Set("Authorization", "Bearer "+s.AdminToken())
	cresp, err := http.DefaultClient.Do(creq)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(cresp.Body)
	cresp.Body.Close()
	rows, err := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(raw, []byte("\uFEFF")))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	found := false
	for _, r := range rows[1:] {
		if r[col["run"]] == string(id) && r[col["kind"]] == "reconcile" {
			found = r[col["actor"]] == "provider:demo" && r[col["provider_id"]] == run.ProviderID
		}
	}
	if !found {
		t.Fatalf("no reconcile row by provider:demo naming %s in audit.csv:\n%s", run.ProviderID, raw)
	}
}

// waitReconciled waits on sub (subscribed before the run could settle)
// until run id is reconciled, 30 s at most, and returns it.
func waitReconciled(t *testing.T, s *server.Server, sub *live.Subscription, id ledger.RunID) ledger.Run {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		run, err := s.Store().Run(context.Background(), id)
		if err == nil && run.Usage == ledger.UsageReconciled {
			return run
		}
		select {
		case <-sub.C():
		case <-timeout:
			t.Fatalf("run %s not settled by the provider's figure: %+v %v", id, run, err)
		}
	}
}
