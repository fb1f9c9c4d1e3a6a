package quota_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/quota"
	"github.com/quotagate/quotagate/backend/sqlite"
)

// The top-up tests run the real guard over a real SQLite ledger; only the
// filler call is a stand-in (fillerCaller), and it settles real runs of the
// system tenant in that ledger, as the server's adapter will.

const topUpTenant = quota.DefaultTopUpTenant

// openLedger opens (or reopens: a restart) the ledger file at path with the
// users' tenant and the top-up's system tenant.
func openLedger(tb testing.TB, path string, now func() time.Time) *sqlite.Store {
	tb.Helper()
	st, err := sqlite.Open(path, sqlite.Options{Synchronous: "OFF", Now: now})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = st.Close() })
	err = st.ApplyTenants(context.Background(), []ledger.Tenant{
		{ID: "team", BudgetUnits: 1 << 40, MaxConcurrent: 1000, KeyHashes: []string{ledger.HashKey("k")}},
		{ID: topUpTenant, BudgetUnits: 1 << 40, MaxConcurrent: 1}}, ledger.System("test"))
	if err != nil {
		tb.Fatal(err)
	}
	return st
}

// topUpRig is one process's guard and top-up over a ledger file.
type topUpRig struct {
	t      *testing.T
	c      *clock
	st     *sqlite.Store
	g      *quota.Guard
	o      quota.Options
	caller *fillerCaller
	top    *quota.TopUp
}

func newTopUpRig(t *testing.T, c *clock, path string, o quota.Options, ro quota.TopUpRunOptions,
	sources map[string]quota.BalanceSource) *topUpRig {
	t.Helper()
	o.TopUp.Enabled = true
	st := openLedger(t, path, c.Now)
	g, err := quota.NewGuard(st, []quota.ModelOptions{{Upstream: ark, Model: flash, Options: o}}, sources, c.Now, nil)
	if err != nil {
		t.Fatal(err)
	}
	o, err = o.Validate()
	if err != nil {
		t.Fatal(err)
	}
	r := &topUpRig{t: t, c: c, st: st, g: g, o: o}
	r.caller = &fillerCaller{rig: r}
	if ro.Spend == nil {
		ro.Spend = map[string]bool{ark: true}
	}
	r.top, err = quota.NewTopUp(g, r.caller, ro)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *topUpRig) usage() ledger.QuotaUsage {
	r.t.Helper()
	u, err := r.st.QuotaUsage(context.Background(), ark, flash, r.o.Day(r.c.Now()))
	if err != nil {
		r.t.Fatal(err)
	}
	return u
}

// userSpends is real-user traffic through the guard's atomic check; a
// refusal is an answer, not a failure.
func (r *topUpRig) userSpends(units ledger.Units) bool {
	ctx := context.Background()
	qc, err := r.g.Check(ark, flash)
	if err != nil {
		return false
	}
	id := ledger.RunID(fmt.Sprintf("u%d", runSeq.Add(1)))
	if _, err := r.st.Admit(ctx, ledger.AdmitRequest{RunID: id, TenantID: "team", Upstream: ark, Model: flash,
		ReserveUnits: units, Quota: qc, Actor: ledger.System("test")}); err != nil {
		return false
	}
	if _, err := r.st.Settle(ctx, id, units, "user usage", ledger.System("test")); err != nil {
		r.t.Errorf("settle: %v", err)
	}
	if err := r.g.Observe(ctx, ark, flash); err != nil {
		r.t.Errorf("observe: %v", err)
	}
	return true
}

func (r *topUpRig) tick(at time.Time) quota.TopUpResult {
	r.t.Helper()
	r.c.Set(at)
	res := r.top.Tick(context.Background())
	if len(res) != 1 {
		r.t.Fatalf("tick results %+v, want one model", res)
	}
	return res[0]
}

// topUpRows returns the top-up's audit rows by reason.
func topUpRows(t *testing.T, st ledger.Store) map[string][]ledger.AuditEntry {
	t.Helper()
	out := map[string][]ledger.AuditEntry{}
	for _, e := range auditKinds(t, st, ledger.AuditSync) {
		if e.Actor == quota.TopUpActor {
			out[e.Reason] = append(out[e.Reason], e)
		}
	}
	return out
}

// fillerCaller stands in for the server's adapter. Like the seed's job it
// reaches the provider past the gate: its run is admitted with no effective
// limit, so only the executor's own clamps keep the day inside the pool.
// Before each call it checks those clamps against the store itself.
type fillerCaller struct {
	rig *topUpRig

	mu         sync.Mutex
	bounds     []ledger.Units
	violations []string
	settled    ledger.Units
	// during runs while the call holds its reserve (users, syncs, the clock).
	during func(call int)
	// spend is what a call settles for its bound; nil: all of it.
	spend func(call int, bound ledger.Units) ledger.Units
	fail  func(call int) error
}

func (f *fillerCaller) Call(ctx context.Context, upstream, model string, bound ledger.Units) (ledger.Units, error) {
	r := f.rig
	f.mu.Lock()
	call := len(f.bounds) + 1
	f.bounds = append(f.bounds, bound)
	f.mu.Unlock()
	if upstream != ark || model != flash {
		return 0, fmt.Errorf("call for %s/%s", upstream, model)
	}
	if f.fail != nil {
		if err := f.fail(call); err != nil {
			return 0, err
		}
	}
	day := r.o.Day(r.c.Now())
	u, err := r.st.QuotaUsage(ctx, ark, flash, day)
	if err != nil {
		return 0, err
	}
	b0 := r.b0()
	used := u.UsageUnits + u.HeldInFlight
	if used+bound > r.o.DailyCap || used+bound > b0-r.o.SmallBuffer {
		f.mu.Lock()
		f.violations = append(f.violations, fmt.Sprintf("call %d: usage %d + held %d + bound %d > min(cap %d, B0 %d − buffer %d)",
			call, u.UsageUnits, u.HeldInFlight, bound, r.o.DailyCap, b0, r.o.SmallBuffer))
		f.mu.Unlock()
	}
	id := ledger.RunID(fmt.Sprintf("topup%d", runSeq.Add(1)))
	if _, err := r.st.Admit(ctx, ledger.AdmitRequest{RunID: id, TenantID: topUpTenant, Upstream: ark, Model: flash,
		ReserveUnits: bound, Quota: &ledger.QuotaCheck{Day: day, LimitUnits: ledger.MaxUnits}, Actor: ledger.System("topup")}); err != nil {
		return 0, err
	}
	if f.during != nil {
		f.during(call)
	}
	spent := bound
	if f.spend != nil {
		spent = f.spend(call, bound)
	}
	if _, err := r.st.Settle(context.WithoutCancel(ctx), id, min(spent, bound), "filler usage", ledger.System("test")); err != nil {
		return 0, err
	}
	f.mu.Lock()
	f.settled += spent
	f.mu.Unlock()
	if err := r.g.Observe(context.WithoutCancel(ctx), ark, flash); err != nil {
		return spent, err
	}
	return spent, nil
}

func (f *fillerCaller) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.bounds)
}

// b0 is the guard's B0 for today, as the admin state shows it.
func (r *topUpRig) b0() ledger.Units {
	rows, err := r.g.State(context.Background())
	if err != nil {
		r.t.Fatal(err)
	}
	return rows[0].B0Estimate
}

// Seed 002 §8.4: plan ≤ cap − usage and plan ≤ B0_est − small buffer − usage,
// re-checked before every call with fresh usage while real users keep
// spending. A plan computed once at 23:20 and spent in full would overshoot
// by exactly what the users spent meanwhile.
func TestTopUpClampsHoldWhileUsageMoves(t *testing.T) {
	for _, tc := range []struct {
		name      string
		b0        ledger.Units
		usageWall ledger.Units
		before    ledger.Units // users' usage by 23:20
		held      ledger.Units // a user's run in flight through the whole top-up
		user      ledger.Units // users' spend during each filler call
		clamp     ledger.Units // min(cap, B0 − buffer)
		wantPlan  ledger.Units
	}{
		{name: "B0 binds", b0: 1_200_000, before: 500_000, user: 7_000, clamp: 1_150_000, wantPlan: 649_999},
		{name: "cap binds", b0: 3_000_000, usageWall: 2_000_000, before: 1_000_000, user: 25_000,
			clamp: 2_000_000, wantPlan: 999_999},
		{name: "users outrun the job", b0: 1_200_000, before: 1_000_000, user: 60_000, clamp: 1_150_000, wantPlan: 149_999},
		{name: "a user's hold in flight", b0: 1_200_000, before: 500_000, held: 200_000, user: 7_000, clamp: 1_150_000,
			wantPlan: 449_999},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &clock{t: at("2026-08-13", "10:00:00")}
			o := quota.DefaultOptions()
			if tc.usageWall != 0 {
				o.UsageWall = tc.usageWall
			}
			r := newTopUpRig(t, c, filepath.Join(t.TempDir(), "l.db"), o, quota.TopUpRunOptions{}, nil)
			ctx := context.Background()
			if _, err := r.g.SetB0(ctx, ark, flash, tc.b0); err != nil {
				t.Fatal(err)
			}
			if !r.userSpends(tc.before) {
				t.Fatal("users' day refused")
			}
			var held ledger.RunID
			if tc.held > 0 {
				qc, err := r.g.Check(ark, flash)
				if err != nil {
					t.Fatal(err)
				}
				held = "long-user-run"
				if _, err := r.st.Admit(ctx, ledger.AdmitRequest{RunID: held, TenantID: "team", Upstream: ark, Model: flash,
					ReserveUnits: tc.held, Quota: qc, Actor: ledger.System("test")}); err != nil {
					t.Fatal(err)
				}
			}
			var userSpent ledger.Units
			r.caller.during = func(int) {
				if r.userSpends(tc.user) {
					userSpent += tc.user
				}
			}
			r.caller.spend = func(call int, bound ledger.Units) ledger.Units {
				if call%3 == 0 {
					return bound * 8 / 10 // calls often settle below their bound
				}
				return bound
			}
			res := r.tick(at("2026-08-13", "23:20:00"))
			if res.Outcome != quota.TopUpRan || res.Plan != tc.wantPlan {
				t.Fatalf("result %+v, want ran with plan %d", res, tc.wantPlan)
			}
			if len(r.caller.violations) > 0 {
				t.Fatalf("clamps broken:\n%s", strings.Join(r.caller.violations, "\n"))
			}
			if held != "" { // the long run ends using all it reserved: it still fits
				if _, err := r.st.Settle(ctx, held, tc.held, "user usage", ledger.System("test")); err != nil {
					t.Fatal(err)
				}
				userSpent += tc.held
			}
			u := r.usage()
			if u.UsageUnits > tc.clamp || u.HeldInFlight != 0 {
				t.Fatalf("usage %d (held %d) past min(cap, B0 − buffer) = %d", u.UsageUnits, u.HeldInFlight, tc.clamp)
			}
			if u.UsageUnits != tc.before+userSpent+res.Spent || res.Spent != r.caller.settled {
				t.Fatalf("usage %d != before %d + users %d + top-up %d (caller settled %d)",
					u.UsageUnits, tc.before, userSpent, res.Spent, r.caller.settled)
			}
			// What the users spent during the run came out of the plan.
			if res.Spent > res.Plan-(userSpent-tc.held) || userSpent == 0 {
				t.Fatalf("top-up spent %d of plan %d while users spent %d", res.Spent, res.Plan, userSpent)
			}
			// It really filled: what is left is less than one smallest call.
			if left := tc.clamp - u.UsageUnits; left >= quota.DefaultTopUpMinCallUnits {
				t.Fatalf("stopped with %d left (result %+v)", left, res)
			}
			if res.Stop != quota.StopPlanExhausted || res.Calls != r.caller.calls() || res.Calls < 2 {
				t.Fatalf("result %+v after %d calls", res, r.caller.calls())
			}
			rows := topUpRows(t, r.st)
			if len(rows[quota.ReasonTopUpRun]) != 1 || rows[quota.ReasonTopUpRun][0].Units != res.Plan ||
				len(rows[quota.ReasonTopUpDone]) != 1 || rows[quota.ReasonTopUpDone][0].Units != res.Spent {
				t.Fatalf("audit rows %+v", rows)
			}
			if rows[quota.ReasonTopUpRun][0].TenantID != topUpTenant {
				t.Fatalf("top-up audit row tenant %q", rows[quota.ReasonTopUpRun][0].TenantID)
			}
			if bad, err := r.st.Verify(ctx); err != nil || len(bad) > 0 {
				t.Fatalf("ledger verify: %v %v", bad, err)
			}
		})
	}
}

// At most once a day per model, remembered through the audit log: a restart
// at 23:30 after the 23:20 run does not run again; the next day does.
func TestTopUpOnceADayAcrossRestart(t *testing.T) {
	c := &clock{t: at("2026-08-13", "10:00:00")}
	path := filepath.Join(t.TempDir(), "l.db")
	o := quota.DefaultOptions()
	r := newTopUpRig(t, c, path, o, quota.TopUpRunOptions{}, nil)
	ctx := context.Background()
	if _, err := r.g.SetB0(ctx, ark, flash, 1_200_000); err != nil {
		t.Fatal(err)
	}
	r.userSpends(300_000)
	if res := r.tick(at("2026-08-13", "23:19:59")); res.Outcome != quota.TopUpNotDue || r.caller.calls() != 0 {
		t.Fatalf("before 23:20: %+v, %d calls", res, r.caller.calls())
	}
	res := r.tick(at("2026-08-13", "23:20:00"))
	if res.Outcome != quota.TopUpRan || res.Spent == 0 {
		t.Fatalf("23:20: %+v", res)
	}
	calls := r.caller.calls()
	if res := r.tick(at("2026-08-13", "23:25:00")); res.Outcome != quota.TopUpDone || r.caller.calls() != calls {
		t.Fatalf("23:25 in the same process: %+v, %d calls (had %d)", res, r.caller.calls(), calls)
	}

	// Restart: a new process over the same ledger file.
	if err := r.st.Close(); err != nil {
		t.Fatal(err)
	}
	r2 := newTopUpRig(t, c, path, o, quota.TopUpRunOptions{}, nil)
	if res := r2.tick(at("2026-08-13", "23:30:00")); res.Outcome != quota.TopUpDone || r2.caller.calls() != 0 {
		t.Fatalf("23:30 after a restart: %+v, %d calls", res, r2.caller.calls())
	}
	if res := r2.tick(at("2026-08-14", "09:00:00")); res.Outcome != quota.TopUpNotDue {
		t.Fatalf("next morning: %+v", res)
	}
	if _, err := r2.g.SetB0(ctx, ark, flash, 1_200_000); err != nil {
		t.Fatal(err)
	}
	res = r2.tick(at("2026-08-14", "23:21:00"))
	if res.Outcome != quota.TopUpRan || res.Day != "2026-08-14" || res.Plan != 1_149_999 || r2.caller.calls() == 0 {
		t.Fatalf("next day 23:21: %+v, %d calls", res, r2.caller.calls())
	}
	rows := topUpRows(t, r2.st)
	if len(rows[quota.ReasonTopUpRun]) != 2 || len(rows[quota.ReasonTopUpDone]) != 2 {
		t.Fatalf("two days, two runs: %+v", rows)
	}
}

// A run cut short (cancelled mid-run, or a crash after its topup_run row)
// still took the day: a restart does not spend the plan a second time.
func TestTopUpCutShortIsNotRepeated(t *testing.T) {
	c := &clock{t: at("2026-08-13", "10:00:00")}
	path := filepath.Join(t.TempDir(), "l.db")
	o := quota.DefaultOptions()
	r := newTopUpRig(t, c, path, o, quota.TopUpRunOptions{}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := r.g.SetB0(ctx, ark, flash, 1_200_000); err != nil {
		t.Fatal(err)
	}
	r.caller.during = func(call int) {
		if call == 2 {
			cancel() // shutdown while the second call is in flight
		}
	}
	c.Set(at("2026-08-13", "23:20:00"))
	res := r.top.Tick(ctx)[0]
	if res.Outcome != quota.TopUpRan || res.Stop != quota.StopCancelled || res.Calls != 2 {
		t.Fatalf("cancelled run: %+v", res)
	}
	rows := topUpRows(t, r.st)
	if len(rows[quota.ReasonTopUpDone]) != 1 || !strings.Contains(rows[quota.ReasonTopUpDone][0].Detail, "stop: cancelled") {
		t.Fatalf("the cut run is audited as done despite the cancelled context: %+v", rows)
	}
	if err := r.st.Close(); err != nil {
		t.Fatal(err)
	}
	r2 := newTopUpRig(t, c, path, o, quota.TopUpRunOptions{}, nil)
	if res := r2.tick(at("2026-08-13", "23:30:00")); res.Outcome != quota.TopUpDone || r2.caller.calls() != 0 {
		t.Fatalf("after restart: %+v, %d calls", res, r2.caller.calls())
	}
}

// Stop conditions other than the plan: the model evicted (by a sync, or the
// gate refusing a call with quota_guard), any other refusal, the day rolling
// over mid-run, a call settling more than its bound.
func TestTopUpStops(t *testing.T) {
	for _, tc := range []struct {
		name      string
		setup     func(r *topUpRig)
		wantStop  string
		wantCalls int
	}{
		{name: "balance wall eviction by a sync", wantStop: quota.StopEvicted, wantCalls: 2, setup: func(r *topUpRig) {
			r.caller.during = func(call int) {
				if call == 2 {
					// The provider says 50,000 left: below the balance wall with usage > 0.
					if _, err := r.g.SetBalance(context.Background(), ark, flash, 50_000); err != nil {
						r.t.Error(err)
					}
				}
			}
		}},
		{name: "the gate refuses: quota_guard", wantStop: quota.StopEvicted, wantCalls: 3, setup: func(r *topUpRig) {
			r.caller.fail = func(call int) error {
				if call == 3 {
					return fmt.Errorf("filler call: %w", &ledger.Error{Code: ledger.CodeQuotaGuard, Message: "evicted"})
				}
				return nil
			}
		}},
		{name: "upstream error", wantStop: quota.StopRefused, wantCalls: 1, setup: func(r *topUpRig) {
			r.caller.fail = func(int) error { return errors.New("upstream 500") }
		}},
		{name: "day rolls over", wantStop: quota.StopDayOver, wantCalls: 4, setup: func(r *topUpRig) {
			r.caller.during = func(call int) {
				if call == 4 {
					r.c.Set(at("2026-08-14", "00:00:01"))
				}
			}
		}},
		{name: "a call overspends its bound", wantStop: quota.StopOverspent, wantCalls: 1, setup: func(r *topUpRig) {
			r.caller.spend = func(_ int, bound ledger.Units) ledger.Units { return bound + 1 }
		}},
		{name: "a call settles nothing", wantStop: quota.StopNoProgress, wantCalls: 1, setup: func(r *topUpRig) {
			r.caller.spend = func(int, ledger.Units) ledger.Units { return 0 }
		}},
		{name: "max calls", wantStop: quota.StopMaxCalls, wantCalls: 5, setup: func(r *topUpRig) {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &clock{t: at("2026-08-13", "10:00:00")}
			ro := quota.TopUpRunOptions{}
			if tc.wantStop == quota.StopMaxCalls {
				ro.MaxCalls = 5
			}
			r := newTopUpRig(t, c, filepath.Join(t.TempDir(), "l.db"), quota.DefaultOptions(), ro, nil)
			if _, err := r.g.SetB0(context.Background(), ark, flash, 1_200_000); err != nil {
				t.Fatal(err)
			}
			r.userSpends(100_000)
			tc.setup(r)
			res := r.tick(at("2026-08-13", "23:20:00"))
			if res.Outcome != quota.TopUpRan || res.Stop != tc.wantStop || res.Calls != tc.wantCalls || r.caller.calls() != tc.wantCalls {
				t.Fatalf("result %+v after %d calls; want stop %s after %d", res, r.caller.calls(), tc.wantStop, tc.wantCalls)
			}
			if res.Spent >= res.Plan {
				t.Fatalf("stopped by %s yet spent the whole plan: %+v", tc.wantStop, res)
			}
			done := topUpRows(t, r.st)[quota.ReasonTopUpDone]
			if len(done) != 1 || !strings.Contains(done[0].Detail, "stop: "+tc.wantStop) {
				t.Fatalf("done rows %+v", done)
			}
		})
	}
}

// Dry run: the plan is audited once a day and nothing is called or spent.
func TestTopUpDryRunCallsNothing(t *testing.T) {
	for _, tc := range []struct {
		name      string
		ro        quota.TopUpRunOptions
		nilCaller bool
	}{
		{name: "upstream not in Spend", ro: quota.TopUpRunOptions{Spend: map[string]bool{"other": true}}},
		{name: "Spend false", ro: quota.TopUpRunOptions{Spend: map[string]bool{ark: false}}},
		{name: "no caller", nilCaller: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &clock{t: at("2026-08-13", "10:00:00")}
			path := filepath.Join(t.TempDir(), "l.db")
			r := newTopUpRig(t, c, path, quota.DefaultOptions(), tc.ro, nil)
			if tc.nilCaller {
				var err error
				if r.top, err = quota.NewTopUp(r.g, nil, quota.TopUpRunOptions{Spend: map[string]bool{ark: true}}); err != nil {
					t.Fatal(err)
				}
			}
			ctx := context.Background()
			if _, err := r.g.SetB0(ctx, ark, flash, 1_200_000); err != nil {
				t.Fatal(err)
			}
			r.userSpends(500_000)
			res := r.tick(at("2026-08-13", "23:21:00"))
			if res.Outcome != quota.TopUpDryRun || res.Plan != 649_999 || res.Spent != 0 || r.caller.calls() != 0 {
				t.Fatalf("dry run %+v, %d calls", res, r.caller.calls())
			}
			if u := r.usage(); u.UsageUnits != 500_000 {
				t.Fatalf("usage after a dry run %d", u.UsageUnits)
			}
			if res := r.tick(at("2026-08-13", "23:40:00")); res.Outcome != quota.TopUpDone {
				t.Fatalf("second tick %+v", res)
			}
			rows := topUpRows(t, r.st)
			if len(rows[quota.ReasonTopUpDryRun]) != 1 || rows[quota.ReasonTopUpDryRun][0].Units != 649_999 ||
				len(rows[quota.ReasonTopUpRun]) != 0 || len(rows[quota.ReasonTopUpDone]) != 0 {
				t.Fatalf("dry-run audit rows %+v", rows)
			}
		})
	}
}

// A dry run earlier in the day does not take the day from a real run (the
// operator turned dry_run off and restarted); a real run does take it from
// a later dry run.
func TestTopUpDryRunThenRealRun(t *testing.T) {
	c := &clock{t: at("2026-08-13", "10:00:00")}
	path := filepath.Join(t.TempDir(), "l.db")
	o := quota.DefaultOptions()
	dry := newTopUpRig(t, c, path, o, quota.TopUpRunOptions{Spend: map[string]bool{}}, nil)
	if _, err := dry.g.SetB0(context.Background(), ark, flash, 1_200_000); err != nil {
		t.Fatal(err)
	}
	if res := dry.tick(at("2026-08-13", "23:20:00")); res.Outcome != quota.TopUpDryRun {
		t.Fatalf("dry %+v", res)
	}
	if err := dry.st.Close(); err != nil {
		t.Fatal(err)
	}
	live := newTopUpRig(t, c, path, o, quota.TopUpRunOptions{}, nil)
	if res := live.tick(at("2026-08-13", "23:30:00")); res.Outcome != quota.TopUpRan || live.caller.calls() == 0 {
		t.Fatalf("real run after a dry run: %+v", res)
	}
	if err := live.st.Close(); err != nil {
		t.Fatal(err)
	}
	dry2 := newTopUpRig(t, c, path, o, quota.TopUpRunOptions{Spend: map[string]bool{}}, nil)
	if res := dry2.tick(at("2026-08-13", "23:40:00")); res.Outcome != quota.TopUpDone {
		t.Fatalf("dry run after a real run: %+v", res)
	}
}

// errSource is a provider that cannot be read.
type errSource struct{}

func (errSource) Balance(context.Context, string) (ledger.Units, error) {
	return 0, errors.New("provider down")
}

// Nothing is spent without a fresh reading or a known B0, nor while the
// model is evicted by the balance wall; such an attempt is deferred (no
// audit row) and retried, and runs once the reading arrives.
func TestTopUpDeferred(t *testing.T) {
	t.Run("no B0", func(t *testing.T) {
		c := &clock{t: at("2026-08-13", "10:00:00")}
		r := newTopUpRig(t, c, filepath.Join(t.TempDir(), "l.db"), quota.DefaultOptions(), quota.TopUpRunOptions{}, nil)
		res := r.tick(at("2026-08-13", "23:20:00"))
		if res.Outcome != quota.TopUpDeferred || r.caller.calls() != 0 || len(topUpRows(t, r.st)) != 0 {
			t.Fatalf("without B0: %+v", res)
		}
		if _, err := r.g.SetB0(context.Background(), ark, flash, 1_200_000); err != nil {
			t.Fatal(err)
		}
		if res := r.tick(at("2026-08-13", "23:25:00")); res.Outcome != quota.TopUpRan || res.Plan != 1_149_999 {
			t.Fatalf("after B0 arrived: %+v", res)
		}
	})
	t.Run("balance wall", func(t *testing.T) {
		c := &clock{t: at("2026-08-13", "10:00:00")}
		r := newTopUpRig(t, c, filepath.Join(t.TempDir(), "l.db"), quota.DefaultOptions(), quota.TopUpRunOptions{}, nil)
		ctx := context.Background()
		if _, err := r.g.SetB0(ctx, ark, flash, 1_200_000); err != nil {
			t.Fatal(err)
		}
		r.userSpends(10_000)
		if _, err := r.g.SetBalance(ctx, ark, flash, 60_000); err != nil {
			t.Fatal(err)
		}
		res := r.tick(at("2026-08-13", "23:20:00"))
		if res.Outcome != quota.TopUpDeferred || !strings.HasPrefix(res.Stop, quota.StopEvicted) || r.caller.calls() != 0 {
			t.Fatalf("evicted at the balance wall: %+v", res)
		}
	})
	t.Run("sync fails", func(t *testing.T) {
		c := &clock{t: at("2026-08-13", "10:00:00")}
		r := newTopUpRig(t, c, filepath.Join(t.TempDir(), "l.db"), quota.DefaultOptions(), quota.TopUpRunOptions{},
			map[string]quota.BalanceSource{ark: errSource{}})
		res := r.tick(at("2026-08-13", "23:20:00"))
		if res.Outcome != quota.TopUpDeferred || !strings.Contains(res.Stop, "provider down") || r.caller.calls() != 0 {
			t.Fatalf("provider down: %+v", res)
		}
		if len(topUpRows(t, r.st)) != 0 {
			t.Fatal("a deferred attempt must not take the day")
		}
	})
}

// With a balance source the attempt syncs first and plans on that reading.
func TestTopUpSyncsFirst(t *testing.T) {
	c := &clock{t: at("2026-08-13", "10:00:00")}
	src := &countingSource{bal: 1_200_000}
	r := newTopUpRig(t, c, filepath.Join(t.TempDir(), "l.db"), quota.DefaultOptions(), quota.TopUpRunOptions{},
		map[string]quota.BalanceSource{ark: src})
	if _, err := r.g.Sync(context.Background(), ark, flash); err != nil { // morning reading: B0 1,200,000
		t.Fatal(err)
	}
	res := r.tick(at("2026-08-13", "23:20:00"))
	if res.Outcome != quota.TopUpRan || src.reads() != 2 || res.Plan != 1_149_999 {
		t.Fatalf("%+v after %d reads", res, src.reads())
	}
}

type countingSource struct {
	mu  sync.Mutex
	bal ledger.Units
	n   int
}

func (s *countingSource) Balance(context.Context, string) (ledger.Units, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	return s.bal, nil
}

func (s *countingSource) reads() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

// Run attempts at start when past TopUp.At, then waits for tomorrow's; it
// returns when its context ends.
func TestTopUpRunLoop(t *testing.T) {
	c := &clock{t: at("2026-08-13", "10:00:00")}
	r := newTopUpRig(t, c, filepath.Join(t.TempDir(), "l.db"), quota.DefaultOptions(), quota.TopUpRunOptions{}, nil)
	if _, err := r.g.SetB0(context.Background(), ark, flash, 1_200_000); err != nil {
		t.Fatal(err)
	}
	c.Set(at("2026-08-13", "23:21:00"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.top.Run(ctx) }()
	deadline := time.Now().Add(10 * time.Second)
	for len(topUpRows(t, r.st)[quota.ReasonTopUpDone]) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no topup_done row from Run")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	if u := r.usage(); u.UsageUnits <= 1_100_000 || u.UsageUnits > 1_150_000 {
		t.Fatalf("usage after the loop's run %d", u.UsageUnits)
	}
}

func TestNewTopUpValidates(t *testing.T) {
	c := &clock{t: at("2026-08-13", "10:00:00")}
	st := openLedger(t, filepath.Join(t.TempDir(), "l.db"), c.Now)
	g, err := quota.NewGuard(st, nil, nil, c.Now, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []quota.TopUpRunOptions{{CallUnits: 1000, MinCallUnits: 2000}, {MinCallUnits: -1}, {MaxCalls: -1},
		{CallUnits: ledger.MaxUnits + 1}} {
		if _, err := quota.NewTopUp(g, nil, o); ledger.ErrorCode(err) != ledger.CodeInvalidRequest {
			t.Errorf("options %+v: %v, want invalid_request", o, err)
		}
	}
	if _, err := quota.NewTopUp(nil, nil, quota.TopUpRunOptions{}); err == nil {
		t.Error("no guard accepted")
	}
}
