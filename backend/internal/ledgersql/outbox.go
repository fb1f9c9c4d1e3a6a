package ledgersql

import (
	"errors"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
)

// AlertColumns are what ScanAlert reads of an alert_outbox row.
const AlertColumns = `id, key, tenant_id, kind, body, at, attempts, last_error, last_attempt_at, next_try`

// ScanAlert reads AlertColumns.
func ScanAlert(r Scanner) (ledger.OutboxAlert, error) {
	var a ledger.OutboxAlert
	var at, last, next int64
	err := r.Scan(&a.ID, &a.Key, &a.Tenant, &a.Kind, &a.Body, &at, &a.Attempts, &a.LastError, &last, &next)
	a.At, a.LastAttemptAt, a.NextTry = FromNanos(at), FromNanosOrZero(last), FromNanosOrZero(next)
	return a, err
}

// LastAttempt selects the outbox's latest delivery attempt: its error ("" for
// a success) and when it was; no row before the first attempt.
const LastAttempt = `SELECT last_error, last_attempt_at FROM alert_outbox WHERE last_attempt_at > 0
	ORDER BY last_attempt_at DESC, id DESC LIMIT 1`

// ReadLastAttempt reads LastAttempt's row r into st. noRows is the
// driver's error for no row, which means no attempt yet.
func ReadLastAttempt(r Scanner, noRows error, st *ledger.OutboxStatus) error {
	var last int64
	if err := r.Scan(&st.LastError, &last); err != nil && !errors.Is(err, noRows) {
		return err
	}
	st.LastAttemptAt = FromNanosOrZero(last)
	return nil
}

// InsertAlert records an alert unless its key was recorded before;
// AlertArgs are its arguments.
const InsertAlert = `INSERT INTO alert_outbox (key, tenant_id, kind, body, at, delivered_at)
	VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING`

// AlertArgs are InsertAlert's arguments for a, recorded now unless it
// says when: pending (delivered_at NULL) when it is to be delivered, else
// delivered at once.
func AlertArgs(a ledger.AlertRecord, now time.Time) []any {
	at := alertAt(a, now)
	var delivered *int64
	if !a.Deliver {
		n := Nanos(at)
		delivered = &n
	}
	return []any{a.Key, a.Tenant, a.Kind, a.Body, Nanos(at), delivered}
}

// AlertAudit is the audit row of an alert recorded now (AlertArgs).
func AlertAudit(a ledger.AlertRecord, now time.Time) ledger.AuditEntry {
	return ledger.AuditEntry{At: alertAt(a, now), Kind: ledger.AuditAlert, Actor: ledger.ActorAlerts,
		TenantID: a.Tenant, RunID: a.RunID, Reason: a.Kind, Detail: a.Detail}
}

// alertAt is when a is recorded: its own time, else now.
func alertAt(a ledger.AlertRecord, now time.Time) time.Time {
	if a.At.IsZero() {
		return now
	}
	return a.At
}
