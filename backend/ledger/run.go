package ledger

import "time"

// RunID identifies one admitted call; it is also the idempotency key of
// every transition of that run.
type RunID string

// RunStatus is where a run is in its life.
type RunStatus string

const (
	RunQueued      RunStatus = "queued"      // admitted, hold taken, waiting at the upstream gate
	RunActive      RunStatus = "active"      // the upstream call is in flight
	RunCompleted   RunStatus = "completed"   // ended normally
	RunInterrupted RunStatus = "interrupted" // cut by the upstream, or the process died mid-run
	RunCancelled   RunStatus = "cancelled"   // cancelled by its owner, the operator or the client's disconnect
	RunFailed      RunStatus = "failed"      // the upstream refused or could not be reached
)

// Ended reports whether the run can no longer change status.
func (s RunStatus) Ended() bool {
	switch s {
	case RunQueued, RunActive:
		return false
	case RunCompleted, RunInterrupted, RunCancelled, RunFailed:
		return true
	}
	return true
}

// UsageStatus says what the ledger knows of a run's true cost.
type UsageStatus string

const (
	UsagePending    UsageStatus = "pending"    // run not ended yet; hold in place
	UsageTrusted    UsageStatus = "trusted"    // settled on trusted usage; hold gone
	UsageUnknown    UsageStatus = "unknown"    // evidence missing or contradictory; hold kept
	UsageReconciled UsageStatus = "reconciled" // an operator settled it with evidence; hold gone
	UsageReleased   UsageStatus = "released"   // proof the provider did no work; spent 0, hold gone
)

// Holding reports whether a run in this usage state still holds its reserve.
func (u UsageStatus) Holding() bool { return u == UsagePending || u == UsageUnknown }

// Run is one admitted call.
type Run struct {
	ID           RunID       `json:"id"`
	TenantID     string      `json:"tenant"`
	Upstream     string      `json:"upstream"`
	Model        string      `json:"model"`
	QuotaDay     string      `json:"quota_day,omitempty"` // the guarded model's day (YYYY-MM-DD) at admission
	Status       RunStatus   `json:"status"`
	Usage        UsageStatus `json:"usage"`
	ReserveUnits Units       `json:"reserve_units"`
	SpentUnits   Units       `json:"spent_units"`
	HeldUnits    Units       `json:"held_units"` // ReserveUnits while Usage.Holding(), else 0
	// OverrunUnits are trusted units beyond the reserve: never charged to the
	// tenant (available stays ≥ 0), but counted in a guarded model's quota day.
	OverrunUnits Units  `json:"overrun_units,omitempty"`
	Evidence     string `json:"evidence,omitempty"`
	// Instance is the gateway that admitted and relays the run, on a ledger
	// several gateways share (backend/postgres); "" on a gateway's own.
	Instance  string    `json:"instance,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// QuotaCheck asks Admit to also enforce a guarded model's daily limit, in the
// same atomic step: usage_today + held_in_flight + reserve ≤ LimitUnits, where
// both sums cover runs of (Upstream, Model) with QuotaDay == Day.
type QuotaCheck struct {
	Day        string // YYYY-MM-DD in the quota's time zone
	LimitUnits Units
}

// AdmitRequest is one call asking for admission.
type AdmitRequest struct {
	RunID        RunID
	TenantID     string
	Upstream     string
	Model        string
	ReserveUnits Units
	Queued       bool        // start as RunQueued (waiting at the gate) instead of RunActive
	Quota        *QuotaCheck // nil: the model is not guarded
	Actor        Actor       // who asked, for the audit row; "" means the tenant itself
}

// RunFilter selects runs for listing.
type RunFilter struct {
	TenantID    string
	HoldingOnly bool // only runs whose usage is pending or unknown
	Limit       int  // 0: a sensible default
}
