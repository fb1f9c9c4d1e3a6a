package server

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/live"
	"github.com/quotagate/quotagate/backend/quota"
	"github.com/quotagate/quotagate/backend/sqlite"
)

// openLedger opens a real SQLite ledger in the test's directory.
func openLedger(t *testing.T) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "ledger.db"), sqlite.Options{Synchronous: "OFF"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// observed records the guard's Observe calls in order.
type observed struct {
	mu    sync.Mutex
	calls []string
}

func (o *observed) Observe(_ context.Context, upstream, model string) error {
	o.mu.Lock()
	o.calls = append(o.calls, upstream+"/"+model)
	o.mu.Unlock()
	return nil
}

func (o *observed) ObserveSync(ctx context.Context, upstream, model string) error {
	return o.Observe(ctx, "sync:"+upstream, model)
}

func (o *observed) take() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := o.calls
	o.calls = nil
	return out
}

// One committed transaction reaches the hub and the guard exactly once, in
// commit order, with the changes it made — for every transition. Each write
// returns only after the hook saw it, so the change is already buffered in
// the subscription when the call returns: nothing here waits or sleeps.
func TestCommitReachesHubAndGuardOnce(t *testing.T) {
	st := openLedger(t)
	hub := live.NewHub(0)
	guard := &observed{}
	c := &commits{hub: hub, log: slog.New(slog.DiscardHandler)}
	c.setGuard(guard)
	st.OnCommit(c.committed)
	sub := hub.Subscribe()
	defer sub.Close()

	ctx := context.Background()
	const day = "2026-12-01"
	q := &ledger.QuotaCheck{Day: day, LimitUnits: 1000}
	tenant := ledger.TenantActor("a")
	op := ledger.Operator("admin")
	if err := st.ApplyTenants(ctx, []ledger.Tenant{{ID: "a", BudgetUnits: 500, MaxConcurrent: 1}}, ledger.ActorConfig); err != nil {
		t.Fatal(err)
	}
	admit := func(id ledger.RunID, queued bool) func() error {
		return func() error {
			_, err := st.Admit(ctx, ledger.AdmitRequest{RunID: id, TenantID: "a", Upstream: "ark", Model: "flash",
				ReserveUnits: 100, Queued: queued, Quota: q, Actor: tenant})
			return err
		}
	}
	type want struct {
		kind   ledger.AuditKind
		actor  ledger.Actor
		run    ledger.RunID
		status ledger.RunStatus
		usage  ledger.UsageStatus
	}
	steps := []struct {
		name    string
		do      func() error
		want    want
		guarded bool // the guard observes ark/flash once
	}{
		{"Config", func() error { return nil }, want{ledger.AuditConfig, ledger.ActorConfig, "", "", ""}, false},
		{"Admit", admit("r1", true), want{ledger.AuditAdmit, tenant, "r1", ledger.RunQueued, ledger.UsagePending}, true},
		{"Start", func() error { _, err := st.Start(ctx, "r1", tenant); return err },
			want{ledger.AuditStart, tenant, "r1", ledger.RunActive, ledger.UsagePending}, true},
		{"Refusal", func() error {
			if err := admit("r2", false)(); ledger.ErrorCode(err) != ledger.CodeConcurrencyLimit {
				return fmt.Errorf("admit past max_concurrent: %v, want concurrency_limit", err)
			}
			return nil
		}, want{ledger.AuditReject, tenant, "", "", ""}, true},
		{"Settle", func() error { _, err := st.Settle(ctx, "r1", 40, "usage 40", tenant); return err },
			want{ledger.AuditSettle, tenant, "r1", ledger.RunCompleted, ledger.UsageTrusted}, true},
		{"AdmitHeld", admit("r3", false), want{ledger.AuditAdmit, tenant, "r3", ledger.RunActive, ledger.UsagePending}, true},
		{"Hold", func() error { _, err := st.KeepHold(ctx, "r3", ledger.RunInterrupted, "cut", tenant); return err },
			want{ledger.AuditHold, tenant, "r3", ledger.RunInterrupted, ledger.UsageUnknown}, true},
		{"Reconcile", func() error { _, err := st.Reconcile(ctx, "r3", 7, "console: 7", op); return err },
			want{ledger.AuditReconcile, op, "r3", ledger.RunInterrupted, ledger.UsageReconciled}, true},
		{"AdmitReleased", admit("r4", false), want{ledger.AuditAdmit, tenant, "r4", ledger.RunActive, ledger.UsagePending}, true},
		{"Release", func() error {
			_, err := st.ReleaseHold(ctx, "r4", ledger.RunFailed, "HTTP 503 before any output", tenant)
			return err
		}, want{ledger.AuditRelease, tenant, "r4", ledger.RunFailed, ledger.UsageReleased}, true},
		{"AdmitCancelled", admit("r5", false), want{ledger.AuditAdmit, tenant, "r5", ledger.RunActive, ledger.UsagePending}, true},
		{"Cancel", func() error {
			_, err := st.KeepHold(ctx, "r5", ledger.RunCancelled, "cancelled by the operator", op)
			return err
		}, want{ledger.AuditCancel, op, "r5", ledger.RunCancelled, ledger.UsageUnknown}, true},
		{"QuotaSync", func() error {
			_, err := st.SaveSnapshot(ctx, ledger.Snapshot{Upstream: "ark", Model: "flash", Day: day, BalanceUnits: 900, Source: "manual"})
			return err
		}, want{ledger.AuditSync, ledger.SourceActor("manual"), "", "", ""}, true},
		// (ObserveSync: the guard skips a snapshot it writes itself)
	}
	var lastSeq int64
	for i, s := range steps {
		if i > 0 { // the config change was committed before the loop
			if err := s.do(); err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
		}
		var got live.Change
		select {
		case got = <-sub.C():
		default:
			t.Fatalf("%s: the write returned before the hub heard of it", s.name)
		}
		select {
		case extra := <-sub.C():
			t.Fatalf("%s: the hub heard twice: %+v", s.name, extra)
		default:
		}
		if got.Kind != live.KindLedger || len(got.Commit) != 1 {
			t.Fatalf("%s: hub got %+v, want one ledger change", s.name, got)
		}
		ch := got.Commit[0]
		w := s.want
		if ch.Kind != w.kind || ch.Actor != w.actor || ch.RunID != w.run || ch.Status != w.status || ch.Usage != w.usage {
			t.Errorf("%s: change %+v, want %+v", s.name, ch, w)
		}
		if ch.Seq <= lastSeq {
			t.Errorf("%s: seq %d after %d: not in commit order", s.name, ch.Seq, lastSeq)
		}
		lastSeq = ch.Seq
		if s.guarded && (ch.Upstream != "ark" || ch.Model != "flash" || ch.Day != day) {
			t.Errorf("%s: quota day of the change %+v, want ark/flash %s", s.name, ch, day)
		}
		wantCalls := []string(nil)
		if s.guarded {
			wantCalls = []string{"ark/flash"}
		}
		if s.want.kind == ledger.AuditSync {
			wantCalls = []string{"sync:ark/flash"}
		}
		if calls := guard.take(); !slices.Equal(calls, wantCalls) {
			t.Errorf("%s: guard observed %v, want %v", s.name, calls, wantCalls)
		}
	}
	if bal, err := st.Balance(ctx, "a"); err != nil || bal.SpentUnits != 47 || bal.HeldUnits != 100 {
		t.Errorf("balance %+v (%v), want 40+7 spent and r5's 100 held", bal, err)
	}
}

// A write made from inside the hook with the hook's context returns after
// its commit (it does not wait for its own delivery, which would deadlock),
// and is delivered after the hook returns, in order.
func TestHookMayWriteWithItsContext(t *testing.T) {
	st := openLedger(t)
	var mu sync.Mutex
	var kinds []ledger.AuditKind
	st.OnCommit(func(ctx context.Context, changes []ledger.Change) {
		for _, c := range changes {
			mu.Lock()
			kinds = append(kinds, c.Kind)
			mu.Unlock()
			if c.Kind == ledger.AuditSync {
				_ = st.AppendAudit(ctx, ledger.AuditEntry{Kind: ledger.AuditEvict, Actor: ledger.ActorQuotaGuard, Reason: "usage_wall"})
			}
		}
	})
	ctx := context.Background()
	if _, err := st.SaveSnapshot(ctx, ledger.Snapshot{Upstream: "ark", Model: "flash", Day: "d", Source: "manual"}); err != nil {
		t.Fatal(err)
	}
	// A later write's delivery comes after the eviction's: commit order.
	if err := st.AppendAudit(ctx, ledger.AuditEntry{Kind: ledger.AuditRestore, Actor: ledger.ActorQuotaGuard}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(kinds, []ledger.AuditKind{ledger.AuditSync, ledger.AuditEvict, ledger.AuditRestore}) {
		t.Fatalf("delivered %v, want sync, evict, restore", kinds)
	}
}

// The guard observes syncs through the hook: its own (SetBalance, with the
// hook wired as the server wires it, returns: it does not wait on itself)
// and another gateway's, which it reads back from the ledger (here a second
// guard on the same ledger, as on a shared PostgreSQL ledger).
func TestGuardObservesSyncsThroughTheHook(t *testing.T) {
	st := openLedger(t)
	models := []quota.ModelOptions{{Upstream: "ark", Model: "flash"}}
	here, err := quota.NewGuard(st, models, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	other, err := quota.NewGuard(st, models, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &commits{hub: live.NewHub(0), log: slog.New(slog.DiscardHandler)}
	c.setGuard(here)
	st.OnCommit(c.committed)
	ctx := context.Background()
	row := func() quota.Row {
		t.Helper()
		rows, err := here.State(ctx)
		if err != nil || len(rows) != 1 {
			t.Fatalf("state %v: %v", rows, err)
		}
		return rows[0]
	}

	done := make(chan error, 1)
	go func() { _, err := here.SetBalance(ctx, "ark", "flash", 1_800_000); done <- err }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the guard's own sync waited on the hook that observes it")
	}
	if r := row(); r.BalanceAtSync != 1_800_000 || r.B0Manual {
		t.Fatalf("after its own sync: %+v", r)
	}

	if _, err := other.SetB0(ctx, "ark", "flash", 2_242_178); err != nil {
		t.Fatal(err)
	}
	if r := row(); !r.B0Manual || r.BalanceAtSync != 2_242_178 || r.Source != quota.SourceManualB0 {
		t.Fatalf("another gateway's B0 did not reach this guard: %+v", r)
	}
}

// An eviction reaches the hub once, as the commit of its audit row: the
// guard's own publish is only for what no ledger row records.
func TestEvictionReachesTheHubOnce(t *testing.T) {
	st := openLedger(t)
	hub := live.NewHub(0)
	g, err := quota.NewGuard(st, []quota.ModelOptions{{Upstream: "ark", Model: "flash"}}, nil, nil,
		func(string) { hub.Publish(live.Change{Kind: live.KindQuota}) }) // as assemble wires it
	if err != nil {
		t.Fatal(err)
	}
	c := &commits{hub: hub, log: slog.New(slog.DiscardHandler)}
	c.setGuard(g)
	st.OnCommit(c.committed)
	sub := hub.Subscribe()
	defer sub.Close()
	heard := func(balance ledger.Units) []string {
		t.Helper()
		if _, err := g.SetBalance(context.Background(), "ark", "flash", balance); err != nil {
			t.Fatal(err)
		}
		var got []string // every write returns after the hook: what the hub heard is buffered
		for {
			select {
			case ch := <-sub.C():
				s := string(ch.Kind)
				for _, c := range ch.Commit {
					s += ":" + string(c.Kind)
				}
				got = append(got, s)
				continue
			default:
			}
			return got
		}
	}
	if got := heard(1_800_000); !slices.Contains(got, "ledger:sync") {
		t.Fatalf("first reading: hub heard %v", got)
	}
	got := heard(10) // below the balance wall
	want := []string{"ledger:sync", "ledger:evict"}
	if !slices.Equal(got, want) {
		t.Fatalf("hub heard %v, want %v", got, want)
	}
}
