package ledger_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/price"
)

// testPrice is 2.00 input, 0.50 cached, 2.50 cache write, 8.00 output per
// 1M tokens: a token of each costs 2, 0.5, 2.5 and 8 micros.
func testPrice(t *testing.T) *price.Price {
	t.Helper()
	q, err := price.QuoteText{Input: "2.00", CachedInput: "0.50", CacheWrite: "2.50", Output: "8.00"}.Quote()
	if err != nil {
		t.Fatal(err)
	}
	p := q.Price()
	return &p
}

// pricedRun reserved 100 input and 50 output tokens: 200 + 400 micros.
func pricedRun(t *testing.T, usage ledger.UsageStatus) ledger.Run {
	r := openRun(ledger.RunActive)
	r.ReserveUnits, r.HeldUnits, r.InputUnits = 150, 150, 100
	r.Prices, r.ReserveMicros, r.Usage = testPrice(t), 600, usage
	if usage == ledger.UsageUnknown {
		r.Status = ledger.RunInterrupted
	}
	return r
}

func TestAdmitRefusalMoney(t *testing.T) {
	p := ledger.Position{BudgetUnits: 1000, MaxConcurrent: 5,
		HasMoneyBudget: true, BudgetMicros: 1000, SpentMicros: 300, HeldMicros: 100}
	priced := ledger.AdmitRequest{TenantID: "t", ReserveUnits: 10, ReserveMicros: 600, Prices: testPrice(t)}
	for _, tc := range []struct {
		name string
		p    ledger.Position
		req  ledger.AdmitRequest
		code string
		says string
	}{
		{name: "fits exactly", p: p, req: priced},
		{name: "money short by a micro", p: p, req: func() ledger.AdmitRequest { r := priced; r.ReserveMicros = 601; return r }(),
			code: ledger.CodeInsufficientBudget, says: "needs 0.000601 of money but only 0.0006"},
		{name: "units short first", p: func() ledger.Position { q := p; q.BudgetUnits = 5; return q }(), req: priced,
			code: ledger.CodeInsufficientBudget, says: "needs 10 units"},
		{name: "unpriced model, money budget", p: p, req: func() ledger.AdmitRequest { r := priced; r.Prices = nil; return r }(),
			code: ledger.CodeModelUnpriced},
		{name: "unpriced model, units only", p: ledger.Position{BudgetUnits: 1000, MaxConcurrent: 5},
			req: ledger.AdmitRequest{TenantID: "t", ReserveUnits: 10}},
		{name: "priced model, units only: money is not checked", p: ledger.Position{BudgetUnits: 1000, MaxConcurrent: 5},
			req: func() ledger.AdmitRequest { r := priced; r.ReserveMicros = 1 << 40; return r }()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := ledger.AdmitRefusal(tc.p, true, tc.req)
			if ledger.ErrorCode(err) != tc.code || !strings.Contains(ledger.ErrorMessage(err), tc.says) {
				t.Fatalf("AdmitRefusal = %v, want %q saying %q", err, tc.code, tc.says)
			}
		})
	}
}

// TestMoneyRules: what each rule charges and moves in money.
func TestMoneyRules(t *testing.T) {
	// 100 prompt tokens of which 30 cached and 20 written to the cache, 40
	// output: 50×2 + 30×0.5 + 20×2.5 + 40×8 = 100 + 15 + 50 + 320 = 485.
	usage := &ledger.Usage{PromptTokens: 100, CachedTokens: 30, CacheCreationTokens: 20, CompletionTokens: 40}
	big := &ledger.Usage{PromptTokens: 100, CompletionTokens: 400} // 200 + 3200 > 600
	odd := &ledger.Usage{PromptTokens: 1, CachedTokens: 1}         // 0.5 micros: rounded up once
	for _, tc := range []struct {
		name              string
		rule              ledger.Rule
		run               ledger.Run
		cost, over, moved price.Micros
		moves             ledger.Moves
		code              string
	}{
		{name: "settle prices each token once", rule: ledger.SettleUsageRule(ledger.Settlement{Units: 140, Usage: usage, Evidence: "u"}),
			run: pricedRun(t, ledger.UsagePending), cost: 485, moved: 485,
			moves: ledger.Moves{Spent: 140, Held: -150, Used: 140, Active: -1, SpentMicros: 485, HeldMicros: -600}},
		{name: "settle above the reserve charges the reserve", rule: ledger.SettleUsageRule(ledger.Settlement{Units: 500, Usage: big, Evidence: "u"}),
			run: pricedRun(t, ledger.UsagePending), cost: 600, over: 2800, moved: 600,
			moves: ledger.Moves{Spent: 150, Held: -150, Used: 500, Active: -1, SpentMicros: 600, HeldMicros: -600}},
		{name: "settle rounds up once", rule: ledger.SettleUsageRule(ledger.Settlement{Units: 1, Usage: odd, Evidence: "u"}),
			run: pricedRun(t, ledger.UsagePending), cost: 1, moved: 1,
			moves: ledger.Moves{Spent: 1, Held: -150, Used: 1, Active: -1, SpentMicros: 1, HeldMicros: -600}},
		{name: "settle without usage prices units as input first", rule: ledger.SettleRule(120, "u"),
			run: pricedRun(t, ledger.UsagePending), cost: 100*2 + 20*8, moved: 360,
			moves: ledger.Moves{Spent: 120, Held: -150, Used: 120, Active: -1, SpentMicros: 360, HeldMicros: -600}},
		{name: "settle of an unpriced run costs nothing", rule: ledger.SettleUsageRule(ledger.Settlement{Units: 15, Usage: usage, Evidence: "u"}),
			run: openRun(ledger.RunActive), moves: ledger.Moves{Spent: 15, Held: -102, Used: 15, Active: -1}},
		{name: "release frees the reserve", rule: ledger.ReleaseHoldRule(ledger.RunFailed, "503"),
			run: pricedRun(t, ledger.UsagePending), moved: 600,
			moves: ledger.Moves{Held: -150, Active: -1, HeldMicros: -600}},
		{name: "keep hold keeps the reserve", rule: ledger.KeepHoldRule(ledger.RunInterrupted, "cut"),
			run: pricedRun(t, ledger.UsagePending), moved: 600, moves: ledger.Moves{Active: -1}},
		{name: "reconcile with the bill", rule: ledger.ReconcileCostRule(ledger.Reconciliation{Units: 10, CostMicros: 599, HasCost: true, Evidence: "bill"}),
			run: pricedRun(t, ledger.UsageUnknown), cost: 599, moved: 599,
			moves: ledger.Moves{Spent: 10, Held: -150, Used: 10, SpentMicros: 599, HeldMicros: -600}},
		{name: "reconcile without a bill prices units", rule: ledger.ReconcileRule(110, "console"),
			run: pricedRun(t, ledger.UsageUnknown), cost: 100*2 + 10*8, moved: 280,
			moves: ledger.Moves{Spent: 110, Held: -150, Used: 110, SpentMicros: 280, HeldMicros: -600}},
		{name: "reconcile above the reserve's cost is refused", rule: ledger.ReconcileCostRule(ledger.Reconciliation{Units: 10, CostMicros: 601, HasCost: true, Evidence: "bill"}),
			run: pricedRun(t, ledger.UsageUnknown), code: ledger.CodeInvalidRequest},
		{name: "usage that does not add up is refused", rule: ledger.SettleUsageRule(ledger.Settlement{Units: 1, Usage: &ledger.Usage{PromptTokens: 1, CachedTokens: 2}, Evidence: "u"}),
			run: pricedRun(t, ledger.UsagePending), code: ledger.CodeInvalidRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := tc.rule.Decide(tc.run)
			if ledger.ErrorCode(err) != tc.code {
				t.Fatalf("Decide: %v, want code %q", err, tc.code)
			}
			if err != nil {
				return
			}
			if tr.After.CostMicros != tc.cost || tr.After.OverrunMicros != tc.over || tr.Micros != tc.moved {
				t.Errorf("cost %s overrun %s audit %s, want %s, %s, %s", tr.After.CostMicros, tr.After.OverrunMicros, tr.Micros, tc.cost, tc.over, tc.moved)
			}
			if m := tr.Moves(tc.run); m != tc.moves {
				t.Errorf("moves %+v, want %+v", m, tc.moves)
			}
		})
	}
}

func TestMoneyJSON(t *testing.T) {
	r := pricedRun(t, ledger.UsageTrusted)
	r.CostMicros = 1_234_500
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"reserve_micros":600`, `"cost_micros":1234500`, `"cost":"1.2345"`,
		`"prices":{"input":"2.00","cached_input":"0.50","cache_write":"2.50","output":"8.00"}`, `"reserve_units":150`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("run JSON %s lacks %s", b, want)
		}
	}
	bal := ledger.Balance{TenantID: "t", SpentMicros: 5}
	b, _ = json.Marshal(bal)
	if strings.Contains(string(b), "budget_micros") || !strings.Contains(string(b), `"spent_micros":5`) {
		t.Errorf("units-only balance JSON %s", b)
	}
	bal.HasMoneyBudget, bal.BudgetMicros, bal.AvailableMicros = true, 0, 0
	b, _ = json.Marshal(bal)
	if !strings.Contains(string(b), `"budget_micros":0`) || !strings.Contains(string(b), `"available_micros":0`) {
		t.Errorf("money balance JSON %s", b)
	}
}
