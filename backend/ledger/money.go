package ledger

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/quotagate/quotagate/backend/price"
)

// Money beside units: tokens stay the ledger's unit of work, and a run
// whose model has a price (Run.Prices) also costs money, in integer micros
// of the gateway's currency (price.Micros). A tenant may have a units
// budget, a money budget, or both; admission checks each that it has in
// the same atomic step, and every figure of money moves exactly as its
// units counterpart: reserved at admission, charged on trusted usage at
// most the reserve, released on proof of no work, reconciled with evidence.

// NoUnitsLimit is the units budget of a tenant that budgets only in money:
// the largest amount the ledger keeps, so its units never fall short and
// its balance arithmetic stays the same as any tenant's.
const NoUnitsLimit = MaxUnits

// CodeModelUnpriced (400) refuses a call to a model without a price by a
// tenant with a money budget: its cost could not be reserved or charged.
const CodeModelUnpriced = "model_unpriced"

// HeldMicros is the money the run holds: its reserve while its usage is
// pending or unknown, else nothing (as HeldUnits).
func (r Run) HeldMicros() price.Micros {
	if r.Usage.Holding() {
		return r.ReserveMicros
	}
	return 0
}

// AvailableMicros is budget − spent − held in money; meaningful only when
// the position HasMoneyBudget.
func (p Position) AvailableMicros() price.Micros {
	return p.BudgetMicros - p.SpentMicros - p.HeldMicros
}

// moneyRefusal says why the tenant at p cannot take req's money — its
// reserve's cost is above what the money budget has left — or nil. A
// tenant without a money budget is never refused here.
func moneyRefusal(p Position, req AdmitRequest) error {
	if !p.HasMoneyBudget {
		return nil
	}
	if avail := p.AvailableMicros(); avail < req.ReserveMicros {
		return Errorf(CodeInsufficientBudget,
			"this call needs %s of money but only %s of the money budget of %s are available (%s spent, %s held)",
			req.ReserveMicros, avail, p.BudgetMicros, p.SpentMicros, p.HeldMicros)
	}
	return nil
}

// ErrModelUnpriced refuses req: its tenant has a money budget and its
// model has no price.
func ErrModelUnpriced(req AdmitRequest) error {
	return Errorf(CodeModelUnpriced,
		"model %s on %s has no price, and this tenant's budget is in money: give the model a price (upstreams[].prices) or call a priced model",
		req.Model, req.Upstream)
}

// CheckMicros reports whether m is a valid amount of money for a budget,
// a reserve or a cost.
func CheckMicros(what string, m price.Micros) error {
	if m < 0 {
		return Errorf(CodeInvalidRequest, "%s must not be negative (got %s)", what, m)
	}
	return nil
}

// runCost is the cost of the run's tokens at its prices, charged at most
// its reserve: the rest is the run's money overrun, as with units. A run
// without prices costs nothing, and its tokens are not even split.
func runCost(run Run, tokens func() (price.Tokens, error)) (charged, overrun price.Micros, err error) {
	if run.Prices == nil {
		return 0, 0, nil
	}
	t, err := tokens()
	if err != nil {
		return 0, 0, err
	}
	cost, err := run.Prices.Cost(t)
	if err != nil {
		return 0, 0, Errorf(CodeInvalidRequest, "run %s: %v", run.ID, err)
	}
	charged = min(cost, run.ReserveMicros)
	return charged, cost - charged, nil
}

// settledTokens is what a settlement of run is priced as: its usage, every
// token at its own price, or without one its units as the run's input
// first, the rest as output.
func settledTokens(run Run, s Settlement) (price.Tokens, error) {
	if s.Usage == nil {
		return unitTokens(s.Units, run.InputUnits)
	}
	return usageTokens(*s.Usage)
}

// usageTokens splits a trusted usage into what is priced differently: the
// gateway keeps every door's usage prompt-inclusive (PromptTokens includes
// CachedTokens and CacheCreationTokens; CompletionTokens the reasoning).
func usageTokens(u Usage) (price.Tokens, error) {
	t, err := price.PromptTokens(u.PromptTokens, u.CachedTokens, u.CacheCreationTokens, u.CompletionTokens)
	if err != nil {
		return price.Tokens{}, Errorf(CodeInvalidRequest, "%v", err)
	}
	return t, nil
}

func unitTokens(units, input Units) (price.Tokens, error) {
	t, err := price.ReconcileTokens(int64(units), int64(input))
	if err != nil {
		return price.Tokens{}, Errorf(CodeInvalidRequest, "%v", err)
	}
	return t, nil
}

// reconciledCost is what reconciling run by c charges: the provider's bill
// when given (never above the reserve's cost), else c's units priced as
// the run's input first, the rest as output, at most the reserve's cost.
func reconciledCost(run Run, c Reconciliation) (price.Micros, error) {
	if c.HasCost {
		if c.CostMicros > run.ReserveMicros {
			return 0, Errorf(CodeInvalidRequest, "reconciled cost %s exceeds the reserve's %s of run %s",
				c.CostMicros, run.ReserveMicros, run.ID)
		}
		return c.CostMicros, nil
	}
	cost, _, err := runCost(run, func() (price.Tokens, error) { return unitTokens(c.Units, run.InputUnits) })
	return cost, err
}

// MarshalJSON writes a run with its cost also as a decimal string ("cost")
// and its prices, when it has any, as decimal strings per 1M tokens.
func (r Run) MarshalJSON() ([]byte, error) {
	type run Run // without this method
	return json.Marshal(struct {
		run
		Cost   string     `json:"cost"`
		Prices *priceJSON `json:"prices,omitempty"`
	}{run(r), r.CostMicros.String(), pricesJSON(r.Prices)})
}

// priceJSON is a run's prices per 1M tokens as the API shows them.
type priceJSON struct {
	Input       string `json:"input"`
	CachedInput string `json:"cached_input"`
	CacheWrite  string `json:"cache_write"`
	Output      string `json:"output"`
}

func pricesJSON(p *price.Price) *priceJSON {
	if p == nil {
		return nil
	}
	return &priceJSON{Input: p.Input.String(), CachedInput: p.CachedInput.String(),
		CacheWrite: p.CacheWrite.String(), Output: p.Output.String()}
}

// MarshalJSON writes a balance with budget_micros and available_micros
// only when the tenant has a money budget (spent and held money are
// always there: a priced run costs money whatever the budget is in).
func (b Balance) MarshalJSON() ([]byte, error) {
	type balance Balance // without this method
	type money struct {
		balance
		BudgetMicros    price.Micros `json:"budget_micros"`
		AvailableMicros price.Micros `json:"available_micros"`
	}
	if !b.HasMoneyBudget {
		return json.Marshal(balance(b))
	}
	return json.Marshal(money{balance(b), b.BudgetMicros, b.AvailableMicros})
}

// MarshalJSON writes a tenant with budget_micros only when it has a money
// budget, and its calendar (budget_period, timezone, week_starts) only
// when its budget renews.
func (t Tenant) MarshalJSON() ([]byte, error) {
	type tenant Tenant // without this method
	var money *price.Micros
	if t.HasMoneyBudget {
		money = &t.BudgetMicros
	}
	var cal calendarJSON
	if Renews(t.Calendar) {
		cal = calendarJSON{CalendarKind(t.Calendar), zoneWord(t.Calendar), weekWord(t.Calendar)}
	}
	return json.Marshal(struct {
		tenant
		BudgetMicros *price.Micros `json:"budget_micros,omitempty"`
		calendarJSON
	}{tenant(t), money, cal})
}

// calendarJSON is a renewing tenant's calendar in the config's words.
type calendarJSON struct {
	BudgetPeriod string `json:"budget_period,omitempty"`
	Timezone     string `json:"timezone,omitempty"`
	WeekStarts   string `json:"week_starts,omitempty"`
}

// PricesText is a run's prices as a store keeps them in one column: the
// four prices per 1M tokens (price.PerMillion, exact), space-separated in
// the order input, cached input, cache write, output; "" for none.
func PricesText(p *price.Price) string {
	if p == nil {
		return ""
	}
	return p.Input.String() + " " + p.CachedInput.String() + " " + p.CacheWrite.String() + " " + p.Output.String()
}

// ParsePrices reads PricesText's form back; "" is nil.
func ParsePrices(s string) (*price.Price, error) {
	if s == "" {
		return nil, nil
	}
	f := strings.Fields(s)
	if len(f) != 4 {
		return nil, fmt.Errorf("prices %q: want 4 prices per 1M tokens", s)
	}
	var p price.Price
	for i, into := range []*price.PerMillion{&p.Input, &p.CachedInput, &p.CacheWrite, &p.Output} {
		v, err := price.ParsePerMillion(f[i])
		if err != nil {
			return nil, fmt.Errorf("prices %q: %w", s, err)
		}
		*into = v
	}
	return &p, nil
}

// TenantMoney checks a tenant's money figures b (as its balance row holds
// them) against the sums over its runs: costs charged and reserves held.
func (v *Verification) TenantMoney(b Balance, runsSpent, runsHeld price.Micros) {
	if b.SpentMicros != runsSpent {
		v.Addf("tenant %s: spent %s of money but its runs cost %s", b.TenantID, b.SpentMicros, runsSpent)
	}
	if b.HeldMicros != runsHeld {
		v.Addf("tenant %s: holds %s of money but its runs hold %s", b.TenantID, b.HeldMicros, runsHeld)
	}
}

// RunMoneyRows reports a run whose admit rows (what: "reserve") or settle
// and reconcile rows (what: "cost") carry other money than the run.
func (v *Verification) RunMoneyRows(run, what string, want, rows price.Micros) {
	v.Addf("run %s: %s %s of money but its audit rows carry %s", run, what, want, rows)
}
