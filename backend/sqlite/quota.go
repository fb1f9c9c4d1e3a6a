package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
)

// QuotaUsage returns a guarded model's settled usage and in-flight holds for day.
func (s *Store) QuotaUsage(ctx context.Context, upstream, model, day string) (ledger.QuotaUsage, error) {
	u := ledger.QuotaUsage{Upstream: upstream, Model: model, Day: day}
	err := s.queryRow(ctx, `SELECT usage_units, held_units FROM quota_days
		WHERE upstream = ? AND model = ? AND day = ?`, upstream, model, day).Scan(&u.UsageUnits, &u.HeldInFlight)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return u, fmt.Errorf("quota usage of %s/%s on %s: %w", upstream, model, day, err)
	}
	return u, nil
}

// UsageSeries returns the per-minute settled units of a guarded model in
// [from, to), oldest first; minutes with no usage are absent.
func (s *Store) UsageSeries(ctx context.Context, upstream, model string, from, to time.Time) ([]ledger.UsagePoint, error) {
	// A minute belongs to the range when its start does.
	lo := ceilUnix(from)
	rows, err := s.query(ctx, `SELECT minute, units FROM usage_minutes
		WHERE upstream = ? AND model = ? AND minute >= ? AND minute < ? ORDER BY minute`,
		upstream, model, lo, ceilUnix(to))
	if err != nil {
		return nil, fmt.Errorf("usage series of %s/%s: %w", upstream, model, err)
	}
	defer rows.Close()
	var out []ledger.UsagePoint
	for rows.Next() {
		var minute int64
		var p ledger.UsagePoint
		if err := rows.Scan(&minute, &p.Units); err != nil {
			return nil, fmt.Errorf("usage series of %s/%s: %w", upstream, model, err)
		}
		p.Minute = time.Unix(minute, 0).UTC()
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("usage series of %s/%s: %w", upstream, model, err)
	}
	return out, nil
}

// nanosOrMin maps the zero time to "no bound".
func nanosOrMin(t time.Time) int64 {
	if t.IsZero() {
		return math.MinInt64
	}
	return nanos(t)
}

// ceilUnix is the smallest Unix second not before t, so that a minute
// starting at t' < to is included even when to has a fraction of a second.
func ceilUnix(t time.Time) int64 {
	if t.Truncate(time.Second).Equal(t) {
		return t.Unix()
	}
	return t.Unix() + 1
}

// SaveSnapshot stores a balance sync and audits it as AuditSync.
func (s *Store) SaveSnapshot(ctx context.Context, snap ledger.Snapshot) (ledger.Snapshot, error) {
	if strings.TrimSpace(snap.Upstream) == "" || strings.TrimSpace(snap.Model) == "" {
		return snap, ledger.Errorf(ledger.CodeInvalidRequest, "a snapshot needs an upstream and a model")
	}
	err := s.writeAside(ctx, func(w *wtx) error {
		if snap.At.IsZero() {
			snap.At = w.now
		}
		snap.At = snap.At.UTC()
		err := w.queryRow(ctx, `INSERT INTO snapshots (upstream, model, day, at, balance_units, usage_at_sync,
			limit_units, limit_v6, b0_units, lag_seconds, source, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			RETURNING id`, snap.Upstream, snap.Model, snap.Day, nanos(snap.At), int64(snap.BalanceUnits),
			int64(snap.UsageAtSync), int64(snap.LimitUnits), int64(snap.LimitV6Units), int64(snap.B0Units),
			snap.LagSeconds, snap.Source, snap.Detail).Scan(&snap.ID)
		if err != nil {
			return fmt.Errorf("insert snapshot: %w", err)
		}
		c, err := insertAuditChange(ctx, w, ledger.AuditEntry{Kind: ledger.AuditSync, Actor: ledger.SourceActor(snap.Source),
			Units: snap.BalanceUnits, Detail: fmt.Sprintf("%s/%s day=%s balance=%d usage_at_sync=%d limit=%d limit_v6=%d b0=%d",
				snap.Upstream, snap.Model, snap.Day, snap.BalanceUnits, snap.UsageAtSync, snap.LimitUnits,
				snap.LimitV6Units, snap.B0Units)}, false)
		if err != nil {
			return err
		}
		c.Upstream, c.Model, c.Day = snap.Upstream, snap.Model, snap.Day
		return nil
	})
	if err != nil {
		return snap, fmt.Errorf("save snapshot of %s/%s: %w", snap.Upstream, snap.Model, err)
	}
	return snap, nil
}

// Snapshots returns a guarded model's snapshots at or after since, oldest first.
func (s *Store) Snapshots(ctx context.Context, upstream, model string, since time.Time) ([]ledger.Snapshot, error) {
	rows, err := s.query(ctx, `SELECT id, upstream, model, day, at, balance_units, usage_at_sync,
		limit_units, limit_v6, b0_units, lag_seconds, source, detail FROM snapshots
		WHERE upstream = ? AND model = ? AND at >= ? ORDER BY at, id`, upstream, model, nanosOrMin(since))
	if err != nil {
		return nil, fmt.Errorf("snapshots of %s/%s: %w", upstream, model, err)
	}
	defer rows.Close()
	var out []ledger.Snapshot
	for rows.Next() {
		var sn ledger.Snapshot
		var at int64
		if err := rows.Scan(&sn.ID, &sn.Upstream, &sn.Model, &sn.Day, &at, &sn.BalanceUnits, &sn.UsageAtSync,
			&sn.LimitUnits, &sn.LimitV6Units, &sn.B0Units, &sn.LagSeconds, &sn.Source, &sn.Detail); err != nil {
			return nil, fmt.Errorf("snapshots of %s/%s: %w", upstream, model, err)
		}
		sn.At = fromNanos(at)
		out = append(out, sn)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("snapshots of %s/%s: %w", upstream, model, err)
	}
	return out, nil
}
