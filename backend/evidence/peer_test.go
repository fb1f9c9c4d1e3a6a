package evidence_test

import (
	"context"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/evidence"
	"github.com/quotagate/quotagate/backend/ledger"
)

// fromPeer is changes as another gateway sharing the ledger learns them.
func fromPeer(changes []ledger.Change) []ledger.Change {
	out := make([]ledger.Change, len(changes))
	for i, c := range changes {
		c.FromPeer = true
		out[i] = c
	}
	return out
}

// TestPeerHoldLookedUpOnce: on a ledger two gateways share, a run one of
// them ended held is looked up by that gateway alone; the other shows the
// same final finding, learnt from the lookup row, without asking the
// provider itself.
func TestPeerHoldLookedUpOnce(t *testing.T) {
	store := openStore(t, t.TempDir())
	defer store.Close()
	p := &provider{output: 40}
	own, peer := newWorker(t, store, p, func(*evidence.Options) {}), newWorker(t, store, p, func(*evidence.Options) {})
	store.OnCommit(func(_ context.Context, ch []ledger.Change) {
		own.w.Note(ch)
		peer.w.Note(fromPeer(ch))
	})
	heldRun(t, store, "r7", 12)
	found := own.until(t, "r7", evidence.Found)
	learnt := peer.until(t, "r7", evidence.Found)
	if learnt.Input != found.Input || learnt.Output != found.Output || learnt.ProviderID != found.ProviderID {
		t.Fatalf("the other gateway shows %+v, the looking one %+v", learnt, found)
	}
	rows, err := store.Audit(context.Background(), ledger.AuditFilter{RunID: "r7", Kind: evidence.AuditLookup})
	if err != nil {
		t.Fatal(err)
	}
	if n := p.calls.Load(); n != 1 || len(rows) != 1 {
		t.Fatalf("the provider was asked %d times and %d lookup rows were recorded, want 1 and 1", n, len(rows))
	}
	// The other gateway applies the finding it learnt as its own.
	run, err := peer.w.Apply(context.Background(), "r7", ledger.Operator("op"))
	if err != nil || run.Usage != ledger.UsageReconciled {
		t.Fatalf("apply on the other gateway: %+v %v", run, err)
	}
}

// TestRestartFollowsOnlyItsRuns: after a restart a worker takes up again
// the held runs Follows names, and no other.
func TestRestartFollowsOnlyItsRuns(t *testing.T) {
	store := openStore(t, t.TempDir())
	defer store.Close()
	heldRun(t, store, "r8", 12)
	heldRun(t, store, "r9", 12)
	p := &provider{output: 40}
	f := newWorker(t, store, p, func(o *evidence.Options) { o.Follows = func(r ledger.Run) bool { return r.ID == "r8" } })
	if err := f.w.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Start follows synchronously: a run it takes up already shows.
	if _, ok := f.w.Finding("r8"); !ok {
		t.Fatal("r8 is not followed")
	}
	if fd, ok := f.w.Finding("r9"); ok {
		t.Fatalf("r9 is another gateway's to follow, yet shows %+v", fd)
	}
	f.until(t, "r8", evidence.Found)
	if n := p.calls.Load(); n != 1 {
		t.Fatalf("the provider was asked %d times, want 1", n)
	}
	if !strings.HasPrefix(f.w.Findings()["r8"].ProviderID, "gen-") {
		t.Fatalf("findings %+v", f.w.Findings())
	}
}
