package ledgertest

import (
	"context"
	"fmt"
	"testing"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/price"
)

// TestPrice is 2.00 input, 0.50 cached input, 2.50 cache write and 8.00
// output per 1M tokens: a token of each costs 2, 0.5, 2.5 and 8 micros.
var TestPrice = func() *price.Price {
	p := price.Quote{Input: 2_000_000, CachedInput: 500_000, CacheWrite: 2_500_000, Output: 8_000_000}.Price()
	return &p
}()

// MoneyTenant is a tenant that budgets only in money (micros).
func MoneyTenant(id string, budget price.Micros, maxConcurrent int) ledger.Tenant {
	return ledger.Tenant{ID: id, BudgetUnits: ledger.NoUnitsLimit, BudgetMicros: budget, HasMoneyBudget: true,
		MaxConcurrent: maxConcurrent}
}

// priced is a request for input counted tokens and an output cap, reserved
// at TestPrice.
func priced(tb testing.TB, id ledger.RunID, tenant string, input, output ledger.Units) ledger.AdmitRequest {
	tb.Helper()
	reserve, err := TestPrice.ReserveCost(int64(input), int64(output))
	if err != nil {
		tb.Fatal(err)
	}
	return ledger.AdmitRequest{RunID: id, TenantID: tenant, Upstream: "demo", Model: "demo-model",
		ReserveUnits: input + output, InputUnits: input, ReserveMicros: reserve, Prices: TestPrice}
}

// RunMoney is the money part of the contract: a money budget checked at
// admission, the cost settled from trusted usage (capped at the reserve),
// released, reconciled with and without a bill, verified.
func RunMoney(t *testing.T, open Opener) {
	t.Run("Admission", func(t *testing.T) { testMoneyAdmission(t, open(t)) })
	t.Run("Settle", func(t *testing.T) { testMoneySettle(t, open(t)) })
	t.Run("Reconcile", func(t *testing.T) { testMoneyReconcile(t, open(t)) })
	t.Run("ApplyTenants", func(t *testing.T) { testMoneyTenants(t, open(t)) })
	t.Run("Race", func(t *testing.T) { testMoneyRace(t, open(t)) })
}

func testMoneyAdmission(t *testing.T, st ledger.Store) {
	ctx := context.Background()
	// 100 input + 50 output reserve 200 + 400 = 600 micros; 1,500 fit two.
	MustApply(t, st, MoneyTenant("m", 1500, 10), Tenant("u", 1000, 10))
	a := MustAdmit(t, st, priced(t, "m-1", "m", 100, 50))
	if a.ReserveMicros != 600 || a.Prices == nil || *a.Prices != *TestPrice || a.InputUnits != 100 {
		t.Fatalf("admitted run %+v", a)
	}
	MustAdmit(t, st, priced(t, "m-2", "m", 100, 50))
	_, err := st.Admit(ctx, priced(t, "m-3", "m", 100, 50))
	WantCode(t, err, ledger.CodeInsufficientBudget)
	unpriced := priced(t, "m-4", "m", 1, 1)
	unpriced.Prices, unpriced.ReserveMicros = nil, 0
	_, err = st.Admit(ctx, unpriced)
	WantCode(t, err, ledger.CodeModelUnpriced)
	if e := lastAudit(t, st, "m"); e.Kind != ledger.AuditReject || e.Reason != ledger.CodeModelUnpriced {
		t.Fatalf("last audit row %+v, want the model_unpriced refusal", e)
	}
	WantBalance(t, st, ledger.Balance{TenantID: "m", BudgetUnits: ledger.NoUnitsLimit, HeldUnits: 300,
		AvailableUnits: ledger.NoUnitsLimit - 300, Active: 2,
		HasMoneyBudget: true, BudgetMicros: 1500, HeldMicros: 1200, AvailableMicros: 300})
	// A units-only tenant: an unpriced model is fine, a priced one is held
	// and charged in money beside its units, its money never checked.
	unpriced.RunID, unpriced.TenantID = "u-1", "u"
	MustAdmit(t, st, unpriced)
	MustAdmit(t, st, priced(t, "u-2", "u", 100, 50))
	WantBalance(t, st, ledger.Balance{TenantID: "u", BudgetUnits: 1000, HeldUnits: 152, AvailableUnits: 848, Active: 2,
		HeldMicros: 600})
	WantVerified(t, st)
}

func testMoneySettle(t *testing.T, st ledger.Store) {
	ctx := context.Background()
	MustApply(t, st, MoneyTenant("m", 10_000, 10))
	for i := range 3 {
		MustAdmit(t, st, priced(t, ledger.RunID(fmt.Sprint("s-", i)), "m", 100, 50))
	}
	// 100 prompt tokens, 30 of them cache reads and 20 cache writes, 40
	// output: 50×2 + 30×0.5 + 20×2.5 + 40×8 = 485 micros.
	u := &ledger.Usage{PromptTokens: 100, CachedTokens: 30, CacheCreationTokens: 20, CompletionTokens: 40}
	run, err := st.SettleUsage(ctx, "s-0", ledger.Settlement{Units: 140, CachedTokens: 30, Usage: u, Evidence: "usage"}, by)
	if err != nil || run.CostMicros != 485 || run.OverrunMicros != 0 {
		t.Fatalf("settle: %+v, %v; want cost 485", run, err)
	}
	// 100 input and 400 output cost 3,400, above the reserve's 600.
	big := &ledger.Usage{PromptTokens: 100, CompletionTokens: 400}
	run, err = st.SettleUsage(ctx, "s-1", ledger.Settlement{Units: 500, Usage: big, Evidence: "usage"}, by)
	if err != nil || run.CostMicros != 600 || run.OverrunMicros != 2800 {
		t.Fatalf("settle above the reserve: %+v, %v; want cost 600, overrun 2800", run, err)
	}
	if got := mustRun(t, st, "s-1"); got.CostMicros != 600 || got.OverrunMicros != 2800 || got.Prices == nil || *got.Prices != *TestPrice {
		t.Fatalf("settled run as read back %+v", got)
	}
	if e := lastAudit(t, st, "m"); e.Kind != ledger.AuditSettle || e.Micros != 600 {
		t.Fatalf("settle audit row %+v, want 600 micros", e)
	}
	if _, err := st.ReleaseHold(ctx, "s-2", ledger.RunFailed, "HTTP 503 before output", by); err != nil {
		t.Fatal(err)
	}
	WantBalance(t, st, ledger.Balance{TenantID: "m", BudgetUnits: ledger.NoUnitsLimit, SpentUnits: 290,
		AvailableUnits: ledger.NoUnitsLimit - 290,
		HasMoneyBudget: true, BudgetMicros: 10_000, SpentMicros: 1085, AvailableMicros: 10_000 - 1085})
	WantVerified(t, st)
}

func testMoneyReconcile(t *testing.T, st ledger.Store) {
	ctx := context.Background()
	MustApply(t, st, MoneyTenant("m", 10_000, 10))
	for _, id := range []ledger.RunID{"r-bill", "r-units", "r-over"} {
		MustAdmit(t, st, priced(t, id, "m", 100, 50))
		if _, err := st.KeepHold(ctx, id, ledger.RunInterrupted, "cut", by); err != nil {
			t.Fatal(err)
		}
	}
	if got := mustRun(t, st, "r-bill"); got.Prices == nil || *got.Prices != *TestPrice || got.HeldMicros() != 600 {
		t.Fatalf("held run %+v keeps its prices and its reserve", got)
	}
	_, err := st.ReconcileCost(ctx, "r-over", ledger.Reconciliation{Units: 10, CostMicros: 601, HasCost: true, Evidence: "bill"}, ledger.ActorAdmin)
	WantCode(t, err, ledger.CodeInvalidRequest)
	run, err := st.ReconcileCost(ctx, "r-bill", ledger.Reconciliation{Units: 10, CostMicros: 599, HasCost: true, Evidence: "bill"}, ledger.ActorAdmin)
	if err != nil || run.CostMicros != 599 {
		t.Fatalf("reconcile with a bill: %+v, %v", run, err)
	}
	// 110 units without a bill: the run's 100 input first, 10 output: 280.
	run, err = st.Reconcile(ctx, "r-units", 110, "console", ledger.ActorAdmin)
	if err != nil || run.CostMicros != 280 {
		t.Fatalf("reconcile without a bill: %+v, %v; want cost 280", run, err)
	}
	if e := lastAudit(t, st, "m"); e.Kind != ledger.AuditReconcile || e.Micros != 280 {
		t.Fatalf("reconcile audit row %+v", e)
	}
	WantBalance(t, st, ledger.Balance{TenantID: "m", BudgetUnits: ledger.NoUnitsLimit, SpentUnits: 120, HeldUnits: 150,
		AvailableUnits: ledger.NoUnitsLimit - 270,
		HasMoneyBudget: true, BudgetMicros: 10_000, SpentMicros: 879, HeldMicros: 600, AvailableMicros: 10_000 - 1479})
	WantVerified(t, st)
}

func testMoneyTenants(t *testing.T, st ledger.Store) {
	ctx := context.Background()
	MustApply(t, st, MoneyTenant("m", 1000, 10))
	MustAdmit(t, st, priced(t, "t-1", "m", 100, 50))
	err := st.ApplyTenants(ctx, []ledger.Tenant{MoneyTenant("m", 599, 10)}, ledger.Operator("test"))
	WantCode(t, err, ledger.CodeInvalidRequest)
	MustApply(t, st, MoneyTenant("m", 600, 10))
	if e := lastAudit(t, st, "m"); e.Kind != ledger.AuditConfig {
		t.Fatalf("a money budget change is audited: %+v", e)
	}
	ts, err := st.Tenants(ctx)
	if err != nil || len(ts) != 1 || !ts[0].HasMoneyBudget || ts[0].BudgetMicros != 600 {
		t.Fatalf("tenants %+v, %v", ts, err)
	}
	// Dropping the money budget keeps what was spent and held in money.
	MustApply(t, st, Tenant("m", 1000, 10))
	WantBalance(t, st, ledger.Balance{TenantID: "m", BudgetUnits: 1000, HeldUnits: 150, AvailableUnits: 850, Active: 1,
		HeldMicros: 600})
	WantVerified(t, st)
}

// testMoneyRace: 200 callers at once against a money budget that admits
// exactly 7 by reserve cost (7 × 600 ≤ 4,799 < 8 × 600): 7 admitted, the
// rest refused, never a negative balance.
func testMoneyRace(t *testing.T, st ledger.Store) {
	const n, reserve = 7, 600
	MustApply(t, st, MoneyTenant("t", n*reserve+reserve-1, 1000))
	stop := observe(t, st, map[string]int{"t": 1000})
	admitted, codes := race(t, 200, func(i int) error {
		_, err := st.Admit(context.Background(), priced(t, ledger.RunID(fmt.Sprint("race-", i)), "t", 100, 50))
		return err
	})
	stop()
	if admitted != n || codes[ledger.CodeInsufficientBudget] != 200-n {
		t.Fatalf("admitted %d, refusals %v; want %d and %d insufficient_budget", admitted, codes, n, 200-n)
	}
	WantBalance(t, st, ledger.Balance{TenantID: "t", BudgetUnits: ledger.NoUnitsLimit, HeldUnits: n * 150,
		AvailableUnits: ledger.NoUnitsLimit - n*150, Active: n,
		HasMoneyBudget: true, BudgetMicros: n*reserve + reserve - 1, HeldMicros: n * reserve, AvailableMicros: reserve - 1})
	WantVerified(t, st)
}
