package evidence_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/evidence"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/sqlite"
	"github.com/quotagate/quotagate/backend/upstream/lookup"
)

// provider is a scripted usage endpoint: 404 for its first notYet calls,
// then the figure (or never, with never set).
type provider struct {
	notYet int64
	never  bool
	output int64
	calls  atomic.Int64
}

func (p *provider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := p.calls.Add(1)
	if p.never || n <= p.notYet {
		http.NotFound(w, r)
		return
	}
	id := r.URL.Query().Get("id")
	fmt.Fprintf(w, `{"data":{"id":%q,"native_tokens_prompt":30,"native_tokens_completion":%d,"native_tokens_cached":10,"total_cost":0.0042}}`, id, p.output)
}

type fixture struct {
	store *sqlite.Store
	w     *evidence.Worker
	seen  chan evidence.Finding
}

func heldRun(t *testing.T, store *sqlite.Store, id ledger.RunID, relayed ledger.Units) {
	t.Helper()
	ctx := context.Background()
	if _, err := store.Admit(ctx, ledger.AdmitRequest{RunID: id, TenantID: "a", Upstream: "or", Model: "m",
		ReserveUnits: 100, InputUnits: 30}); err != nil {
		t.Fatal(err)
	}
	rule := ledger.KeepHoldRule(ledger.RunInterrupted, "the upstream closed the stream before [DONE]").
		Noting(ledger.Answered{ProviderID: "gen-" + string(id), RelayedUnits: relayed})
	if _, err := store.ApplyRule(ctx, id, ledger.TenantActor("a"), rule); err != nil {
		t.Fatal(err)
	}
}

func openStore(t *testing.T, dir string) *sqlite.Store {
	t.Helper()
	store, err := sqlite.Open(filepath.Join(dir, "ledger.db"), sqlite.Options{Synchronous: "OFF"})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.ApplyTenants(context.Background(), []ledger.Tenant{{ID: "a", BudgetUnits: 1000, MaxConcurrent: 4}}, ledger.System("test")); err != nil {
		t.Fatal(err)
	}
	return store
}

func start(t *testing.T, store *sqlite.Store, p *provider, auto bool, window time.Duration) *fixture {
	t.Helper()
	f := newWorker(t, store, p, func(o *evidence.Options) { o.Upstreams[0].Auto, o.Upstreams[0].Window = auto, window })
	store.OnCommit(func(_ context.Context, ch []ledger.Change) { f.w.Note(ch) })
	if err := f.w.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return f
}

// newWorker is a worker on the upstream "or" at p's endpoint, its options
// adjusted by adjust; the caller wires its commit hook and starts it.
func newWorker(t *testing.T, store *sqlite.Store, p *provider, adjust func(*evidence.Options)) *fixture {
	t.Helper()
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	c, err := lookup.New(lookup.Spec{Kind: lookup.KindOpenRouter}, srv.URL, "sk-secret", srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{store: store, seen: make(chan evidence.Finding, 100)}
	o := evidence.Options{Store: store, Scrub: func(s string) string { return strings.ReplaceAll(s, "sk-secret", "sk-***") },
		Upstreams: []evidence.Upstream{{Name: "or", Looker: c, Delay: 20 * time.Millisecond, Window: time.Minute, PerMinute: 6000}},
		Changed:   func(fd evidence.Finding) { f.seen <- fd }}
	adjust(&o)
	f.w = evidence.New(o)
	t.Cleanup(f.w.Close)
	return f
}

// until waits for a finding of run in state s.
func (f *fixture) until(t *testing.T, id ledger.RunID, s evidence.State) evidence.Finding {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case fd := <-f.seen:
			if fd.Run == id && fd.State == s {
				return fd
			}
		case <-timeout:
			t.Fatalf("run %s never reached %s", id, s)
		}
	}
}

func verifyClean(t *testing.T, store *sqlite.Store) {
	t.Helper()
	if diffs, err := store.Verify(context.Background()); err != nil || len(diffs) > 0 {
		t.Fatalf("verify: %v %v", diffs, err)
	}
}

// A held run's figure is found after the delay and shown; Apply by an
// operator settles it at exactly that figure, the provider named as the source.
func TestFoundThenApplied(t *testing.T) {
	store := openStore(t, t.TempDir())
	defer store.Close()
	f := start(t, store, &provider{output: 40}, false, time.Minute)
	heldRun(t, store, "r1", 12)
	fd := f.until(t, "r1", evidence.Found)
	if fd.Input != 30 || fd.Output != 40 || fd.Cached != 10 || fd.Cost != "0.0042" || fd.ProviderID != "gen-r1" {
		t.Fatalf("finding %+v", fd)
	}
	run, err := f.w.Apply(context.Background(), "r1", ledger.ActorAdmin)
	if err != nil {
		t.Fatal(err)
	}
	if run.Usage != ledger.UsageReconciled || run.SpentUnits != 70 || run.HeldUnits != 0 {
		t.Fatalf("run %+v", run)
	}
	rows, _ := store.Audit(context.Background(), ledger.AuditFilter{RunID: "r1", Kind: ledger.AuditReconcile})
	if len(rows) != 1 || rows[0].Actor != ledger.ActorAdmin || !strings.Contains(rows[0].Evidence, "source: provider:or") ||
		strings.Contains(rows[0].Evidence, "sk-secret") {
		t.Fatalf("reconcile rows %+v", rows)
	}
	verifyClean(t, store)
}

// auto_reconcile settles by itself, also after the provider answered 404
// a few times; the audit row's actor is the provider.
func TestAutoAfterRetries(t *testing.T) {
	store := openStore(t, t.TempDir())
	defer store.Close()
	p := &provider{output: 40, notYet: 3}
	f := start(t, store, p, true, time.Minute)
	heldRun(t, store, "r2", 12)
	fd := f.until(t, "r2", evidence.Applied)
	if fd.Attempts != 4 || p.calls.Load() != 4 {
		t.Fatalf("attempts %d, calls %d", fd.Attempts, p.calls.Load())
	}
	run, _ := store.Run(context.Background(), "r2")
	if run.Usage != ledger.UsageReconciled || run.SpentUnits != 70 {
		t.Fatalf("run %+v", run)
	}
	rows, _ := store.Audit(context.Background(), ledger.AuditFilter{RunID: "r2", Kind: ledger.AuditReconcile})
	if len(rows) != 1 || rows[0].Actor != ledger.Provider("or") {
		t.Fatalf("reconcile rows %+v", rows)
	}
	verifyClean(t, store)
}

// A figure above the reserve charges the reserve and records the overrun.
func TestAboveReserve(t *testing.T) {
	store := openStore(t, t.TempDir())
	defer store.Close()
	f := start(t, store, &provider{output: 200}, true, time.Minute)
	heldRun(t, store, "r3", 12)
	f.until(t, "r3", evidence.Applied)
	run, _ := store.Run(context.Background(), "r3")
	if run.SpentUnits != 100 || run.OverrunUnits != 130 || run.Usage != ledger.UsageReconciled {
		t.Fatalf("run %+v", run)
	}
	verifyClean(t, store)
}

// A provider that never answers: the run stays held after the window,
// and the finding says so.
func TestNeverAnswers(t *testing.T) {
	store := openStore(t, t.TempDir())
	defer store.Close()
	f := start(t, store, &provider{never: true}, true, 200*time.Millisecond)
	heldRun(t, store, "r4", 12)
	fd := f.until(t, "r4", evidence.GaveUp)
	if !strings.Contains(fd.Note, "no answer from the provider within 200ms") || fd.Attempts < 2 {
		t.Fatalf("finding %+v", fd)
	}
	run, _ := store.Run(context.Background(), "r4")
	if run.Usage != ledger.UsageUnknown || run.HeldUnits != 100 {
		t.Fatalf("run %+v", run)
	}
}

// Output below what the gateway relayed is refused as evidence, and
// Apply refuses it too.
func TestContradictionRefused(t *testing.T) {
	store := openStore(t, t.TempDir())
	defer store.Close()
	f := start(t, store, &provider{output: 5}, true, time.Minute)
	heldRun(t, store, "r5", 12)
	fd := f.until(t, "r5", evidence.Refused)
	if !strings.Contains(fd.Note, "below the 12 the gateway relayed") {
		t.Fatalf("finding %+v", fd)
	}
	if _, err := f.w.Apply(context.Background(), "r5", ledger.ActorAdmin); ledger.ErrorCode(err) != ledger.CodeInvalidRequest {
		t.Fatalf("apply: %v", err)
	}
	run, _ := store.Run(context.Background(), "r5")
	if run.Usage != ledger.UsageUnknown {
		t.Fatalf("run %+v", run)
	}
}

// A restart between the cut and the lookup still finds the run: the new
// worker picks the held run up from the ledger.
func TestRestartStillFinds(t *testing.T) {
	dir := t.TempDir()
	store := openStore(t, dir)
	heldRun(t, store, "r6", 12) // ended held while no worker ran
	store.Close()
	store = openStore(t, dir)
	defer store.Close()
	f := start(t, store, &provider{output: 40}, true, time.Hour)
	f.until(t, "r6", evidence.Applied)
	run, _ := store.Run(context.Background(), "r6")
	if run.Usage != ledger.UsageReconciled || run.SpentUnits != 70 {
		t.Fatalf("run %+v", run)
	}
}
