package ledger

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"

	"github.com/quotagate/quotagate/backend/period"
	"github.com/quotagate/quotagate/backend/price"
)

// Tenant is who calls the gateway. Its API keys are stored only as hashes.
//
// Its budget is in units, in money, or both: BudgetUnits always holds (a
// tenant that budgets only in money has NoUnitsLimit), and BudgetMicros
// only when HasMoneyBudget (JSON budget_micros only then; see MarshalJSON).
type Tenant struct {
	ID             string       `json:"id"`
	KeyHashes      []string     `json:"-"` // hex SHA-256 of each API key; never the key
	BudgetUnits    Units        `json:"budget_units"`
	BudgetMicros   price.Micros `json:"-"`
	HasMoneyBudget bool         `json:"-"`
	MaxConcurrent  int          `json:"max_concurrent"`
	AllowedModels  []string     `json:"allowed_models,omitempty"` // empty: every configured model
	PerMinute      int          `json:"per_minute,omitempty"`     // 0: no per-minute limit
	PerHour        int          `json:"per_hour,omitempty"`       // 0: no per-hour limit
	// Calendar cuts the budget into periods that renew it (the zero
	// Calendar: never renews); see PeriodBooks.
	Calendar period.Calendar `json:"-"`
}

// HashKey returns the stored form of an API key.
func HashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// MatchesKey compares key against the tenant's hashes in constant time.
func (t Tenant) MatchesKey(key string) bool {
	h := []byte(HashKey(key))
	ok := 0
	for _, kh := range t.KeyHashes {
		ok |= subtle.ConstantTimeCompare(h, []byte(kh))
	}
	return ok == 1
}

// AllowsModel reports whether the tenant may call model.
func (t Tenant) AllowsModel(model string) bool {
	if len(t.AllowedModels) == 0 {
		return true
	}
	for _, m := range t.AllowedModels {
		if m == model {
			return true
		}
	}
	return false
}
