package gateways_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/evidence"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/postgres"
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
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	h := heldOnFirst(ctx, t, demo.Lookup{})
	d, gws, id := h.demo, h.gws, h.run

	// Each gateway's dashboard ends up showing the provider's figure.
	var seen [2]evidence.Finding
	for i, gw := range gws {
		seen[i] = waitFinding(ctx, t, gw, id)
	}
	if seen[0].State != evidence.Found || seen[1].Input != seen[0].Input || seen[1].Output != seen[0].Output {
		t.Fatalf("findings: %s shows %+v, %s shows %+v", gws[0].name, seen[0], gws[1].name, seen[1])
	}
	lookups := h.lookupRows(ctx, t)
	if n := d.Lookups(); n != 1 || lookups != 1 {
		t.Fatalf("the provider was asked %d times and %d lookup rows were recorded, want 1 and 1", n, lookups)
	}
}

// TestDeadGatewaysHoldAdopted: a gateway dies while the provider has not
// yet answered the lookup of a run it ended held. The gateway that finds
// it dead takes the hold up and settles the lookup: the dashboard of the
// survivor shows the provider's figure, from the one lookup row recorded.
func TestDeadGatewaysHoldAdopted(t *testing.T) {
	t.Setenv(envConfig, "lookup") // the 2 s lease: gw-0 is found dead soon after the kill
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	h := heldOnFirst(ctx, t, demo.Lookup{Never: true}) // the provider has not recorded the call yet
	d, gws, id := h.demo, h.gws, h.run
	for d.Lookups() == 0 { // gw-0 is asking
		select {
		case <-ctx.Done():
			t.Fatal("gw-0 never looked the hold up")
		case <-time.After(20 * time.Millisecond):
		}
	}
	gws[0].cmd.Process.Kill()
	gws[0].cmd.Wait()
	d.SetLookup(demo.Lookup{}) // the provider has the figure now

	f := waitFinding(ctx, t, gws[1], id)
	lookups := h.lookupRows(ctx, t)
	if f.State != evidence.Found || lookups != 1 {
		t.Fatalf("gw-1 shows %+v with %d lookup rows, want found from 1", f, lookups)
	}
}

// held is two gateways on a fresh shared ledger in front of a demo
// upstream, and a run the first ended held (a stream the demo cut).
type held struct {
	demo  *demo.Server
	gws   []*gateway
	store *postgres.Store
	run   ledger.RunID
}

// heldOnFirst starts held's gateways with lookupConfig, the demo's lookup
// scripted by l, and waits until the run ended held.
func heldOnFirst(ctx context.Context, t *testing.T, l demo.Lookup) held {
	t.Helper()
	dsn := pgtest.NewDatabase(t)
	d, err := demo.Start(demo.Options{APIKey: "sk-provider", Models: []string{"demo-lookup"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	d.SetLookup(l)
	h := held{demo: d, gws: startGateways(t, 2, dsn, d.URL()), store: openStore(ctx, t, dsn)}
	a := post(ctx, h.gws[0], keyA, chatBodyFor("demo-lookup", "/demo kind=cut&after=2", 40))
	if a.status != http.StatusOK {
		t.Fatalf("status %d %s", a.status, a.code)
	}
	readEnd(a.resp)
	h.run = ledger.RunID(a.runID)
	waitRun(ctx, t, h.store, h.run, func(r ledger.Run) bool { return r.Status.Ended() && r.Usage == ledger.UsageUnknown })
	return h
}

// lookupRows counts the held run's lookup rows.
func (h held) lookupRows(ctx context.Context, t *testing.T) int {
	n := 0
	for _, r := range auditOf(ctx, t, h.store, h.run) {
		if r.Kind == evidence.AuditLookup {
			n++
		}
	}
	return n
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
