package ledger

import "time"

// UsagePoint is the units settled for one guarded model in one minute.
type UsagePoint struct {
	Minute time.Time `json:"minute"` // UTC, truncated to the minute
	Units  Units     `json:"units"`
}

// QuotaUsage is a guarded model's day so far, as the ledger knows it.
type QuotaUsage struct {
	Upstream     string `json:"upstream"`
	Model        string `json:"model"`
	Day          string `json:"day"`
	UsageUnits   Units  `json:"usage_today"`    // settled (trusted or reconciled) units
	HeldInFlight Units  `json:"held_in_flight"` // reserves of runs still holding
}

// Sources of the balance readings an operator enters (through the admin
// API and the dashboard) rather than a provider's balance API.
const (
	SourceManual   = "manual"    // a balance reading taken now
	SourceManualB0 = "manual-b0" // the day's true starting balance from the provider console
)

// Snapshot is one provider balance sync of a guarded model (seed 002).
type Snapshot struct {
	ID           int64     `json:"id"`
	Upstream     string    `json:"upstream"`
	Model        string    `json:"model"`
	Day          string    `json:"day"`
	At           time.Time `json:"synced_at"`
	BalanceUnits Units     `json:"balance_at_sync"`
	UsageAtSync  Units     `json:"usage_at_sync"`
	LimitUnits   Units     `json:"limit"`
	LimitV6Units Units     `json:"limit_v6"`
	B0Units      Units     `json:"b0_estimate"`
	LagSeconds   int64     `json:"lag_seconds"`
	Source       string    `json:"source"` // volcengine, http-json, manual, manual-b0
	Detail       string    `json:"detail,omitempty"`
}
