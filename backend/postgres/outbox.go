package postgres

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/quotagate/quotagate/backend/internal/ledgersql"
	"github.com/quotagate/quotagate/backend/ledger"
)

// RecordAlert records a and its audit row in one transaction, unless its
// key was recorded before, by this gateway or another (ledger.Outbox).
func (s *Store) RecordAlert(ctx context.Context, a ledger.AlertRecord) (bool, error) {
	var recorded bool
	err := s.write(ctx, func(w *wtx) error {
		tag, err := w.Exec(ctx, insertAlert, ledgersql.AlertArgs(a, w.now)...)
		if err != nil {
			return err
		}
		if recorded = tag.RowsAffected() > 0; !recorded {
			return nil
		}
		return s.insertAudit(ctx, w, ledgersql.AlertAudit(a, w.now), false)
	})
	if err != nil {
		return false, fmt.Errorf("record alert %s: %w", a.Key, err)
	}
	return recorded, nil
}

// insertAlert is ledgersql's, with its arguments numbered.
var insertAlert = ledgersql.Dollar(ledgersql.InsertAlert)

// DueAlerts claims the due head of each queue for this gateway until
// now+lease. The claim is one UPDATE whose conditions PostgreSQL checks
// again on the row it locks: of gateways claiming at once, the first takes
// an alert and the others skip it (ledger.Outbox).
func (s *Store) DueAlerts(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]ledger.OutboxAlert, error) {
	rows, err := s.pool.Query(ctx, `WITH heads AS (
			SELECT min(id) AS id FROM alert_outbox WHERE delivered_at IS NULL GROUP BY tenant_id),
		due AS (
			SELECT o.id FROM alert_outbox o JOIN heads USING (id)
			WHERE o.next_try <= $1 AND o.lease_until <= $1 ORDER BY o.id LIMIT $4)
		UPDATE alert_outbox o SET lease_owner = $3, lease_until = $2 FROM due
		WHERE o.id = due.id AND o.delivered_at IS NULL AND o.next_try <= $1 AND o.lease_until <= $1
		RETURNING o.id, o.key, o.tenant_id, o.kind, o.body, o.at, o.attempts, o.last_error, o.last_attempt_at, o.next_try`,
		nanos(now), nanos(now.Add(lease)), s.opts.Instance, limit)
	if err != nil {
		return nil, fmt.Errorf("due alerts: %w", err)
	}
	defer rows.Close()
	out, err := ledgersql.Collect(rows, ledgersql.ScanAlert)
	if err != nil {
		return nil, fmt.Errorf("due alerts: %w", err)
	}
	slices.SortFunc(out, func(a, b ledger.OutboxAlert) int { return int(a.ID - b.ID) })
	return out, nil
}

// AlertDelivered marks the alert delivered and ends its claim (ledger.Outbox).
func (s *Store) AlertDelivered(ctx context.Context, id int64, at time.Time) error {
	return s.updateAlert(ctx, id, `UPDATE alert_outbox SET delivered_at = $1, last_attempt_at = $1, last_error = '',
		lease_owner = '', lease_until = 0 WHERE id = $2`, nanos(at), id)
}

// AlertFailed records a failed delivery and ends its claim (ledger.Outbox).
func (s *Store) AlertFailed(ctx context.Context, id int64, at time.Time, reason string, next time.Time) error {
	return s.updateAlert(ctx, id, `UPDATE alert_outbox SET attempts = attempts + 1, last_error = $1,
		last_attempt_at = $2, next_try = $3, lease_owner = '', lease_until = 0
		WHERE id = $4 AND delivered_at IS NULL`, reason, nanos(at), nanos(next), id)
}

func (s *Store) updateAlert(ctx context.Context, id int64, query string, args ...any) error {
	if _, err := s.pool.Exec(ctx, query, args...); err != nil {
		return fmt.Errorf("alert %d: %w", id, err)
	}
	return nil
}

// outboxPending is the undelivered count and when the next alert is due,
// for ledgersql's OutboxStatus: every gateway's, and a claimed alert not
// before its claim's lease ends.
const outboxPending = `SELECT count(*), coalesce((SELECT min(greatest(next_try, lease_until))
	FROM alert_outbox WHERE id IN (SELECT min(id) FROM alert_outbox WHERE delivered_at IS NULL GROUP BY tenant_id)), 0)
	FROM alert_outbox WHERE delivered_at IS NULL`

var _ ledger.Outbox = (*Store)(nil)
