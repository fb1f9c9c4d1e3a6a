package postgres

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quotagate/quotagate/backend/internal/ledgersql"
	"github.com/quotagate/quotagate/backend/ledger"
)

// RecordAlert records a and its audit row in one transaction, unless its
// key was recorded before, by this gateway or another (ledger.Outbox).
func (s *Store) RecordAlert(ctx context.Context, a ledger.AlertRecord) (bool, error) {
	var recorded bool
	err := s.write(ctx, func(w *wtx) error {
		at := a.At
		if at.IsZero() {
			at = w.now
		}
		var delivered *int64 // nil: pending
		if !a.Deliver {
			n := nanos(at)
			delivered = &n
		}
		tag, err := w.Exec(ctx, `INSERT INTO alert_outbox (key, tenant_id, kind, body, at, delivered_at)
			VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (key) DO NOTHING`,
			a.Key, a.Tenant, a.Kind, a.Body, nanos(at), delivered)
		if err != nil {
			return err
		}
		if recorded = tag.RowsAffected() > 0; !recorded {
			return nil
		}
		return s.insertAudit(ctx, w, ledger.AuditEntry{At: at, Kind: ledger.AuditAlert, Actor: ledger.ActorAlerts,
			TenantID: a.Tenant, RunID: a.RunID, Reason: a.Kind, Detail: a.Detail}, false)
	})
	if err != nil {
		return false, fmt.Errorf("record alert %s: %w", a.Key, err)
	}
	return recorded, nil
}

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

// OutboxStatus reports the undelivered count and the latest attempt of
// every gateway (ledger.Outbox).
func (s *Store) OutboxStatus(ctx context.Context) (ledger.OutboxStatus, error) {
	var st ledger.OutboxStatus
	var next int64
	if err := s.pool.QueryRow(ctx, `SELECT count(*), coalesce((SELECT min(greatest(next_try, lease_until))
		FROM alert_outbox WHERE id IN (SELECT min(id) FROM alert_outbox WHERE delivered_at IS NULL GROUP BY tenant_id)), 0)
		FROM alert_outbox WHERE delivered_at IS NULL`).Scan(&st.Pending, &next); err != nil {
		return st, fmt.Errorf("outbox status: %w", err)
	}
	if st.Pending > 0 {
		st.NextDue = fromNanos(next)
	}
	if err := ledgersql.ReadLastAttempt(s.pool.QueryRow(ctx, ledgersql.LastAttempt), pgx.ErrNoRows, &st); err != nil {
		return st, fmt.Errorf("outbox status: %w", err)
	}
	return st, nil
}

var _ ledger.Outbox = (*Store)(nil)
