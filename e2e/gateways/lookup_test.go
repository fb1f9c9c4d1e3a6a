package gateways_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/evidence"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/postgres/pgtest"
	"github.com/quotagate/quotagate/backend/upstream/demo"
)

// TestHeldRunLookedUpOnce: two gateways share a ledger and an upstream
// with a usage_lookup. A stream the provider cuts ends held on the gateway
// that relayed it; that gateway alone asks the provider, once, and records
// one lookup row, and the other gateway's dashboard shows the same
// finding, learnt from that row.
func TestHeldRunLookedUpOnce(t *testing.T) {
	t.Setenv(envLease, "30s")
	t.Setenv(envConfig, "lookup")
	dsn := pgtest.NewDatabase(t)
	d, err := demo.Start(demo.Options{APIKey: "sk-provider", Models: []string{"demo-lookup"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	gws := startGateways(t, 2, dsn, d.URL())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	a := post(ctx, gws[0], keyA, chatBodyFor("demo-lookup", "/demo kind=cut&after=2", 40))
	if a.status != http.StatusOK {
		t.Fatalf("status %d %s", a.status, a.code)
	}
	readEnd(a.resp)
	id := ledger.RunID(a.runID)
	st := openStore(ctx, t, dsn)
	waitRun(ctx, t, st, id, func(r ledger.Run) bool { return r.Status.Ended() && r.Usage == ledger.UsageUnknown })

	// Each gateway's dashboard ends up showing the provider's figure.
	var seen [2]evidence.Finding
	for i, gw := range gws {
		seen[i] = waitFinding(ctx, t, gw, id)
	}
	if seen[0].State != evidence.Found || seen[1].Input != seen[0].Input || seen[1].Output != seen[0].Output {
		t.Fatalf("findings: %s shows %+v, %s shows %+v", gws[0].name, seen[0], gws[1].name, seen[1])
	}
	lookups := 0
	for _, r := range auditOf(ctx, t, st, id) {
		if r.Kind == evidence.AuditLookup {
			lookups++
		}
	}
	if n := d.Lookups(); n != 1 || lookups != 1 {
		t.Fatalf("the provider was asked %d times and %d lookup rows were recorded, want 1 and 1", n, lookups)
	}
}

// waitFinding polls gw's dashboard state until it shows a final finding
// for run id (the lookup happens in another process).
func waitFinding(ctx context.Context, t *testing.T, gw *gateway, id ledger.RunID) evidence.Finding {
	t.Helper()
	for {
		status, body := do(t, "GET", gw.url+"/admin/api/state", adminToken)
		var st struct {
			Evidence map[ledger.RunID]evidence.Finding `json:"evidence"`
		}
		if status != http.StatusOK || json.Unmarshal([]byte(body), &st) != nil {
			t.Fatalf("%s state: %d %s", gw.name, status, body)
		}
		if f, ok := st.Evidence[id]; ok && f.State != evidence.Looking {
			return f
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s shows no final finding for run %s: %v", gw.name, id, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
