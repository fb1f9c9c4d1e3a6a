// Package ledgertest is the contract suite every ledger.Store must pass
// (SQLite now, PostgreSQL later): seed 000's figures, the refusals and their
// audit rows, the run lifecycle, concurrency without overspend, and a seeded
// simulation of random interleavings checked against an in-memory model.
package ledgertest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
)

// Opener returns a fresh, empty store; the opener registers its Close with
// tb.Cleanup.
type Opener func(tb testing.TB) ledger.Store

// Run runs the contract suite against stores made by open.
func Run(t *testing.T, open Opener) {
	t.Run("Seed000", func(t *testing.T) { testSeed000(t, open(t)) })
	t.Run("ReconcileBounds", func(t *testing.T) { testReconcileBounds(t, open(t)) })
	t.Run("AdmitRefusals", func(t *testing.T) { testAdmitRefusals(t, open) })
	t.Run("QueuedCountsAsActive", func(t *testing.T) { testQueuedCountsAsActive(t, open(t)) })
	t.Run("SettlePartial", func(t *testing.T) { testSettlePartial(t, open(t)) })
	t.Run("SettleBounds", func(t *testing.T) { testSettleBounds(t, open(t)) })
	t.Run("SettleOverrun", func(t *testing.T) { testSettleOverrun(t, open(t)) })
	t.Run("EndedRunRefusesTransitions", func(t *testing.T) { testEndedRun(t, open(t)) })
	t.Run("ReleaseHold", func(t *testing.T) { testReleaseHold(t, open(t)) })
	t.Run("RecoverInterrupted", func(t *testing.T) { testRecoverInterrupted(t, open(t)) })
	t.Run("NamedThenRecovered", func(t *testing.T) { testNamedThenRecovered(t, open(t)) })
	t.Run("RefusalsAggregate", func(t *testing.T) { testRefusalsAggregate(t, open(t)) })
	t.Run("RefusalChange", func(t *testing.T) { testRefusalChange(t, open(t)) })
	t.Run("ApplyTenants", func(t *testing.T) { testApplyTenants(t, open(t)) })
	t.Run("ApplyTenantsBudgetBelowCommitted", func(t *testing.T) { testBudgetBelowCommitted(t, open(t)) })
	t.Run("Quota", func(t *testing.T) { testQuota(t, open(t)) })
	t.Run("Snapshots", func(t *testing.T) { testSnapshots(t, open(t)) })
	t.Run("AuditFilter", func(t *testing.T) { testAuditFilter(t, open(t)) })
	t.Run("AuditPage", func(t *testing.T) { testAuditPage(t, open(t)) })
	t.Run("RunsFilter", func(t *testing.T) { testRunsFilter(t, open(t)) })
	t.Run("Books", func(t *testing.T) { RunBooks(t, open) })
	t.Run("Concurrency", func(t *testing.T) { RunConcurrency(t, open) })
	t.Run("Idempotency", func(t *testing.T) { RunIdempotency(t, open) })
	t.Run("Money", func(t *testing.T) { RunMoney(t, open) })
	t.Run("Failover", func(t *testing.T) { RunFailover(t, open) })
}

// Tenant is a tenant with no keys, for tests.
func Tenant(id string, budget ledger.Units, maxConcurrent int) ledger.Tenant {
	return ledger.Tenant{ID: id, BudgetUnits: budget, MaxConcurrent: maxConcurrent}
}

// MustApply applies tenants or fails tb.
func MustApply(tb testing.TB, st ledger.Store, tenants ...ledger.Tenant) {
	tb.Helper()
	if err := st.ApplyTenants(context.Background(), tenants, ledger.Operator("test")); err != nil {
		tb.Fatalf("apply tenants: %v", err)
	}
}

// MustAdmit admits a run or fails tb.
func MustAdmit(tb testing.TB, st ledger.Store, req ledger.AdmitRequest) ledger.Run {
	tb.Helper()
	if req.Upstream == "" {
		req.Upstream, req.Model = "demo", "demo-model"
	}
	run, err := st.Admit(context.Background(), req)
	if err != nil {
		tb.Fatalf("admit %s: %v", req.RunID, err)
	}
	return run
}

// WantCode fails tb unless err carries code.
func WantCode(tb testing.TB, err error, code string) {
	tb.Helper()
	if got := ledger.ErrorCode(err); got != code {
		tb.Fatalf("error code = %q (%v), want %q", got, err, code)
	}
}

// WantBalance fails tb unless the tenant's balance is exactly want (budget,
// spent, held, available, active).
func WantBalance(tb testing.TB, st ledger.Store, want ledger.Balance) {
	tb.Helper()
	got, err := st.Balance(context.Background(), want.TenantID)
	if err != nil {
		tb.Fatalf("balance %s: %v", want.TenantID, err)
	}
	if got != want {
		tb.Fatalf("balance of %s:\n got %+v\nwant %+v", want.TenantID, got, want)
	}
	if err := got.Check(); err != nil {
		tb.Fatal(err)
	}
}

// WantVerified fails tb unless st.Verify reports no difference.
func WantVerified(tb testing.TB, st ledger.Store) {
	tb.Helper()
	problems, err := st.Verify(context.Background())
	if err != nil {
		tb.Fatalf("verify: %v", err)
	}
	for _, p := range problems {
		tb.Errorf("verify: %s", p)
	}
	if len(problems) > 0 {
		tb.FailNow()
	}
}

// tenantAudit returns the tenant's audit rows in sequence order.
func tenantAudit(tb testing.TB, st ledger.Store, tenant string) []ledger.AuditEntry {
	tb.Helper()
	rows, err := st.Audit(context.Background(), ledger.AuditFilter{TenantID: tenant})
	if err != nil {
		tb.Fatalf("audit: %v", err)
	}
	return rows
}

func lastAudit(tb testing.TB, st ledger.Store, tenant string) ledger.AuditEntry {
	tb.Helper()
	rows := tenantAudit(tb, st, tenant)
	if len(rows) == 0 {
		tb.Fatalf("no audit rows for %s", tenant)
	}
	return rows[len(rows)-1]
}

func mustRun(tb testing.TB, st ledger.Store, id ledger.RunID) ledger.Run {
	tb.Helper()
	run, err := st.Run(context.Background(), id)
	if err != nil {
		tb.Fatalf("run %s: %v", id, err)
	}
	return run
}

// testSeed000 replays seed 000 §15.3: the interrupted demo stream (output cap
// 20, "hi" → reserve 22) keeps its hold; reconciling at the 6 units of
// evidence ("hi" 2 bytes + "part" 4 bytes) spends 6 and frees the rest.
func testSeed000(t *testing.T, st ledger.Store) {
	ctx := context.Background()
	MustApply(t, st, Tenant("tenant-a", 110, 1))

	// §15.2: "hi" with output cap 100 reserves 102; while it is held the 102
	// cannot back another call.
	big := MustAdmit(t, st, ledger.AdmitRequest{RunID: "r-102", TenantID: "tenant-a", ReserveUnits: 102, Actor: gateway})
	WantBalance(t, st, ledger.Balance{TenantID: "tenant-a", BudgetUnits: 110, HeldUnits: 102, AvailableUnits: 8, Active: 1})
	if _, err := st.Settle(ctx, big.ID, 0, "usage 0", by); err != nil {
		t.Fatal(err)
	}

	run := MustAdmit(t, st, ledger.AdmitRequest{RunID: "r-22", TenantID: "tenant-a", ReserveUnits: 22, Actor: gateway})
	if run.Status != ledger.RunActive || run.Usage != ledger.UsagePending || run.HeldUnits != 22 {
		t.Fatalf("admitted run = %+v", run)
	}
	run, err := st.KeepHold(ctx, "r-22", ledger.RunInterrupted, "upstream cut the stream after part; no usage, no [DONE]", by)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != ledger.RunInterrupted || run.Usage != ledger.UsageUnknown || run.HeldUnits != 22 {
		t.Fatalf("held run = %+v", run)
	}
	held := ledger.Balance{TenantID: "tenant-a", BudgetUnits: 110, SpentUnits: 0, HeldUnits: 22, AvailableUnits: 88, Active: 0}
	WantBalance(t, st, held)

	run, err = st.Reconcile(ctx, "r-22", 6, "demo plan: input hi 2 bytes + output part 4 bytes", ledger.ActorAdmin)
	if err != nil {
		t.Fatal(err)
	}
	if run.Usage != ledger.UsageReconciled || run.SpentUnits != 6 || run.HeldUnits != 0 || run.Status != ledger.RunInterrupted {
		t.Fatalf("reconciled run = %+v", run)
	}
	after := ledger.Balance{TenantID: "tenant-a", BudgetUnits: 110, SpentUnits: 6, HeldUnits: 0, AvailableUnits: 104, Active: 0}
	WantBalance(t, st, after)
	e := lastAudit(t, st, "tenant-a")
	if e.Kind != ledger.AuditReconcile || e.Units != 6 || e.Actor != ledger.ActorAdmin || e.Evidence == "" ||
		e.AvailableBefore != 88 || e.AvailableAfter != 104 || e.RunID != "r-22" {
		t.Fatalf("reconcile audit row = %+v", e)
	}
	rows := len(tenantAudit(t, st, "tenant-a"))

	_, err = st.Reconcile(ctx, "r-22", 6, "the same bill again", ledger.ActorAdmin)
	WantCode(t, err, ledger.CodeNotHeld)
	WantBalance(t, st, after)
	if got := len(tenantAudit(t, st, "tenant-a")); got != rows {
		t.Fatalf("second reconcile wrote audit rows: %d → %d", rows, got)
	}
	if run2 := mustRun(t, st, "r-22"); run2.SpentUnits != 6 || run2.Evidence != run.Evidence {
		t.Fatalf("second reconcile changed the run: %+v", run2)
	}
	WantVerified(t, st)
}

func testReconcileBounds(t *testing.T, st ledger.Store) {
	ctx := context.Background()
	MustApply(t, st, Tenant("t", 110, 2))
	MustAdmit(t, st, ledger.AdmitRequest{RunID: "held", TenantID: "t", ReserveUnits: 22})
	if _, err := st.KeepHold(ctx, "held", ledger.RunInterrupted, "cut", by); err != nil {
		t.Fatal(err)
	}
	MustAdmit(t, st, ledger.AdmitRequest{RunID: "running", TenantID: "t", ReserveUnits: 10})
	want := ledger.Balance{TenantID: "t", BudgetUnits: 110, HeldUnits: 32, AvailableUnits: 78, Active: 1}
	WantBalance(t, st, want)
	rows := len(tenantAudit(t, st, "t"))
	for _, tc := range []struct {
		name     string
		id       ledger.RunID
		units    ledger.Units
		evidence string
		code     string
	}{
		{"UnitsAboveReserve", "held", 23, "bill", ledger.CodeInvalidRequest},
		{"NegativeUnits", "held", -1, "bill", ledger.CodeInvalidRequest},
		{"EmptyEvidence", "held", 6, "", ledger.CodeInvalidRequest},
		{"BlankEvidence", "held", 6, "  \t", ledger.CodeInvalidRequest},
		{"UnknownRun", "nope", 6, "bill", ledger.CodeRunNotFound},
		{"StillRunning", "running", 6, "bill", ledger.CodeNotHeld},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := st.Reconcile(ctx, tc.id, tc.units, tc.evidence, ledger.ActorAdmin)
			WantCode(t, err, tc.code)
			WantBalance(t, st, want)
			if got := len(tenantAudit(t, st, "t")); got != rows {
				t.Fatalf("refused reconcile wrote audit rows: %d → %d", rows, got)
			}
			if run := mustRun(t, st, "held"); run.Usage != ledger.UsageUnknown || run.HeldUnits != 22 {
				t.Fatalf("refused reconcile changed the run: %+v", run)
			}
		})
	}
	// The bounds are inclusive: 0 and the whole reserve are both valid.
	MustAdmit(t, st, ledger.AdmitRequest{RunID: "held2", TenantID: "t", ReserveUnits: 5})
	if _, err := st.KeepHold(ctx, "held2", ledger.RunCancelled, "client went away", by); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Reconcile(ctx, "held", 22, "bill: whole reserve", ledger.ActorAdmin); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Reconcile(ctx, "held2", 0, "provider says no charge", ledger.ActorAdmin); err != nil {
		t.Fatal(err)
	}
	WantBalance(t, st, ledger.Balance{TenantID: "t", BudgetUnits: 110, SpentUnits: 22, HeldUnits: 10, AvailableUnits: 78, Active: 1})
	WantVerified(t, st)
}

func testAdmitRefusals(t *testing.T, open Opener) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		tenant  ledger.Tenant
		before  []ledger.AdmitRequest
		req     ledger.AdmitRequest
		code    string
		audited bool
	}{
		{name: "InsufficientBudget", tenant: Tenant("t", 110, 4),
			before: []ledger.AdmitRequest{{RunID: "a", TenantID: "t", ReserveUnits: 102}},
			req:    ledger.AdmitRequest{RunID: "b", TenantID: "t", ReserveUnits: 9}, code: ledger.CodeInsufficientBudget, audited: true},
		{name: "ExactlyAvailableIsAdmitted", tenant: Tenant("t", 110, 4),
			before: []ledger.AdmitRequest{{RunID: "a", TenantID: "t", ReserveUnits: 102}},
			req:    ledger.AdmitRequest{RunID: "b", TenantID: "t", ReserveUnits: 8}},
		{name: "ConcurrencyLimit", tenant: Tenant("t", 1000, 1),
			before: []ledger.AdmitRequest{{RunID: "a", TenantID: "t", ReserveUnits: 10}},
			req:    ledger.AdmitRequest{RunID: "b", TenantID: "t", ReserveUnits: 10}, code: ledger.CodeConcurrencyLimit, audited: true},
		{name: "BudgetBeforeConcurrency", tenant: Tenant("t", 100, 1),
			before: []ledger.AdmitRequest{{RunID: "a", TenantID: "t", ReserveUnits: 60}},
			req:    ledger.AdmitRequest{RunID: "b", TenantID: "t", ReserveUnits: 60}, code: ledger.CodeInsufficientBudget, audited: true},
		{name: "ZeroConcurrencyAdmitsNothing", tenant: Tenant("t", 1000, 0),
			req: ledger.AdmitRequest{RunID: "b", TenantID: "t", ReserveUnits: 1}, code: ledger.CodeConcurrencyLimit, audited: true},
		{name: "UnknownTenant", tenant: Tenant("t", 1000, 1),
			req: ledger.AdmitRequest{RunID: "b", TenantID: "ghost", ReserveUnits: 1}, code: ledger.CodeInvalidAPIKey, audited: true},
		{name: "DuplicateRunID", tenant: Tenant("t", 1000, 4),
			before: []ledger.AdmitRequest{{RunID: "a", TenantID: "t", ReserveUnits: 10}},
			req:    ledger.AdmitRequest{RunID: "a", TenantID: "t", ReserveUnits: 10}, code: ledger.CodeConflict, audited: true},
		{name: "QuotaGuard", tenant: Tenant("t", 1000, 4),
			before: []ledger.AdmitRequest{{RunID: "a", TenantID: "t", ReserveUnits: 60,
				Quota: &ledger.QuotaCheck{Day: "2026-11-29", LimitUnits: 100}}},
			req: ledger.AdmitRequest{RunID: "b", TenantID: "t", ReserveUnits: 41,
				Quota: &ledger.QuotaCheck{Day: "2026-11-29", LimitUnits: 100}}, code: ledger.CodeQuotaGuard, audited: true},
		{name: "QuotaExactlyAtLimit", tenant: Tenant("t", 1000, 4),
			before: []ledger.AdmitRequest{{RunID: "a", TenantID: "t", ReserveUnits: 60,
				Quota: &ledger.QuotaCheck{Day: "2026-11-29", LimitUnits: 100}}},
			req: ledger.AdmitRequest{RunID: "b", TenantID: "t", ReserveUnits: 40,
				Quota: &ledger.QuotaCheck{Day: "2026-11-29", LimitUnits: 100}}},
		{name: "QuotaOtherDayIsSeparate", tenant: Tenant("t", 1000, 4),
			before: []ledger.AdmitRequest{{RunID: "a", TenantID: "t", ReserveUnits: 60,
				Quota: &ledger.QuotaCheck{Day: "2026-11-28", LimitUnits: 100}}},
			req: ledger.AdmitRequest{RunID: "b", TenantID: "t", ReserveUnits: 60,
				Quota: &ledger.QuotaCheck{Day: "2026-11-29", LimitUnits: 100}}},
		{name: "NegativeReserve", tenant: Tenant("t", 1000, 4),
			req: ledger.AdmitRequest{RunID: "b", TenantID: "t", ReserveUnits: -1}, code: ledger.CodeInvalidRequest},
		{name: "ReserveTooLarge", tenant: Tenant("t", 1000, 4),
			req: ledger.AdmitRequest{RunID: "b", TenantID: "t", ReserveUnits: ledger.MaxUnits + 1}, code: ledger.CodeInvalidRequest},
		{name: "EmptyRunID", tenant: Tenant("t", 1000, 4),
			req: ledger.AdmitRequest{TenantID: "t", ReserveUnits: 1}, code: ledger.CodeInvalidRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := open(t)
			MustApply(t, st, tc.tenant)
			for _, r := range tc.before {
				MustAdmit(t, st, r)
			}
			before, err := st.Balance(ctx, "t")
			if err != nil {
				t.Fatal(err)
			}
			rows := tenantAudit(t, st, tc.req.TenantID)
			tc.req.Upstream, tc.req.Model, tc.req.Actor = "demo", "demo-model", gateway
			run, err := st.Admit(ctx, tc.req)
			if tc.code == "" {
				if err != nil {
					t.Fatalf("admit: %v", err)
				}
				if run.HeldUnits != tc.req.ReserveUnits {
					t.Fatalf("run = %+v", run)
				}
				WantVerified(t, st)
				return
			}
			WantCode(t, err, tc.code)
			if tc.code == ledger.CodeConcurrencyLimit || tc.code == ledger.CodeQuotaGuard {
				if ledger.RetryAfter(err) <= 0 {
					t.Fatalf("%s without Retry-After", tc.code)
				}
			}
			WantBalance(t, st, before)
			after := tenantAudit(t, st, tc.req.TenantID)
			if !tc.audited {
				if len(after) != len(rows) {
					t.Fatalf("invalid request wrote %d audit rows", len(after)-len(rows))
				}
				WantVerified(t, st)
				return
			}
			if len(after) != len(rows)+1 {
				t.Fatalf("refusal wrote %d audit rows, want 1", len(after)-len(rows))
			}
			e := after[len(after)-1]
			if e.Kind != ledger.AuditReject || e.Reason != tc.code || e.RunID != tc.req.RunID ||
				e.Units != tc.req.ReserveUnits || e.Actor != gateway || e.AvailableBefore != e.AvailableAfter {
				t.Fatalf("reject audit row = %+v", e)
			}
			if tc.req.TenantID == "t" && e.AvailableAfter != before.AvailableUnits {
				t.Fatalf("reject audit row available %d, want %d", e.AvailableAfter, before.AvailableUnits)
			}
			if tc.code != ledger.CodeConflict {
				_, err := st.Run(ctx, tc.req.RunID)
				WantCode(t, err, ledger.CodeRunNotFound)
			}
			WantVerified(t, st)
		})
	}
}

func testQueuedCountsAsActive(t *testing.T, st ledger.Store) {
	ctx := context.Background()
	MustApply(t, st, Tenant("t", 1000, 2))
	q := MustAdmit(t, st, ledger.AdmitRequest{RunID: "q", TenantID: "t", ReserveUnits: 10, Queued: true})
	if q.Status != ledger.RunQueued {
		t.Fatalf("queued run status %s", q.Status)
	}
	MustAdmit(t, st, ledger.AdmitRequest{RunID: "a", TenantID: "t", ReserveUnits: 10})
	_, err := st.Admit(ctx, ledger.AdmitRequest{RunID: "c", TenantID: "t", ReserveUnits: 10, Upstream: "demo", Model: "m"})
	WantCode(t, err, ledger.CodeConcurrencyLimit)
	WantBalance(t, st, ledger.Balance{TenantID: "t", BudgetUnits: 1000, HeldUnits: 20, AvailableUnits: 980, Active: 2})
	run, err := st.Start(ctx, "q", by)
	if err != nil || run.Status != ledger.RunActive {
		t.Fatalf("start: %+v %v", run, err)
	}
	WantBalance(t, st, ledger.Balance{TenantID: "t", BudgetUnits: 1000, HeldUnits: 20, AvailableUnits: 980, Active: 2})
	if e := lastAudit(t, st, "t"); e.Kind != ledger.AuditStart || e.RunID != "q" {
		t.Fatalf("start audit row = %+v", e)
	}
	// Starting an active run again is a no-op, not a second audit row.
	rows := len(tenantAudit(t, st, "t"))
	if run, err := st.Start(ctx, "q", by); err != nil || run.Status != ledger.RunActive {
		t.Fatalf("second start: %+v %v", run, err)
	}
	if got := len(tenantAudit(t, st, "t")); got != rows {
		t.Fatalf("second start wrote %d audit rows", got-rows)
	}
	// Giving up while queued is proof the provider did no work.
	if _, err := st.Settle(ctx, "a", 3, "usage", by); err != nil {
		t.Fatal(err)
	}
	MustAdmit(t, st, ledger.AdmitRequest{RunID: "q2", TenantID: "t", ReserveUnits: 10, Queued: true})
	if _, err := st.ReleaseHold(ctx, "q2", ledger.RunCancelled, "gave up after 8s in the gate queue", by); err != nil {
		t.Fatal(err)
	}
	if e := lastAudit(t, st, "t"); e.Kind != ledger.AuditCancel || e.Units != 10 {
		t.Fatalf("cancel audit row = %+v", e)
	}
	WantBalance(t, st, ledger.Balance{TenantID: "t", BudgetUnits: 1000, SpentUnits: 3, HeldUnits: 10, AvailableUnits: 987, Active: 1})
	_, err = st.Start(ctx, "missing", by)
	WantCode(t, err, ledger.CodeRunNotFound)
	WantVerified(t, st)
}

func testSettlePartial(t *testing.T, st ledger.Store) {
	ctx := context.Background()
	MustApply(t, st, Tenant("t", 1000, 4))
	MustAdmit(t, st, ledger.AdmitRequest{RunID: "r", TenantID: "t", ReserveUnits: 123})
	run, err := st.Settle(ctx, "r", 100, "usage 40+60, [DONE]", by)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != ledger.RunCompleted || run.Usage != ledger.UsageTrusted || run.SpentUnits != 100 || run.HeldUnits != 0 {
		t.Fatalf("settled run = %+v", run)
	}
	WantBalance(t, st, ledger.Balance{TenantID: "t", BudgetUnits: 1000, SpentUnits: 100, AvailableUnits: 900})
	if e := lastAudit(t, st, "t"); e.Kind != ledger.AuditSettle || e.Units != 100 || e.AvailableBefore != 877 || e.AvailableAfter != 900 {
		t.Fatalf("settle audit row = %+v", e)
	}
	// Seed 000 §15.2: "问题" in (6) and "你好 AI" out (9) settle at 15.
	MustAdmit(t, st, ledger.AdmitRequest{RunID: "zh", TenantID: "t", ReserveUnits: 106})
	if _, err := st.Settle(ctx, "zh", 15, "utf8-bytes-v1: 6 in + 9 out", by); err != nil {
		t.Fatal(err)
	}
	WantBalance(t, st, ledger.Balance{TenantID: "t", BudgetUnits: 1000, SpentUnits: 115, AvailableUnits: 885})
	WantVerified(t, st)
}

func testSettleBounds(t *testing.T, st ledger.Store) {
	ctx := context.Background()
	MustApply(t, st, Tenant("t", 1000, 4))
	MustAdmit(t, st, ledger.AdmitRequest{RunID: "r", TenantID: "t", ReserveUnits: 50})
	want := ledger.Balance{TenantID: "t", BudgetUnits: 1000, HeldUnits: 50, AvailableUnits: 950, Active: 1}
	for _, units := range []ledger.Units{-1, ledger.MaxUnits + 1} {
		_, err := st.Settle(ctx, "r", units, "usage", by)
		WantCode(t, err, ledger.CodeInvalidRequest)
		WantBalance(t, st, want)
	}
	_, err := st.Settle(ctx, "nope", 1, "usage", by)
	WantCode(t, err, ledger.CodeRunNotFound)
	if _, err := st.Settle(ctx, "r", 50, "usage: the whole reserve", by); err != nil {
		t.Fatal(err)
	}
	WantBalance(t, st, ledger.Balance{TenantID: "t", BudgetUnits: 1000, SpentUnits: 50, AvailableUnits: 950})
	WantVerified(t, st)
}

// testSettleOverrun: trusted usage above the reserve charges the tenant the
// reserve (available never goes negative) and counts everything in the
// guarded model's quota day, since the provider consumed it (seed 002: a
// thinking model outrunning its reserve).
func testSettleOverrun(t *testing.T, st ledger.Store) {
	ctx := context.Background()
	MustApply(t, st, Tenant("t", 1000, 4))
	MustAdmit(t, st, ledger.AdmitRequest{RunID: "r", TenantID: "t", Upstream: "ark", Model: "m", ReserveUnits: 50,
		Quota: &ledger.QuotaCheck{Day: "2026-11-29", LimitUnits: 10_000}})
	run, err := st.Settle(ctx, "r", 80, "usage 80", by)
	if err != nil {
		t.Fatal(err)
	}
	if run.SpentUnits != 50 || run.OverrunUnits != 30 || run.HeldUnits != 0 || run.Usage != ledger.UsageTrusted {
		t.Fatalf("settled run = %+v, want spent 50 (the reserve) and overrun 30", run)
	}
	WantBalance(t, st, ledger.Balance{TenantID: "t", BudgetUnits: 1000, SpentUnits: 50, AvailableUnits: 950})
	q, err := st.QuotaUsage(ctx, "ark", "m", "2026-11-29")
	if err != nil || q.UsageUnits != 80 || q.HeldInFlight != 0 {
		t.Fatalf("quota usage = %+v, %v; want all 80 units counted", q, err)
	}
	if got, err := st.Run(ctx, "r"); err != nil || got.OverrunUnits != 30 {
		t.Fatalf("stored run = %+v, %v; want the overrun kept", got, err)
	}
	WantVerified(t, st)
}

func testEndedRun(t *testing.T, st ledger.Store) {
	ctx := context.Background()
	MustApply(t, st, Tenant("t", 1000, 4))
	for _, end := range []struct {
		name string
		fn   func(id ledger.RunID) error
	}{
		{"Settled", func(id ledger.RunID) error { _, err := st.Settle(ctx, id, 5, "usage", by); return err }},
		{"Held", func(id ledger.RunID) error {
			_, err := st.KeepHold(ctx, id, ledger.RunInterrupted, "cut", by)
			return err
		}},
		{"Released", func(id ledger.RunID) error {
			_, err := st.ReleaseHold(ctx, id, ledger.RunFailed, "HTTP 503 before any output", by)
			return err
		}},
	} {
		t.Run(end.name, func(t *testing.T) {
			id := ledger.RunID("r-" + end.name)
			MustAdmit(t, st, ledger.AdmitRequest{RunID: id, TenantID: "t", ReserveUnits: 10})
			if err := end.fn(id); err != nil {
				t.Fatal(err)
			}
			before, _ := st.Balance(ctx, "t")
			run := mustRun(t, st, id)
			rows := len(tenantAudit(t, st, "t"))
			for name, try := range map[string]func() error{
				"settle":  func() error { _, err := st.Settle(ctx, id, 1, "late usage", by); return err },
				"keep":    func() error { _, err := st.KeepHold(ctx, id, ledger.RunCancelled, "late", by); return err },
				"release": func() error { _, err := st.ReleaseHold(ctx, id, ledger.RunCancelled, "late proof", by); return err },
				"start":   func() error { _, err := st.Start(ctx, id, by); return err },
			} {
				if got := ledger.ErrorCode(try()); got != ledger.CodeRunEnded {
					t.Errorf("%s of an ended run: code %q, want %q", name, got, ledger.CodeRunEnded)
				}
			}
			WantBalance(t, st, before)
			if got := mustRun(t, st, id); got != run {
				t.Fatalf("refused transitions changed the run:\n%+v\n%+v", run, got)
			}
			if got := len(tenantAudit(t, st, "t")); got != rows {
				t.Fatalf("refused transitions wrote %d audit rows", got-rows)
			}
		})
	}
	WantVerified(t, st)
}

func testReleaseHold(t *testing.T, st ledger.Store) {
	ctx := context.Background()
	MustApply(t, st, Tenant("t", 100, 4))
	MustAdmit(t, st, ledger.AdmitRequest{RunID: "r", TenantID: "t", ReserveUnits: 40})
	_, err := st.ReleaseHold(ctx, "r", ledger.RunFailed, "", by)
	WantCode(t, err, ledger.CodeInvalidRequest)
	_, err = st.ReleaseHold(ctx, "r", ledger.RunCompleted, "proof", by)
	WantCode(t, err, ledger.CodeInvalidRequest)
	_, err = st.KeepHold(ctx, "r", ledger.RunActive, "not an end", by)
	WantCode(t, err, ledger.CodeInvalidRequest)
	WantBalance(t, st, ledger.Balance{TenantID: "t", BudgetUnits: 100, HeldUnits: 40, AvailableUnits: 60, Active: 1})
	run, err := st.ReleaseHold(ctx, "r", ledger.RunFailed, "HTTP 503 before any output", by)
	if err != nil {
		t.Fatal(err)
	}
	if run.Usage != ledger.UsageReleased || run.SpentUnits != 0 || run.HeldUnits != 0 || run.Evidence == "" {
		t.Fatalf("released run = %+v", run)
	}
	WantBalance(t, st, ledger.Balance{TenantID: "t", BudgetUnits: 100, AvailableUnits: 100})
	if e := lastAudit(t, st, "t"); e.Kind != ledger.AuditRelease || e.Evidence == "" || e.Units != 40 || e.AvailableAfter != 100 {
		t.Fatalf("release audit row = %+v", e)
	}
	// A released run holds nothing to reconcile.
	_, err = st.Reconcile(ctx, "r", 1, "bill", ledger.ActorAdmin)
	WantCode(t, err, ledger.CodeNotHeld)
	WantVerified(t, st)
}

// testNamedThenRecovered: a run's provider id kept while it runs (one
// "named" row, moving nothing; a second is no row) is still on the run a
// crash then ends held, and on the recover row.
func testNamedThenRecovered(t *testing.T, st ledger.Store) {
	ctx := context.Background()
	MustApply(t, st, Tenant("t", 1000, 4))
	MustAdmit(t, st, ledger.AdmitRequest{RunID: "r", TenantID: "t", ReserveUnits: 10})
	for _, id := range []string{"gen-1", "gen-2"} {
		if _, err := st.ApplyRule(ctx, "r", ledger.TenantActor("t"), ledger.NamedRule(id)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.RecoverInterrupted(ctx, ledger.ActorRecovery); err != nil {
		t.Fatal(err)
	}
	run, err := st.Run(ctx, "r")
	if err != nil || run.ProviderID != "gen-1" || run.Usage != ledger.UsageUnknown || run.HeldUnits != 10 {
		t.Fatalf("run %+v, %v: want held with provider id gen-1", run, err)
	}
	var kinds []string
	for _, e := range tenantAudit(t, st, "t") {
		if e.RunID == "r" {
			kinds = append(kinds, string(e.Kind)+":"+e.ProviderID)
			if e.Kind == ledger.AuditNamed && (e.Units != 0 || e.AvailableBefore != e.AvailableAfter) {
				t.Errorf("named row %+v moves something", e)
			}
		}
	}
	if got := strings.Join(kinds, " "); got != "admit: named:gen-1 recover:gen-1" {
		t.Fatalf("run r's rows: %s", got)
	}
	if diffs, err := st.Verify(ctx); err != nil || len(diffs) > 0 {
		t.Fatalf("verify: %v %v", diffs, err)
	}
}

func testRecoverInterrupted(t *testing.T, st ledger.Store) {
	ctx := context.Background()
	MustApply(t, st, Tenant("t", 1000, 4))
	MustAdmit(t, st, ledger.AdmitRequest{RunID: "active", TenantID: "t", ReserveUnits: 10})
	MustAdmit(t, st, ledger.AdmitRequest{RunID: "queued", TenantID: "t", ReserveUnits: 20, Queued: true})
	MustAdmit(t, st, ledger.AdmitRequest{RunID: "done", TenantID: "t", ReserveUnits: 30})
	if _, err := st.Settle(ctx, "done", 7, "usage", by); err != nil {
		t.Fatal(err)
	}
	n, err := st.RecoverInterrupted(ctx, ledger.ActorRecovery)
	if err != nil || n != 2 {
		t.Fatalf("recover = %d, %v; want 2", n, err)
	}
	if run := mustRun(t, st, "active"); run.Status != ledger.RunInterrupted || run.Usage != ledger.UsageUnknown || run.HeldUnits != run.ReserveUnits {
		t.Fatalf("recovered active run = %+v", run)
	}
	// A run still queued was never sent upstream: released with that evidence.
	if run := mustRun(t, st, "queued"); run.Status != ledger.RunFailed || run.Usage != ledger.UsageReleased ||
		run.HeldUnits != 0 || run.SpentUnits != 0 || !strings.Contains(run.Evidence, "never sent upstream") {
		t.Fatalf("recovered queued run = %+v", run)
	}
	WantBalance(t, st, ledger.Balance{TenantID: "t", BudgetUnits: 1000, SpentUnits: 7, HeldUnits: 10, AvailableUnits: 983})
	kinds := map[ledger.AuditKind]int{}
	for _, e := range tenantAudit(t, st, "t") {
		if e.Actor == ledger.ActorRecovery {
			kinds[e.Kind]++
		}
	}
	if kinds[ledger.AuditRecover] != 1 || kinds[ledger.AuditRelease] != 1 {
		t.Fatalf("recovery audit rows = %v, want one recover and one release", kinds)
	}
	// Recovery is idempotent: a second call finds nothing.
	if n, err := st.RecoverInterrupted(ctx, ledger.ActorRecovery); err != nil || n != 0 {
		t.Fatalf("second recover = %d, %v", n, err)
	}
	WantVerified(t, st)
}

func testApplyTenants(t *testing.T, st ledger.Store) {
	ctx := context.Background()
	a := ledger.Tenant{ID: "a", BudgetUnits: 110, MaxConcurrent: 1, KeyHashes: []string{ledger.HashKey("key-a")},
		AllowedModels: []string{"m1"}, PerMinute: 10, PerHour: 120}
	b := ledger.Tenant{ID: "b", BudgetUnits: 50, MaxConcurrent: 2, KeyHashes: []string{ledger.HashKey("key-b")}}
	MustApply(t, st, a, b)
	configRows := func() int {
		n := 0
		for _, tid := range []string{"a", "b"} {
			for _, e := range tenantAudit(t, st, tid) {
				if e.Kind == ledger.AuditConfig {
					n++
				}
			}
		}
		return n
	}
	if got := configRows(); got != 2 {
		t.Fatalf("creating 2 tenants wrote %d config rows", got)
	}
	MustApply(t, st, a, b)
	if got := configRows(); got != 2 {
		t.Fatalf("applying the same config again wrote %d more config rows", got-2)
	}
	ts, err := st.Tenants(ctx)
	if err != nil || len(ts) != 2 {
		t.Fatalf("tenants = %+v, %v", ts, err)
	}
	if !ts[0].MatchesKey("key-a") || ts[0].MatchesKey("key-b") || ts[0].PerMinute != 10 || ts[0].PerHour != 120 ||
		!ts[0].AllowsModel("m1") || ts[0].AllowsModel("m2") {
		t.Fatalf("tenant a = %+v", ts[0])
	}
	for _, tn := range ts {
		for _, h := range tn.KeyHashes {
			if h == "key-a" || h == "key-b" {
				t.Fatal("a plaintext key was stored")
			}
		}
	}
	MustAdmit(t, st, ledger.AdmitRequest{RunID: "r", TenantID: "a", ReserveUnits: 100})
	a.BudgetUnits, a.KeyHashes = 200, append(a.KeyHashes, ledger.HashKey("key-a2"))
	MustApply(t, st, a) // b is left out: kept, but its key revoked
	e := lastAudit(t, st, "a")
	if e.Kind != ledger.AuditConfig || e.Units != 90 || e.AvailableBefore != 10 || e.AvailableAfter != 100 || e.Actor != ledger.Operator("test") {
		t.Fatalf("budget change audit row = %+v", e)
	}
	WantBalance(t, st, ledger.Balance{TenantID: "a", BudgetUnits: 200, HeldUnits: 100, AvailableUnits: 100, Active: 1})
	ts, _ = st.Tenants(ctx)
	if len(ts) != 2 || !ts[0].MatchesKey("key-a2") || ts[1].ID != "b" || ts[1].MatchesKey("key-b") {
		t.Fatalf("tenants after change = %+v", ts)
	}
	// A key shared by two tenants is refused and nothing changes.
	c := ledger.Tenant{ID: "c", BudgetUnits: 1, MaxConcurrent: 1, KeyHashes: []string{ledger.HashKey("key-a")}}
	err = st.ApplyTenants(ctx, []ledger.Tenant{a, c}, ledger.Operator("test"))
	WantCode(t, err, ledger.CodeInvalidRequest)
	if ts, _ := st.Tenants(ctx); len(ts) != 2 {
		t.Fatalf("refused config created a tenant: %+v", ts)
	}
	// A key may move from one tenant to another in one config change.
	moved := ledger.Tenant{ID: "b", BudgetUnits: 50, MaxConcurrent: 2, KeyHashes: []string{ledger.HashKey("key-a2")}}
	a.KeyHashes = []string{ledger.HashKey("key-a")}
	MustApply(t, st, a, moved)
	ts, _ = st.Tenants(ctx)
	if len(ts) != 2 || ts[0].MatchesKey("key-a2") || !ts[1].MatchesKey("key-a2") || !ts[0].MatchesKey("key-a") {
		t.Fatalf("tenants after moving a key = %+v", ts)
	}
	for _, bad := range []ledger.Tenant{
		{ID: "", BudgetUnits: 1},
		{ID: "x", BudgetUnits: -1},
		{ID: "x", BudgetUnits: ledger.MaxUnits + 1},
		{ID: "x", BudgetUnits: 1, MaxConcurrent: -1},
		{ID: "x", BudgetUnits: 1, KeyHashes: []string{"plaintext-key"}},
	} {
		WantCode(t, st.ApplyTenants(ctx, []ledger.Tenant{bad}, ledger.Operator("test")), ledger.CodeInvalidRequest)
	}
	WantVerified(t, st)
}

func testBudgetBelowCommitted(t *testing.T, st ledger.Store) {
	ctx := context.Background()
	MustApply(t, st, Tenant("t", 1000, 10))
	for i := range 9 {
		MustAdmit(t, st, ledger.AdmitRequest{RunID: ledger.RunID(fmt.Sprint("r", i)), TenantID: "t", ReserveUnits: 100})
	}
	err := st.ApplyTenants(ctx, []ledger.Tenant{Tenant("t", 500, 10)}, ledger.Operator("test"))
	WantCode(t, err, ledger.CodeInvalidRequest)
	WantBalance(t, st, ledger.Balance{TenantID: "t", BudgetUnits: 1000, HeldUnits: 900, AvailableUnits: 100, Active: 9})
	MustApply(t, st, Tenant("t", 900, 10)) // down to exactly what is held: allowed, nothing available
	_, err = st.Admit(ctx, ledger.AdmitRequest{RunID: "x", TenantID: "t", ReserveUnits: 1, Upstream: "u", Model: "m"})
	WantCode(t, err, ledger.CodeInsufficientBudget)
	WantBalance(t, st, ledger.Balance{TenantID: "t", BudgetUnits: 900, HeldUnits: 900, AvailableUnits: 0, Active: 9})
	WantVerified(t, st)
}

func testQuota(t *testing.T, st ledger.Store) {
	ctx := context.Background()
	MustApply(t, st, Tenant("t", 100000, 10))
	q := &ledger.QuotaCheck{Day: "2026-11-29", LimitUnits: 5000}
	admit := func(id ledger.RunID, reserve ledger.Units) {
		t.Helper()
		MustAdmit(t, st, ledger.AdmitRequest{RunID: id, TenantID: "t", Upstream: "ark", Model: "deepseek-v4-flash",
			ReserveUnits: reserve, Quota: q})
	}
	admit("s", 1000)
	admit("h", 2000)
	admit("r", 500)
	admit("x", 300)
	want := func(usage, held ledger.Units) {
		t.Helper()
		u, err := st.QuotaUsage(ctx, "ark", "deepseek-v4-flash", "2026-11-29")
		if err != nil {
			t.Fatal(err)
		}
		if u.UsageUnits != usage || u.HeldInFlight != held {
			t.Fatalf("quota usage = %+v, want usage %d held %d", u, usage, held)
		}
	}
	want(0, 3800)
	if _, err := st.Settle(ctx, "s", 700, "usage", by); err != nil {
		t.Fatal(err)
	}
	want(700, 2800)
	if _, err := st.KeepHold(ctx, "h", ledger.RunInterrupted, "cut", by); err != nil {
		t.Fatal(err)
	}
	want(700, 2800)
	if _, err := st.Reconcile(ctx, "h", 1500, "console", ledger.ActorAdmin); err != nil {
		t.Fatal(err)
	}
	want(2200, 800)
	if _, err := st.ReleaseHold(ctx, "r", ledger.RunFailed, "HTTP 429 before output", by); err != nil {
		t.Fatal(err)
	}
	want(2200, 300)
	// Usage 2200 + held 300 + 2501 > 5000.
	_, err := st.Admit(ctx, ledger.AdmitRequest{RunID: "big", TenantID: "t", Upstream: "ark", Model: "deepseek-v4-flash",
		ReserveUnits: 2501, Quota: q})
	WantCode(t, err, ledger.CodeQuotaGuard)
	admit("fits", 2500)
	want(2200, 2800)
	// Other days and unguarded calls do not count.
	if u, _ := st.QuotaUsage(ctx, "ark", "deepseek-v4-flash", "2026-11-30"); u.UsageUnits != 0 || u.HeldInFlight != 0 {
		t.Fatalf("another day = %+v", u)
	}
	MustAdmit(t, st, ledger.AdmitRequest{RunID: "unguarded", TenantID: "t", Upstream: "ark", Model: "deepseek-v4-flash",
		ReserveUnits: 400})
	if _, err := st.Settle(ctx, "unguarded", 100, "usage", by); err != nil {
		t.Fatal(err)
	}
	want(2200, 2800)
	series, err := st.UsageSeries(ctx, "ark", "deepseek-v4-flash", timeZero(), farFuture())
	if err != nil {
		t.Fatal(err)
	}
	var sum ledger.Units
	for _, p := range series {
		if !p.Minute.Equal(p.Minute.Truncate(60e9)) || p.Units <= 0 {
			t.Fatalf("bad usage point %+v", p)
		}
		sum += p.Units
	}
	if sum != 2200 {
		t.Fatalf("usage series sums to %d, want 2200 (%+v)", sum, series)
	}
	WantVerified(t, st)
}

func testSnapshots(t *testing.T, st ledger.Store) {
	ctx := context.Background()
	s1, err := st.SaveSnapshot(ctx, ledger.Snapshot{Upstream: "ark", Model: "m", Day: "2026-11-29",
		BalanceUnits: 1800000, UsageAtSync: 200000, LimitUnits: 1950000, B0Units: 2000000, LagSeconds: 840, Source: "manual"})
	if err != nil {
		t.Fatal(err)
	}
	if s1.ID == 0 || s1.At.IsZero() {
		t.Fatalf("saved snapshot = %+v", s1)
	}
	s2, err := st.SaveSnapshot(ctx, ledger.Snapshot{Upstream: "ark", Model: "m", Day: "2026-11-29",
		At: s1.At.Add(1e9), BalanceUnits: 1700000, Source: "volcengine"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.SaveSnapshot(ctx, ledger.Snapshot{Upstream: "ark", Model: "other", Source: "manual"}); err != nil {
		t.Fatal(err)
	}
	got, err := st.Snapshots(ctx, "ark", "m", timeZero())
	if err != nil || len(got) != 2 || got[0].ID != s1.ID || got[1].ID != s2.ID {
		t.Fatalf("snapshots = %+v, %v", got, err)
	}
	if got[0] != s1 {
		t.Fatalf("snapshot round trip:\n got %+v\nwant %+v", got[0], s1)
	}
	got, _ = st.Snapshots(ctx, "ark", "m", s2.At)
	if len(got) != 1 || got[0].ID != s2.ID {
		t.Fatalf("snapshots since s2 = %+v", got)
	}
	rows, _ := st.Audit(ctx, ledger.AuditFilter{})
	syncs := 0
	for _, e := range rows {
		if e.Kind == ledger.AuditSync {
			syncs++
		}
	}
	if syncs != 3 {
		t.Fatalf("%d sync audit rows, want 3", syncs)
	}
}

func testAuditFilter(t *testing.T, st ledger.Store) {
	ctx := context.Background()
	MustApply(t, st, Tenant("a", 100, 2), Tenant("b", 100, 2))
	MustAdmit(t, st, ledger.AdmitRequest{RunID: "ra", TenantID: "a", ReserveUnits: 1})
	MustAdmit(t, st, ledger.AdmitRequest{RunID: "rb", TenantID: "b", ReserveUnits: 1})
	if err := st.AppendAudit(ctx, ledger.AuditEntry{Kind: ledger.AuditReject, TenantID: "a", Reason: ledger.CodeRateLimited,
		Actor: gateway}); err != nil {
		t.Fatal(err)
	}
	err := st.AppendAudit(ctx, ledger.AuditEntry{})
	WantCode(t, err, ledger.CodeInvalidRequest)
	all, err := st.Audit(ctx, ledger.AuditFilter{})
	if err != nil || len(all) != 5 {
		t.Fatalf("audit = %d rows, %v; want 5", len(all), err)
	}
	for i := 1; i < len(all); i++ {
		if all[i].Seq <= all[i-1].Seq || all[i].At.Before(all[i-1].At) {
			t.Fatalf("audit rows out of order: %+v then %+v", all[i-1], all[i])
		}
	}
	a, _ := st.Audit(ctx, ledger.AuditFilter{TenantID: "a"})
	if len(a) != 3 || a[2].Reason != ledger.CodeRateLimited {
		t.Fatalf("tenant a audit = %+v", a)
	}
	after, _ := st.Audit(ctx, ledger.AuditFilter{AfterSeq: all[2].Seq, Limit: 1})
	if len(after) != 1 || after[0].Seq != all[3].Seq {
		t.Fatalf("after seq = %+v", after)
	}
	// [from, to): the first row is in, the last is out.
	window, err := st.Audit(ctx, ledger.AuditFilter{From: all[0].At, To: all[4].At})
	if err != nil {
		t.Fatal(err)
	}
	var want []int64
	for _, e := range all {
		if !e.At.Before(all[0].At) && e.At.Before(all[4].At) {
			want = append(want, e.Seq)
		}
	}
	var got []int64
	for _, e := range window {
		got = append(got, e.Seq)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("audit in [%s, %s) = seqs %v, want %v", all[0].At, all[4].At, got, want)
	}
	WantVerified(t, st)
}

func testRunsFilter(t *testing.T, st ledger.Store) {
	ctx := context.Background()
	MustApply(t, st, Tenant("a", 1000, 10), Tenant("b", 1000, 10))
	for i := range 5 {
		MustAdmit(t, st, ledger.AdmitRequest{RunID: ledger.RunID(fmt.Sprint("a", i)), TenantID: "a", ReserveUnits: 10})
	}
	MustAdmit(t, st, ledger.AdmitRequest{RunID: "b0", TenantID: "b", ReserveUnits: 10})
	if _, err := st.Settle(ctx, "a0", 1, "usage", by); err != nil {
		t.Fatal(err)
	}
	if _, err := st.KeepHold(ctx, "a1", ledger.RunInterrupted, "cut", by); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ReleaseHold(ctx, "a2", ledger.RunFailed, "HTTP 500 before output", by); err != nil {
		t.Fatal(err)
	}
	runs, err := st.Runs(ctx, ledger.RunFilter{TenantID: "a"})
	if err != nil || len(runs) != 5 {
		t.Fatalf("runs of a = %d, %v", len(runs), err)
	}
	for i, r := range runs {
		if want := ledger.RunID(fmt.Sprint("a", 4-i)); r.ID != want {
			t.Fatalf("runs[%d] = %s, want %s (newest first)", i, r.ID, want)
		}
	}
	holding, _ := st.Runs(ctx, ledger.RunFilter{HoldingOnly: true})
	ids := map[ledger.RunID]bool{}
	for _, r := range holding {
		if !r.Usage.Holding() {
			t.Fatalf("holding filter returned %+v", r)
		}
		ids[r.ID] = true
	}
	if len(holding) != 4 || !ids["a1"] || !ids["a3"] || !ids["a4"] || !ids["b0"] {
		t.Fatalf("holding runs = %v", ids)
	}
	one, _ := st.Runs(ctx, ledger.RunFilter{Limit: 1})
	if len(one) != 1 {
		t.Fatalf("limit 1 gave %d runs", len(one))
	}
	_, err = st.Run(ctx, "nope")
	WantCode(t, err, ledger.CodeRunNotFound)
	_, err = st.Balance(ctx, "nope")
	if err == nil {
		t.Fatal("balance of an unknown tenant succeeded")
	}
}

// by is the actor of the suite's own transitions.
var by = ledger.System("ledgertest")

// gateway is the actor the suite admits and refuses as.
var gateway = ledger.System("gateway")

// testRefusalsAggregate: repeated refusals of one tenant with one code
// within ledger.RefusalInterval share one audit row with their count and
// first/last time; another code, tenant or interval gets its own; money
// rows are never merged: a flood of refusals cannot fill the disk, and
// every change of money keeps its row.
// wantOneEventLastAt: a row of one event reads its last time as its first.
func wantOneEventLastAt(t *testing.T, rows []ledger.AuditEntry) {
	t.Helper()
	for _, e := range rows {
		if e.Count == 1 && !e.LastAt.Equal(e.At) {
			t.Errorf("row %d of one event: at %v, last %v", e.Seq, e.At, e.LastAt)
		}
	}
}

func testRefusalsAggregate(t *testing.T, st ledger.Store) {
	ctx := context.Background()
	MustApply(t, st, Tenant("t", 100, 1), Tenant("u", 100, 1))
	base := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	reject := func(tenant, code string, at time.Duration) {
		t.Helper()
		if err := st.AppendAudit(ctx, ledger.AuditEntry{At: base.Add(at), Kind: ledger.AuditReject, TenantID: tenant,
			Actor: gateway, Reason: code, Evidence: "too many requests"}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 5 {
		reject("t", ledger.CodeRateLimited, time.Duration(i)*time.Second)
	}
	reject("t", ledger.CodeQuotaGuard, 6*time.Second)
	reject("u", ledger.CodeRateLimited, 7*time.Second)
	reject("t", ledger.CodeRateLimited, ledger.RefusalInterval+time.Second) // the next interval
	type row struct {
		tenant, code string
		count        int64
	}
	var got []row
	for _, e := range tenantAudit(t, st, "") {
		if e.Kind == ledger.AuditReject {
			got = append(got, row{e.TenantID, e.Reason, e.Count})
		}
	}
	want := []row{{"t", ledger.CodeRateLimited, 5}, {"t", ledger.CodeQuotaGuard, 1}, {"u", ledger.CodeRateLimited, 1}, {"t", ledger.CodeRateLimited, 1}}
	if !slices.Equal(got, want) {
		t.Fatalf("reject rows = %+v, want %+v", got, want)
	}
	first := tenantAudit(t, st, "t")
	for _, e := range first {
		if e.Kind == ledger.AuditReject && e.Count == 5 && (!e.At.Equal(base) || !e.LastAt.Equal(base.Add(4*time.Second))) {
			t.Errorf("aggregated row: at %v, last %v; want %v and %v", e.At, e.LastAt, base, base.Add(4*time.Second))
		}
	}
	wantOneEventLastAt(t, first)
	// Admit's own refusals aggregate too; admissions and changes of money
	// keep one row each.
	MustAdmit(t, st, ledger.AdmitRequest{RunID: "r1", TenantID: "t", ReserveUnits: 10})
	for i := range 4 {
		_, err := st.Admit(ctx, ledger.AdmitRequest{RunID: ledger.RunID(fmt.Sprintf("x%d", i)), TenantID: "t",
			Upstream: "demo", Model: "demo-model", ReserveUnits: 10, Actor: ledger.TenantActor("t")})
		WantCode(t, err, ledger.CodeConcurrencyLimit)
	}
	if _, err := st.Settle(ctx, "r1", 4, "usage", by); err != nil {
		t.Fatal(err)
	}
	MustAdmit(t, st, ledger.AdmitRequest{RunID: "r2", TenantID: "t", ReserveUnits: 10})
	var conc, admits int64
	rows := 0
	for _, e := range tenantAudit(t, st, "t") {
		switch {
		case e.Kind == ledger.AuditReject && e.Reason == ledger.CodeConcurrencyLimit:
			conc += e.Count
			rows++
		case e.Kind == ledger.AuditAdmit:
			admits++
			if e.Count != 1 {
				t.Errorf("admit row with count %d", e.Count)
			}
		}
	}
	if conc != 4 || rows > 2 || admits != 2 { // 2 rows only if the clock crossed an interval
		t.Fatalf("concurrency refusals counted %d in %d rows, %d admit rows; want 4 in 1, 2", conc, rows, admits)
	}
	WantVerified(t, st)
}

// testRefusalChange: the commit hook hears of a refusal, a new reject row
// and then one more counted on it, as a change that names no run (a refused
// run never existed) but the model and the quota day that refused: one
// shape from every store (ledger.RejectChange).
func testRefusalChange(t *testing.T, st ledger.Store) {
	ctx := context.Background()
	rejects := make(chan ledger.Change, 16)
	st.OnCommit(func(_ context.Context, changes []ledger.Change) {
		for _, c := range changes {
			if c.Kind == ledger.AuditReject {
				rejects <- c
			}
		}
	})
	MustApply(t, st, Tenant("a", 10, 1))
	var first int64
	for i := range 2 {
		req := ledger.AdmitRequest{RunID: ledger.RunID(fmt.Sprintf("r-refused-%d", i)), TenantID: "a",
			Upstream: "ark", Model: "m", ReserveUnits: 100, Quota: &ledger.QuotaCheck{Day: "2026-12-01", LimitUnits: 1000}}
		_, err := st.Admit(ctx, req)
		WantCode(t, err, ledger.CodeInsufficientBudget)
		var c ledger.Change
		select {
		case c = <-rejects:
		case <-time.After(30 * time.Second):
			t.Fatalf("refusal %d: the commit hook heard of no reject row", i)
		}
		want := ledger.Change{Seq: c.Seq, Kind: ledger.AuditReject, Actor: ledger.TenantActor("a"), TenantID: "a",
			Upstream: "ark", Model: "m", Day: "2026-12-01"}
		if c != want || c.Seq <= 0 {
			t.Errorf("refusal %d: change = %+v, want %+v with a seq", i, c, want)
		}
		if i == 0 {
			first = c.Seq
		} else if c.Seq != first {
			t.Errorf("the second refusal's change has seq %d, want the first row's %d (counted on it)", c.Seq, first)
		}
	}
}
