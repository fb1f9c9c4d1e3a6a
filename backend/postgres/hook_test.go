package postgres_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/ledger/ledgertest"
	"github.com/quotagate/quotagate/backend/postgres"
	"github.com/quotagate/quotagate/backend/postgres/pgtest"
)

// hookLog collects what a commit hook was told.
type hookLog struct {
	mu    sync.Mutex
	calls [][]ledger.Change
	seen  chan struct{}
}

func newHookLog() *hookLog { return &hookLog{seen: make(chan struct{}, 64)} }

func (h *hookLog) hook(_ context.Context, cs []ledger.Change) {
	h.mu.Lock()
	h.calls = append(h.calls, cs)
	h.mu.Unlock()
	h.seen <- struct{}{}
}

func (h *hookLog) snapshot() [][]ledger.Change {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([][]ledger.Change(nil), h.calls...)
}

// TestCommitHook: a store reports its own commit before the write returns
// (one call per transaction, one change per audit row, with its seq and the
// run's new state), and another gateway's commit through the same hook,
// after that gateway committed, marked as another's; a refused admission
// reports its reject row.
func TestCommitHook(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	a := mustOpen(t, dsn, postgres.Options{Instance: "a"})
	b := mustOpen(t, dsn, postgres.Options{Instance: "b"})
	defer a.Close()
	defer b.Close()
	ha, hb := newHookLog(), newHookLog()
	a.OnCommit(ha.hook)
	b.OnCommit(hb.hook)
	for _, st := range []*postgres.Store{a, b} {
		if err := st.Serve(ctx, postgres.PeerOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	ledgertest.MustApply(t, a, ledgertest.Tenant("t", 100, 1))
	run := ledgertest.MustAdmit(t, a, ledger.AdmitRequest{RunID: "r1", TenantID: "t", ReserveUnits: 60, Actor: ledger.TenantActor("t")})
	calls := ha.snapshot() // no wait: the write returned after the hook saw it
	if len(calls) != 2 || len(calls[1]) != 1 {
		t.Fatalf("a's hook calls = %+v, want the config and the admission", calls)
	}
	c := calls[1][0]
	audit, _ := a.Audit(ctx, ledger.AuditFilter{TenantID: "t"})
	if c.Kind != ledger.AuditAdmit || c.RunID != run.ID || c.Status != ledger.RunActive || c.Usage != ledger.UsagePending ||
		c.Actor != ledger.TenantActor("t") || c.TenantID != "t" || c.Seq != audit[len(audit)-1].Seq || c.Upstream != "demo" {
		t.Fatalf("admission change = %+v (last audit seq %d)", c, audit[len(audit)-1].Seq)
	}
	// b hears of both of a's commits, in order.
	deadline := time.After(5 * time.Second)
	for len(hb.snapshot()) < 2 {
		select {
		case <-hb.seen:
		case <-deadline:
			t.Fatalf("b's hook got %+v, want a's two commits", hb.snapshot())
		}
	}
	// b hears them as another gateway's (FromPeer); a its own as its own.
	got := hb.snapshot()
	fromA := c
	fromA.FromPeer = true
	if got[0][0].Kind != ledger.AuditConfig || !got[0][0].FromPeer || got[1][0] != fromA || c.FromPeer {
		t.Fatalf("b's hook = %+v, want a's config then %+v", got, fromA)
	}
	// A refusal on b: its reject row reaches a (ledger.RejectChange).
	_, err := b.Admit(ctx, ledger.AdmitRequest{RunID: "r2", TenantID: "t", Upstream: "demo", Model: "m", ReserveUnits: 60, Actor: ledger.TenantActor("t")})
	ledgertest.WantCode(t, err, ledger.CodeInsufficientBudget)
	for {
		calls := ha.snapshot()
		// A refused run never existed: the change names the model, no run.
		if last := calls[len(calls)-1]; last[0].Kind == ledger.AuditReject && last[0].RunID == "" && last[0].Model == "m" {
			break
		}
		select {
		case <-ha.seen:
		case <-deadline:
			t.Fatalf("a never heard of b's refusal: %+v", ha.snapshot())
		}
	}
}
