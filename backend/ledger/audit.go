package ledger

import "time"

// AuditKind names a state change.
type AuditKind string

const (
	AuditAdmit     AuditKind = "admit"
	AuditReject    AuditKind = "reject"
	AuditStart     AuditKind = "start"     // queued → active
	AuditSettle    AuditKind = "settle"    // trusted usage
	AuditHold      AuditKind = "hold"      // usage unknown, hold kept
	AuditRelease   AuditKind = "release"   // provider did no work; hold released with evidence
	AuditReconcile AuditKind = "reconcile" // operator settled a held run with evidence
	AuditCancel    AuditKind = "cancel"
	AuditRecover   AuditKind = "recover" // active at crash → interrupted, hold intact
	AuditConfig    AuditKind = "config"
	AuditEvict     AuditKind = "evict"
	AuditRestore   AuditKind = "restore"
	AuditSync      AuditKind = "sync"
)

// AuditEntry is one append-only row of the audit log.
type AuditEntry struct {
	Seq             int64     `json:"seq"`
	At              time.Time `json:"at"`
	Kind            AuditKind `json:"kind"`
	TenantID        string    `json:"tenant,omitempty"`
	RunID           RunID     `json:"run,omitempty"`
	Actor           string    `json:"actor,omitempty"`
	Reason          string    `json:"reason,omitempty"` // error code of a reject, or a short why
	Evidence        string    `json:"evidence,omitempty"`
	Units           Units     `json:"units"`            // the units the change moved (reserve, spent, …)
	AvailableBefore Units     `json:"available_before"` // tenant's available units before the change
	AvailableAfter  Units     `json:"available_after"`
	Detail          string    `json:"detail,omitempty"` // free text: upstream/model, config diff, …
}

// AuditFilter selects audit rows; zero values mean "no bound".
type AuditFilter struct {
	From, To time.Time
	TenantID string
	AfterSeq int64
	Limit    int
}
