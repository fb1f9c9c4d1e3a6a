package e2e_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/server"
	"github.com/quotagate/quotagate/backend/upstream/demo"
)

// TestReliabilityRestartKeepsHolds is T36 (quit with streams in flight) and
// the recovery half of T16 on the assembled server: a settled run, a held
// (cut) run and a stream still in flight when the server closes. After
// reopening on the same data dir nothing was released without evidence —
// the in-flight run ends with its whole reserve held and usage unknown — the
// balances are what they were, the ledger verifies, and further restarts
// make no transition at all (recovery is idempotent).
func TestReliabilityRestartKeepsHolds(t *testing.T) {
	t.Parallel()
	d, err := demo.Start(demo.Options{APIKey: canaryUpstream})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	dir := t.TempDir()
	r1 := newRig(t, rigOptions{dir: dir, demo: d})

	settled := r1.waitRun(r1.chat(r1.keyA, chatBody("hello", true, 32)).runID())
	cut := r1.waitRun(r1.chat(r1.keyA, chatBody("/demo kind=cut&after=1", true, 32)).runID())
	if settled.Usage != ledger.UsageTrusted || cut.Usage != ledger.UsageUnknown {
		t.Fatalf("setup: settled %+v, cut %+v", settled, cut)
	}

	// A stream in flight at shutdown.
	req, _ := http.NewRequest("POST", r1.s.URL()+"/v1/chat/completions", strings.NewReader(chatBody("/demo kind=stall", true, 32)))
	req.Header.Set("Authorization", "Bearer "+r1.keyA)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	inflight := ledger.RunID(resp.Header.Get("X-Run-Id"))
	if resp.StatusCode != 200 || inflight == "" {
		t.Fatalf("stalled stream: %d %q", resp.StatusCode, inflight)
	}
	if run, _ := r1.s.Store().Run(context.Background(), inflight); run.Status != ledger.RunActive {
		t.Fatalf("setup: in-flight run %+v", run)
	}
	want := r1.balance("a")
	if want.HeldUnits != cut.ReserveUnits+32+16 || want.SpentUnits != settled.SpentUnits {
		t.Fatalf("before close: %+v", want)
	}

	closed := make(chan error, 1)
	start := time.Now()
	go func() { closed <- r1.s.Close() }()
	rest, _ := io.ReadAll(bufio.NewReader(resp.Body)) // ends when the server lets go
	if strings.Contains(string(rest), "[DONE]") {
		t.Errorf("the stream cut by shutdown ended with [DONE]: %q", rest)
	}
	select {
	case err := <-closed:
		if err != nil {
			t.Logf("close: %v", err) // a stream outliving the drain window is cut; not a failure here
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Close did not return within 15 s")
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("shutdown took %v, want within the 10 s drain window", took)
	}

	r2 := newRig(t, rigOptions{dir: dir, demo: d})
	run, err := r2.s.Store().Run(context.Background(), inflight)
	if err != nil {
		t.Fatal(err)
	}
	if !run.Status.Ended() || run.Usage != ledger.UsageUnknown || run.HeldUnits != run.ReserveUnits {
		t.Fatalf("in-flight run after restart %+v: want ended, usage unknown, reserve held", run)
	}
	for _, id := range []ledger.RunID{settled.ID, cut.ID} {
		before := map[ledger.RunID]ledger.Run{settled.ID: settled, cut.ID: cut}[id]
		got, err := r2.s.Store().Run(context.Background(), id)
		if err != nil || got.Status != before.Status || got.Usage != before.Usage || got.SpentUnits != before.SpentUnits || got.HeldUnits != before.HeldUnits {
			t.Errorf("run %s changed across restart: %+v → %+v (%v)", id, before, got, err)
		}
	}
	if got := r2.balance("a"); got.HeldUnits != want.HeldUnits || got.SpentUnits != want.SpentUnits || got.Active != 0 {
		t.Fatalf("balance after restart %+v, want held %d spent %d, 0 active", got, want.HeldUnits, want.SpentUnits)
	}
	r2.verify()
	c2 := r2.counts()
	if err := r2.s.Close(); err != nil {
		t.Fatal(err)
	}
	// A clean close checkpoints the WAL into the database and removes it.
	if fi, err := os.Stat(filepath.Join(dir, server.LedgerFile+"-wal")); err == nil && fi.Size() > 0 {
		t.Errorf("after Close the WAL still holds %d bytes: not checkpointed", fi.Size())
	}

	for i := range 2 {
		r3 := newRig(t, rigOptions{dir: dir, demo: d})
		if c3 := r3.counts(); c3 != c2 {
			t.Fatalf("restart %d changed the ledger: %+v → %+v", i+3, c2, c3)
		}
		r3.verify()
		if err := r3.s.Close(); err != nil {
			t.Fatal(err)
		}
	}

	// The operator settles the recovered hold with evidence, once.
	r4 := newRig(t, rigOptions{dir: dir, demo: d})
	if got := r4.admin("POST", "/admin/api/holds/"+string(inflight)+"/reconcile", `{"units":5,"evidence":"provider console: 5 units"}`); got.status != 200 {
		t.Fatalf("reconcile recovered hold: %d %s", got.status, got.body)
	}
	if got := r4.admin("POST", "/admin/api/holds/"+string(inflight)+"/reconcile", `{"units":5,"evidence":"provider console: 5 units"}`); got.status != http.StatusConflict {
		t.Fatalf("second reconcile: %d %s, want 409", got.status, got.body)
	}
	r4.verify()
}
