package ledger

import (
	"context"
	"time"
)

// AuditAlert is the audit row of an alert: a tenant's use reached a
// threshold of its budget, a run ended held, a guarded model was evicted or
// restored. Its Reason is the alert's kind.
const AuditAlert AuditKind = "alert"

// ActorAlerts records alerts.
var ActorAlerts = System("alerts")

// AlertRecord is an alert on its way into the outbox.
type AlertRecord struct {
	// Key is what makes it one alert: recording a second alert with the
	// same key records nothing, so a burst of racing callers, or every
	// gateway sharing a ledger, records it once, and a restart does not
	// record it again.
	Key string
	// Tenant is its delivery queue: the alerts of one tenant are delivered
	// in the order they were recorded; "" (a model's eviction) is a queue
	// of its own.
	Tenant string
	Kind   string // the alert's kind, the audit row's Reason
	RunID  RunID  // the run that crossed or ended held, if any
	// Body is the webhook's body, rendered once: every delivery of the
	// alert sends these bytes.
	Body   []byte
	At     time.Time
	Detail string // the audit row's sentence for a person
	// Deliver says there is a receiver. Without one the alert is recorded
	// (its audit row, its notification) and kept as delivered, so that a
	// webhook configured later is not sent alerts from before it.
	Deliver bool
}

// OutboxAlert is an alert in the outbox, with its delivery so far.
type OutboxAlert struct {
	ID            int64 // recording order: delivery order within a queue
	Key           string
	Tenant        string
	Kind          string
	Body          []byte
	At            time.Time
	Attempts      int       // failed deliveries so far
	LastError     string    // the latest failed delivery's error
	LastAttemptAt time.Time // zero: never tried
	NextTry       time.Time // not before then (the backoff after a failure)
}

// OutboxStatus is how delivery is going, for the dashboard.
type OutboxStatus struct {
	Pending int // alerts recorded and not yet delivered
	// LastError is the error of the latest delivery attempt, "" when it
	// succeeded (or none was made): a receiver that keeps failing shows it.
	LastError     string
	LastAttemptAt time.Time // zero: none
	// NextDue is when the earliest undelivered alert is due again (its
	// next try, or the end of another gateway's claim on it); zero when
	// none waits.
	NextDue time.Time
}

// Outbox keeps alerts durably until they are delivered, at least once and
// in order per tenant. Both stores implement it beside Store.
type Outbox interface {
	// RecordAlert records a (its outbox row and an AuditAlert row by
	// ActorAlerts, in one transaction) unless an alert with its key was
	// recorded before; recorded says whether this call did.
	RecordAlert(ctx context.Context, a AlertRecord) (recorded bool, err error)
	// DueAlerts claims, for at most lease, the alerts to deliver now: the
	// oldest undelivered alert of each queue whose next try is due, at
	// most limit, in recording order. A queue's next alert is never due
	// before its previous one was delivered. Gateways sharing a ledger
	// never hold a claim on the same alert at once; an alert whose claim
	// ran out (its gateway died) is due again.
	DueAlerts(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]OutboxAlert, error)
	// AlertDelivered marks the alert delivered at at; its queue's next alert
	// becomes due.
	AlertDelivered(ctx context.Context, id int64, at time.Time) error
	// AlertFailed records a failed delivery at at with its error, and when
	// to try again; the claim ends.
	AlertFailed(ctx context.Context, id int64, at time.Time, reason string, next time.Time) error
	// OutboxStatus reports the undelivered count, the latest attempt and
	// when the next undelivered alert is due.
	OutboxStatus(ctx context.Context) (OutboxStatus, error)
}
