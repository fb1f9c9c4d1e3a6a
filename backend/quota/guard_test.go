package quota_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/quota"
	"github.com/quotagate/quotagate/backend/sqlite"
	"github.com/quotagate/quotagate/backend/upstream/balance"
)

const (
	ark   = "ark"
	flash = "deepseek-v4-flash"
)

// clock is a settable clock shared by the store and the guard.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

// openStore opens a fresh ledger in a temporary directory (see openLedger).
func openStore(tb testing.TB, now func() time.Time) *sqlite.Store {
	tb.Helper()
	return openLedger(tb, filepath.Join(tb.TempDir(), "ledger.db"), now)
}

// balanceServer is a real loopback http-json endpoint whose balance a test sets.
type balanceServer struct {
	bal   atomic.Int64
	calls atomic.Int64
	url   string
}

func newBalanceServer(t *testing.T, bal ledger.Units) *balanceServer {
	t.Helper()
	b := &balanceServer{}
	b.bal.Store(int64(bal))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{ReadHeaderTimeout: time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.calls.Add(1)
		fmt.Fprintf(w, `{"data":{"available":%d}}`, b.bal.Load())
	})}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close(); <-done })
	b.url = "http://" + ln.Addr().String() + "/balance/{model}"
	return b
}

func (b *balanceServer) source(t *testing.T) quota.BalanceSource {
	src, err := balance.New(balance.Config{Kind: balance.KindHTTPJSON, URL: b.url, Field: "data.available"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

type events struct {
	mu    sync.Mutex
	kinds []string
	ch    chan string
}

func newEvents() *events { return &events{ch: make(chan string, 1024)} }
func (e *events) publish(kind string) {
	e.mu.Lock()
	e.kinds = append(e.kinds, kind)
	e.mu.Unlock()
	select {
	case e.ch <- kind:
	default:
	}
}

var runSeq atomic.Int64

// spend admits and settles units on the guarded model through the guard's check.
func spend(t *testing.T, st ledger.Store, g *quota.Guard, units ledger.Units) {
	t.Helper()
	ctx := context.Background()
	qc, err := g.Check(ark, flash)
	if err != nil {
		t.Fatalf("check: %v", err)
	}
	id := ledger.RunID(fmt.Sprintf("r%d", runSeq.Add(1)))
	if _, err := st.Admit(ctx, ledger.AdmitRequest{RunID: id, TenantID: "team", Upstream: ark, Model: flash,
		ReserveUnits: units, Quota: qc, Actor: ledger.System("test")}); err != nil {
		t.Fatalf("admit %d: %v", units, err)
	}
	if _, err := st.Settle(ctx, id, units, "test usage", ledger.System("test")); err != nil {
		t.Fatalf("settle: %v", err)
	}
	if err := g.Observe(ctx, ark, flash); err != nil {
		t.Fatalf("observe: %v", err)
	}
}

func auditKinds(t *testing.T, st ledger.Store, kind ledger.AuditKind) []ledger.AuditEntry {
	t.Helper()
	rows, err := st.Audit(context.Background(), ledger.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var out []ledger.AuditEntry
	for _, r := range rows {
		if r.Kind == kind {
			out = append(out, r)
		}
	}
	return out
}

// B0 2,000,000 and buffer 50,000 (limit 1,950,000), usage
// 1,850,000: of 20 concurrent requests of reserve 10,000 at most 10 pass.
func TestConcurrentAdmitsStopAtLimit(t *testing.T) {
	c := &clock{t: at("2026-08-13", "09:00:00")}
	st := openStore(t, c.Now)
	o := quota.DefaultOptions()
	o.UsageWall = 1 << 40 // this test is about admission, not the usage wall
	g, err := quota.NewGuard(st, []quota.ModelOptions{{Upstream: ark, Model: flash, Options: o}}, nil, c.Now, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := g.SetB0(ctx, ark, flash, 2_000_000); err != nil {
		t.Fatal(err)
	}
	spend(t, st, g, 1_850_000)

	var admitted, refused atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			qc, err := g.Check(ark, flash)
			if err != nil {
				t.Errorf("check: %v", err)
				return
			}
			if qc.LimitUnits != 1_950_000 {
				t.Errorf("limit = %d, want 1,950,000", qc.LimitUnits)
			}
			_, err = st.Admit(ctx, ledger.AdmitRequest{RunID: ledger.RunID(fmt.Sprintf("c%d", i)), TenantID: "team",
				Upstream: ark, Model: flash, ReserveUnits: 10_000, Quota: qc, Actor: ledger.System("test")})
			switch ledger.ErrorCode(err) {
			case "":
				admitted.Add(1)
			case ledger.CodeQuotaGuard:
				refused.Add(1)
			default:
				t.Errorf("admit: %v", err)
			}
		}()
	}
	close(start)
	wg.Wait()
	if admitted.Load() != 10 || refused.Load() != 10 {
		t.Fatalf("admitted %d, refused %d; exactly 10 of 20 fit", admitted.Load(), refused.Load())
	}
	u, err := st.QuotaUsage(ctx, ark, flash, "2026-08-13")
	if err != nil || u.UsageUnits+u.HeldInFlight != 1_950_000 {
		t.Fatalf("usage %+v, %v; want usage + held = limit", u, err)
	}
}

// §7.6 thinking model: the guard's check is applied by the ledger to the
// reserve the caller computed (18 + max(16, 4096) = 4,114), not to 34.
func TestThinkingReserveRefusedByLedger(t *testing.T) {
	c := &clock{t: at("2026-08-13", "09:00:00")}
	st := openStore(t, c.Now)
	g, err := quota.NewGuard(st, []quota.ModelOptions{{Upstream: ark, Model: flash}}, nil, c.Now, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := g.SetB0(ctx, ark, flash, 1_000_000); err != nil { // limit 950,000
		t.Fatal(err)
	}
	spend(t, st, g, 947_000)
	qc, err := g.Check(ark, flash)
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.Admit(ctx, ledger.AdmitRequest{RunID: "think", TenantID: "team", Upstream: ark, Model: flash,
		ReserveUnits: 18 + max(16, 4096), Quota: qc})
	if ledger.ErrorCode(err) != ledger.CodeQuotaGuard {
		t.Fatalf("reserve 4,114 at usage 947,000 / limit 950,000: %v, want quota_guard", err)
	}
	if _, err = st.Admit(ctx, ledger.AdmitRequest{RunID: "small", TenantID: "team", Upstream: ark, Model: flash,
		ReserveUnits: 34, Quota: qc}); err != nil {
		t.Fatalf("reserve 34 refused: %v", err)
	}
}

// One day of seed 002 through the runtime guard: a sync of the converged
// 14:59:51 reading, the usage wall, the audit and publish, Retry-After until
// midnight, and the restore at 00:00 Asia/Shanghai.
func TestGuardSyncEvictRollover(t *testing.T) {
	c := &clock{t: at("2026-08-12", "13:00:00")}
	st := openStore(t, c.Now)
	bs := newBalanceServer(t, 596_869)
	ev := newEvents()
	g, err := quota.NewGuard(st, []quota.ModelOptions{{Upstream: ark, Model: flash}},
		map[string]quota.BalanceSource{ark: bs.source(t)}, c.Now, ev.publish)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	// Before any reading the guard fails closed.
	if _, err := g.Check(ark, flash); ledger.ErrorCode(err) != ledger.CodeQuotaGuard {
		t.Fatalf("check before any reading: %v, want quota_guard", err)
	}
	if _, err := g.SetBalance(ctx, ark, flash, 2_293_004); err != nil { // the day's first reading
		t.Fatal(err)
	}
	spend(t, st, g, 1_696_135)

	c.Set(at("2026-08-12", "14:59:51"))
	snap, err := g.Sync(ctx, ark, flash)
	if err != nil {
		t.Fatal(err)
	}
	if snap.BalanceUnits != 596_869 || snap.UsageAtSync != 1_696_135 || snap.Source != balance.KindHTTPJSON {
		t.Fatalf("snapshot %+v", snap)
	}
	if snap.B0Units != 2_293_004 || snap.LimitUnits != 2_000_000 || snap.LimitV6Units != 2_000_000 {
		t.Fatalf("snapshot b0 %d limit %d v6 %d; want 2,293,004 / 2,000,000 / 2,000,000", snap.B0Units, snap.LimitUnits, snap.LimitV6Units)
	}
	stored, err := st.Snapshots(ctx, ark, flash, time.Time{})
	if err != nil || len(stored) != 2 || stored[1].LagSeconds != snap.LagSeconds || stored[1].LimitUnits != 2_000_000 {
		t.Fatalf("stored snapshots %+v, %v", stored, err)
	}
	qc, err := g.Check(ark, flash)
	if err != nil || qc.Day != "2026-08-12" || qc.LimitUnits != 2_000_000 {
		t.Fatalf("check = %+v, %v", qc, err)
	}

	c.Set(at("2026-08-12", "20:53:13"))
	spend(t, st, g, 260_000) // 1,956,135 ≥ the usage wall
	_, err = g.Check(ark, flash)
	if ledger.ErrorCode(err) != ledger.CodeQuotaGuard {
		t.Fatalf("check after the usage wall: %v, want quota_guard", err)
	}
	if ra := ledger.RetryAfter(err); ra != 3*time.Hour+6*time.Minute+47*time.Second {
		t.Fatalf("Retry-After %s, want until 00:00 local (3h6m47s)", ra)
	}
	evicts := auditKinds(t, st, ledger.AuditEvict)
	if len(evicts) != 2 { // the fail-closed start, then the usage wall
		t.Fatalf("evict audits %+v", evicts)
	}
	if last := evicts[len(evicts)-1]; last.Units != 1_956_135 || last.Actor != ledger.ActorQuotaGuard {
		t.Fatalf("evict audit %+v", last)
	}
	rows, err := g.State(ctx)
	if err != nil || len(rows) != 1 || !rows[0].Evicted || rows[0].UsageToday != 1_956_135 {
		t.Fatalf("state %+v, %v", rows, err)
	}

	c.Set(at("2026-08-13", "00:00:30"))
	qc, err = g.Check(ark, flash)
	if err != nil {
		t.Fatalf("check after midnight: %v", err)
	}
	// The provider's day may not have turned yet (its clock is its own):
	// until 00:10 yesterday's 1,956,135 may still count toward its cap.
	if qc.Day != "2026-08-13" || qc.LimitUnits != 2_000_000-1_956_135 {
		t.Fatalf("check just after midnight = %+v", qc)
	}
	c.Set(at("2026-08-13", "00:10:30"))
	qc, err = g.Check(ark, flash)
	if err != nil {
		t.Fatalf("check after midnight: %v", err)
	}
	// B0 today = 596,869 − usage settled in [14:44:51, 00:00) = 596,869 − 260,000.
	if qc.Day != "2026-08-13" || qc.LimitUnits != 596_869-260_000-50_000 {
		t.Fatalf("check after midnight = %+v", qc)
	}
	if n := len(auditKinds(t, st, ledger.AuditRestore)); n != 2 {
		t.Fatalf("%d restore audits, want 2 (first reading, midnight)", n)
	}
	ev.mu.Lock()
	defer ev.mu.Unlock()
	if len(ev.kinds) == 0 || ev.kinds[0] != quota.PublishKind {
		t.Fatalf("published %v", ev.kinds)
	}
}

func TestStateJSON(t *testing.T) {
	c := &clock{t: at("2026-08-13", "11:22:00")}
	st := openStore(t, c.Now)
	g, err := quota.NewGuard(st, []quota.ModelOptions{{Upstream: ark, Model: flash}}, nil, c.Now, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.SetB0(context.Background(), ark, flash, 2_242_178); err != nil {
		t.Fatal(err)
	}
	rows, err := g.State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(rows)
	var got []map[string]any
	if err := json.Unmarshal(b, &got); err != nil || len(got) != 1 {
		t.Fatal(err)
	}
	for _, k := range []string{"upstream", "model", "day", "usage_today", "held_in_flight", "balance_at_sync",
		"usage_at_sync", "synced_at", "lag_seconds", "b0_estimate", "limit", "limit_v6", "evicted", "evicted_reason"} {
		if _, ok := got[0][k]; !ok {
			t.Errorf("state row lacks %q: %s", k, b)
		}
	}
	if got[0]["limit"].(float64) != 2_000_000 || got[0]["b0_estimate"].(float64) != 2_242_178 || got[0]["b0_manual"] != true {
		t.Fatalf("row %s", b)
	}
}

func TestManualSourceAndUnknownModel(t *testing.T) {
	c := &clock{t: at("2026-08-13", "08:00:00")}
	st := openStore(t, c.Now)
	g, err := quota.NewGuard(st, []quota.ModelOptions{{Upstream: ark, Model: flash}},
		map[string]quota.BalanceSource{ark: balance.Manual{}}, c.Now, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := g.Sync(ctx, ark, flash); ledger.ErrorCode(err) != ledger.CodeInvalidRequest {
		t.Fatalf("sync of a manual source: %v", err)
	}
	if qc, err := g.Check(ark, "not-guarded"); qc != nil || err != nil {
		t.Fatalf("unguarded model: %+v, %v", qc, err)
	}
	if _, err := g.SetBalance(ctx, ark, "nope", 1); ledger.ErrorCode(err) != ledger.CodeModelNotFound {
		t.Fatalf("set balance of an unguarded model: %v", err)
	}
	if _, err := g.SetBalance(ctx, ark, flash, 80_000); err != nil { // a small pool, unused
		t.Fatal(err)
	}
	qc, err := g.Check(ark, flash)
	if err != nil || qc.LimitUnits != 30_000 {
		t.Fatalf("small pool check: %+v, %v (must not be evicted while usage is 0)", qc, err)
	}
	if _, err := quota.NewGuard(st, []quota.ModelOptions{{Upstream: ark, Model: flash, Options: quota.Options{Timezone: "Mars/Base"}}}, nil, nil, nil); err == nil {
		t.Fatal("bad timezone accepted")
	}
}

// The loop syncs at start, syncs again on a burst (+100,000 since the last
// sync), and stops when its context ends.
func TestRunSyncsOnStartAndBurst(t *testing.T) {
	st := openStore(t, time.Now)
	bs := newBalanceServer(t, 2_000_000)
	ev := newEvents()
	g, err := quota.NewGuard(st, []quota.ModelOptions{{Upstream: ark, Model: flash}},
		map[string]quota.BalanceSource{ark: bs.source(t)}, nil, ev.publish)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); g.Run(ctx) }()

	waitSnapshots := func(n int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			s, err := st.Snapshots(context.Background(), ark, flash, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			if len(s) >= n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d snapshots after 10s, want %d", len(s), n)
			}
			select {
			case <-ev.ch:
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	waitSnapshots(1)
	// The snapshot is stored a moment before the guard adopts it: wait until
	// the guard admits, as a caller would see it.
	for deadline := time.Now().Add(10 * time.Second); ; {
		if _, err := g.Check(ark, flash); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the guard still refuses 10s after the first sync: %v", err)
		}
		select {
		case <-ev.ch:
		case <-time.After(10 * time.Millisecond):
		}
	}
	spend(t, st, g, 60_000)
	spend(t, st, g, 40_000) // +100,000 since the sync: burst
	waitSnapshots(2)
	if bs.calls.Load() < 2 {
		t.Fatalf("balance endpoint called %d times", bs.calls.Load())
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not stop on cancel")
	}
}

func TestSyncProviderDownIsUpstreamError(t *testing.T) {
	c := &clock{t: at("2026-08-13", "08:00:00")}
	st := openStore(t, c.Now)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String() + "/b"
	ln.Close() // nothing listens there now
	src, err := balance.New(balance.Config{Kind: balance.KindHTTPJSON, URL: dead, Field: "n"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := quota.NewGuard(st, []quota.ModelOptions{{Upstream: ark, Model: flash}},
		map[string]quota.BalanceSource{ark: src}, c.Now, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Sync(context.Background(), ark, flash); ledger.ErrorCode(err) != ledger.CodeUpstreamError {
		t.Fatalf("sync against a dead provider: %v, want upstream_error", err)
	}
	rows, err := g.State(context.Background())
	if err != nil || rows[0].SyncError == "" || !rows[0].Evicted {
		t.Fatalf("state after a failed first sync: %+v, %v (want the error shown and the model fail closed)", rows, err)
	}
}

// The optional top-up planner (seed 002 §8.4): after 23:20 local, once a
// day, a dry-run plan clamped by cap − usage and B0 − buffer − usage.
func TestTopUpPlanDryRun(t *testing.T) {
	c := &clock{t: at("2026-08-13", "10:00:00")}
	st := openStore(t, c.Now)
	o := quota.DefaultOptions()
	o.TopUp.Enabled = true
	g, err := quota.NewGuard(st, []quota.ModelOptions{{Upstream: ark, Model: flash, Options: o}}, nil, c.Now, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := g.SetB0(ctx, ark, flash, 1_200_000); err != nil {
		t.Fatal(err)
	}
	spend(t, st, g, 500_000)
	if plan, err := g.PlanTopUp(ark, flash); err != nil || plan != 650_000 {
		t.Fatalf("plan = %d, %v; want 1,200,000 − 50,000 − 500,000", plan, err)
	}
	// At 23:21 the executor's dry run plans (one unit short of the wall)
	// and the guard's state shows it for the dashboard.
	c.Set(at("2026-08-13", "23:21:00"))
	top, err := quota.NewTopUp(g, nil, quota.TopUpRunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res := top.Tick(ctx)
	if len(res) != 1 || res[0].Outcome != quota.TopUpDryRun || res[0].Plan != 649_999 {
		t.Fatalf("tick %+v, want a dry run planning 649,999", res)
	}
	rows, err := g.State(ctx)
	if err != nil || rows[0].TopUpPlan != 649_999 {
		t.Fatalf("state %+v, %v", rows, err)
	}
}

// provider is a balance source with package expiries, as the volcengine
// source is (that one is tested against a loopback fake in upstream/balance).
type provider struct {
	bal ledger.Units
	exp []quota.Expiry
}

func (p provider) Balance(context.Context, string) (ledger.Units, error) { return p.bal, nil }
func (p provider) Expiries(context.Context, string) ([]quota.Expiry, error) {
	return p.exp, nil
}
func (p provider) Kind() string { return "test-provider" }

// Seed 002 §7.5 residual risk 2 (packages expiring between syncs): units of
// packages expiring within the horizon stop counting, less what usage has
// already drawn from them (oldest packages are consumed first).
func TestExpiringPackagesLeaveTheLimit(t *testing.T) {
	c := &clock{t: at("2026-08-13", "22:00:00")}
	st := openStore(t, c.Now)
	src := provider{bal: 1_000_000, exp: []quota.Expiry{{At: at("2026-08-14", "00:00:00"), Units: 600_000}}}
	// The whole small buffer held back, as without a listing: the figures are the horizon's alone.
	g, err := quota.NewGuard(st, []quota.ModelOptions{{Upstream: ark, Model: flash, Options: quota.Options{Residue: 50_000}}},
		map[string]quota.BalanceSource{ark: src}, c.Now, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Sync(context.Background(), ark, flash); err != nil {
		t.Fatal(err)
	}
	limit := func() ledger.Units {
		t.Helper()
		qc, err := g.Check(ark, flash)
		if err != nil {
			t.Fatal(err)
		}
		return qc.LimitUnits
	}
	if got := limit(); got != 950_000 {
		t.Fatalf("limit two hours before the expiry = %d, want 950,000", got)
	}
	c.Set(at("2026-08-13", "23:00:00"))
	spend(t, st, g, 200_000)
	c.Set(at("2026-08-13", "23:50:00"))
	if got := limit(); got != 1_000_000-50_000-(600_000-200_000) {
		t.Fatalf("limit 10 min before the expiry = %d, want 550,000", got)
	}
	spend(t, st, g, 350_000) // usage 550,000: 50,000 of the package is left to lose
	if got := limit(); got != 900_000 {
		t.Fatalf("limit = %d, want 900,000", got)
	}
	spend(t, st, g, 100_000) // the expiring package is used up: nothing left to lose
	if got := limit(); got != 950_000 {
		t.Fatalf("limit once the expiring package is spent = %d, want 950,000", got)
	}
}

// State is a read, so that the dashboard can poll it freely: it writes no audit row and changes nothing the
// guard enforces, even when the ledger has moved past a wall since the last
// Observe; the next Observe then evicts and audits.
func TestStateNeverWrites(t *testing.T) {
	c := &clock{t: at("2026-08-13", "10:00:00")}
	st := openStore(t, c.Now)
	g, err := quota.NewGuard(st, []quota.ModelOptions{{Upstream: ark, Model: flash}}, nil, c.Now, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := g.SetB0(ctx, ark, flash, 2_242_178); err != nil {
		t.Fatal(err)
	}
	qc, err := g.Check(ark, flash)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Admit(ctx, ledger.AdmitRequest{RunID: "past-wall", TenantID: "team", Upstream: ark, Model: flash,
		ReserveUnits: 1_960_000, Quota: qc, Actor: ledger.System("test")}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Settle(ctx, "past-wall", 1_960_000, "test usage", ledger.System("test")); err != nil {
		t.Fatal(err)
	}
	before, err := st.Audit(ctx, ledger.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		rows, err := g.State(ctx)
		if err != nil || rows[0].UsageToday != 1_960_000 || rows[0].Evicted {
			t.Fatalf("state %+v, %v: want today's usage re-read and the eviction the guard enforces (none yet)", rows, err)
		}
	}
	after, err := st.Audit(ctx, ledger.AuditFilter{})
	if err != nil || len(after) != len(before) {
		t.Fatalf("State wrote %d audit rows (%v)", len(after)-len(before), err)
	}
	if err := g.Observe(ctx, ark, flash); err != nil {
		t.Fatal(err)
	}
	if n := len(auditKinds(t, st, ledger.AuditEvict)); n != 2 { // the fail-closed start, then the usage wall
		t.Fatalf("%d evict rows after Observe, want 2", n)
	}
	if rows, _ := g.State(ctx); !rows[0].Evicted {
		t.Fatalf("state after Observe %+v, want evicted", rows)
	}
}
