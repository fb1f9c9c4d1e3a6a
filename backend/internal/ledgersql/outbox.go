package ledgersql

import (
	"errors"

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
