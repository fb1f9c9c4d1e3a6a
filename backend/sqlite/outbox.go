package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/quotagate/quotagate/backend/internal/ledgersql"
	"github.com/quotagate/quotagate/backend/ledger"
)

// RecordAlert records a and its audit row in one write, unless its key was
// recorded before (ledger.Outbox).
func (s *Store) RecordAlert(ctx context.Context, a ledger.AlertRecord) (bool, error) {
	var recorded bool
	err := s.writeAside(ctx, func(w *wtx) error {
		var err error
		recorded, err = w.insertOnce(ctx, ledgersql.InsertAlert, ledgersql.AlertArgs(a, w.now)...)
		if err != nil || !recorded {
			return err
		}
		return insertAudit(ctx, w, ledgersql.AlertAudit(a, w.now), false)
	})
	if err != nil {
		return false, fmt.Errorf("record alert %s: %w", a.Key, err)
	}
	return recorded, nil
}

// DueAlerts lists the head of each queue that is due. One gateway owns a
// SQLite ledger (the data dir's lock), so there is nobody to claim against:
// lease is not needed and not recorded.
func (s *Store) DueAlerts(ctx context.Context, now time.Time, _ time.Duration, limit int) ([]ledger.OutboxAlert, error) {
	return ledgersql.List(ctx, s.Q, ledgersql.ScanAlert, "due alerts", `SELECT `+ledgersql.AlertColumns+` FROM alert_outbox
		WHERE id IN (`+queueHeads+`) AND next_try <= ? ORDER BY id LIMIT ?`, nanos(now), limit)
}

// queueHeads selects the oldest undelivered alert of each queue: the only
// one of its queue that may be sent.
const queueHeads = `SELECT min(id) FROM alert_outbox WHERE delivered_at IS NULL GROUP BY tenant_id`

// AlertDelivered marks the alert delivered (ledger.Outbox).
func (s *Store) AlertDelivered(ctx context.Context, id int64, at time.Time) error {
	return s.updateAlert(ctx, id, `UPDATE alert_outbox SET delivered_at = ?1, last_attempt_at = ?1, last_error = ''
		WHERE id = ?2`, nanos(at), id)
}

// AlertFailed records a failed delivery (ledger.Outbox).
func (s *Store) AlertFailed(ctx context.Context, id int64, at time.Time, reason string, next time.Time) error {
	return s.updateAlert(ctx, id, `UPDATE alert_outbox SET attempts = attempts + 1, last_error = ?1,
		last_attempt_at = ?2, next_try = ?3 WHERE id = ?4 AND delivered_at IS NULL`, reason, nanos(at), nanos(next), id)
}

func (s *Store) updateAlert(ctx context.Context, id int64, query string, args ...any) error {
	err := s.writeAside(ctx, func(w *wtx) error {
		_, err := w.exec(ctx, query, args...)
		return err
	})
	if err != nil {
		return fmt.Errorf("alert %d: %w", id, err)
	}
	return nil
}

// outboxPending is the undelivered count and when the next alert is due,
// for ledgersql's OutboxStatus.
const outboxPending = `SELECT count(*), coalesce((SELECT min(next_try) FROM alert_outbox
	WHERE id IN (` + queueHeads + `)), 0) FROM alert_outbox WHERE delivered_at IS NULL`

var _ ledger.Outbox = (*Store)(nil)
