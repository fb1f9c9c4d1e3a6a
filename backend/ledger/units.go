package ledger

import (
	"fmt"
	"time"

	"github.com/quotagate/quotagate/backend/price"
)

// Units is the integer currency of a budget: bytes under utf8-bytes-v1,
// tokens under tiktoken. Never a float.
type Units int64

// MaxUnits bounds every configured amount so that it stays exact as a
// JavaScript number in the dashboard (2^53 − 1).
const MaxUnits Units = 1<<53 - 1

// CheckUnits reports whether u is a valid amount for a budget or a reserve.
func CheckUnits(what string, u Units) error {
	if u < 0 {
		return Errorf(CodeInvalidRequest, "%s must not be negative (got %d)", what, u).Because(ReasonUnitsNegative, map[string]any{"got": u})
	}
	if u > MaxUnits {
		return Errorf(CodeInvalidRequest, "%s is too large (got %d, at most %d)", what, u, MaxUnits).
			Because(ReasonUnitsTooLarge, map[string]any{"got": u, "max": MaxUnits})
	}
	return nil
}

// Balance is one tenant's position. JSON names follow seed 000.
type Balance struct {
	TenantID       string `json:"tenant"`
	BudgetUnits    Units  `json:"budget_units"`
	SpentUnits     Units  `json:"spent_units"`
	HeldUnits      Units  `json:"held_units"`
	AvailableUnits Units  `json:"available_units"`
	Active         int    `json:"active"`
	// Money: spent and held by priced runs, whatever the budget is in; the
	// budget and what is available of it only when HasMoneyBudget (JSON
	// budget_micros and available_micros only then; see MarshalJSON).
	SpentMicros     price.Micros `json:"spent_micros"`
	HeldMicros      price.Micros `json:"held_micros"`
	BudgetMicros    price.Micros `json:"-"`
	AvailableMicros price.Micros `json:"-"`
	HasMoneyBudget  bool         `json:"-"`
	// Period is the tenant's current budget period ("2026-12", "" for a
	// budget that never renews), from PeriodStart to PeriodEnd (exclusive:
	// the next period's start); spent, held and available are then that
	// period's (WithPeriod).
	Period      string    `json:"period,omitempty"`
	PeriodStart time.Time `json:"period_start,omitzero"`
	PeriodEnd   time.Time `json:"period_end,omitzero"`
}

// OnlyBalance is the balance of tenantID from a store's read of that one
// tenant: read's error with context, or ErrUnknownTenant when it found no
// row.
func OnlyBalance(tenantID string, read []Balance, err error) (Balance, error) {
	if err != nil {
		return Balance{}, fmt.Errorf("balance of tenant %s: %w", tenantID, err)
	}
	if len(read) == 0 {
		return Balance{}, ErrUnknownTenant(tenantID)
	}
	return read[0], nil
}

// Available derives available units from the other three figures.
func (b Balance) Available() Units { return b.BudgetUnits - b.SpentUnits - b.HeldUnits }

// AvailableMoney derives available micros from the other three figures;
// 0 without a money budget.
func (b Balance) AvailableMoney() price.Micros {
	if !b.HasMoneyBudget {
		return 0
	}
	return b.BudgetMicros - b.SpentMicros - b.HeldMicros
}

// Check reports a broken invariant, or nil.
func (b Balance) Check() error {
	if b.AvailableUnits != b.Available() {
		return fmt.Errorf("tenant %s: available %d != budget %d − spent %d − held %d",
			b.TenantID, b.AvailableUnits, b.BudgetUnits, b.SpentUnits, b.HeldUnits)
	}
	if b.AvailableMicros != b.AvailableMoney() {
		return fmt.Errorf("tenant %s: available %s != budget %s − spent %s − held %s",
			b.TenantID, b.AvailableMicros, b.BudgetMicros, b.SpentMicros, b.HeldMicros)
	}
	if b.AvailableUnits < 0 || b.SpentUnits < 0 || b.HeldUnits < 0 || b.Active < 0 ||
		b.AvailableMicros < 0 || b.SpentMicros < 0 || b.HeldMicros < 0 {
		return fmt.Errorf("tenant %s: negative figure in %+v", b.TenantID, b)
	}
	return nil
}
