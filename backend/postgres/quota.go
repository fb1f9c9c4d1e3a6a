package postgres

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quotagate/quotagate/backend/ledger"
)

// QuotaUsage returns a guarded model's settled usage and in-flight holds for
// day, summed over every gateway sharing the database.
func (s *Store) QuotaUsage(ctx context.Context, upstream, model, day string) (ledger.QuotaUsage, error) {
	u := ledger.QuotaUsage{Upstream: upstream, Model: model, Day: day}
	err := s.pool.QueryRow(ctx, `SELECT usage_units, held_units FROM quota_days
		WHERE upstream = $1 AND model = $2 AND day = $3`, upstream, model, day).Scan(&u.UsageUnits, &u.HeldInFlight)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return u, fmt.Errorf("quota usage of %s/%s on %s: %w", upstream, model, day, err)
	}
	return u, nil
}

// UsageSeries returns the per-minute settled units of a guarded model in
// [from, to), oldest first; minutes with no usage are absent.
func (s *Store) UsageSeries(ctx context.Context, upstream, model string, from, to time.Time) ([]ledger.UsagePoint, error) {
	rows, err := s.pool.Query(ctx, `SELECT minute, units FROM usage_minutes
		WHERE upstream = $1 AND model = $2 AND minute >= $3 AND minute < $4 ORDER BY minute`,
		upstream, model, ceilUnix(from), ceilUnix(to))
	if err != nil {
		return nil, fmt.Errorf("usage series of %s/%s: %w", upstream, model, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.UsagePoint, error) {
		var minute int64
		var p ledger.UsagePoint
		err := r.Scan(&minute, &p.Units)
		p.Minute = time.Unix(minute, 0).UTC()
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("usage series of %s/%s: %w", upstream, model, err)
	}
	return out, nil
}

// ceilUnix is the smallest Unix second not before t.
func ceilUnix(t time.Time) int64 {
	if t.Truncate(time.Second).Equal(t) {
		return t.Unix()
	}
	return t.Unix() + 1
}

func nanosOrMin(t time.Time) int64 {
	if t.IsZero() {
		return math.MinInt64
	}
	return nanos(t)
}

// SaveSnapshot stores a balance sync and audits it as AuditSync.
func (s *Store) SaveSnapshot(ctx context.Context, snap ledger.Snapshot) (ledger.Snapshot, error) {
	if strings.TrimSpace(snap.Upstream) == "" || strings.TrimSpace(snap.Model) == "" {
		return snap, ledger.Errorf(ledger.CodeInvalidRequest, "a snapshot needs an upstream and a model")
	}
	out := snap
	err := s.write(ctx, func(w *wtx) error {
		out = snap
		if out.At.IsZero() {
			out.At = w.now
		}
		out.At = out.At.UTC()
		err := w.QueryRow(ctx, `INSERT INTO snapshots (upstream, model, day, at, balance_units, usage_at_sync,
			limit_units, limit_v6, b0_units, lag_seconds, source, detail) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
			RETURNING id`, out.Upstream, out.Model, out.Day, nanos(out.At), int64(out.BalanceUnits),
			int64(out.UsageAtSync), int64(out.LimitUnits), int64(out.LimitV6Units), int64(out.B0Units),
			out.LagSeconds, out.Source, out.Detail).Scan(&out.ID)
		if err != nil {
			return fmt.Errorf("insert snapshot: %w", err)
		}
		c := insertAuditIn(w, ledger.AuditEntry{Kind: ledger.AuditSync, Actor: ledger.SourceActor(out.Source),
			Units: out.BalanceUnits, Detail: fmt.Sprintf("%s/%s day=%s balance=%d usage_at_sync=%d limit=%d limit_v6=%d b0=%d",
				out.Upstream, out.Model, out.Day, out.BalanceUnits, out.UsageAtSync, out.LimitUnits,
				out.LimitV6Units, out.B0Units)}, false, s.opts.Instance)
		c.Upstream, c.Model, c.Day = out.Upstream, out.Model, out.Day
		return nil
	})
	if err != nil {
		return snap, fmt.Errorf("save snapshot of %s/%s: %w", snap.Upstream, snap.Model, err)
	}
	return out, nil
}

// Snapshots returns a guarded model's snapshots at or after since, oldest first.
func (s *Store) Snapshots(ctx context.Context, upstream, model string, since time.Time) ([]ledger.Snapshot, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, upstream, model, day, at, balance_units, usage_at_sync,
		limit_units, limit_v6, b0_units, lag_seconds, source, detail FROM snapshots
		WHERE upstream = $1 AND model = $2 AND at >= $3 ORDER BY at, id`, upstream, model, nanosOrMin(since))
	if err != nil {
		return nil, fmt.Errorf("snapshots of %s/%s: %w", upstream, model, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.Snapshot, error) {
		var sn ledger.Snapshot
		var at int64
		err := r.Scan(&sn.ID, &sn.Upstream, &sn.Model, &sn.Day, &at, &sn.BalanceUnits, &sn.UsageAtSync,
			&sn.LimitUnits, &sn.LimitV6Units, &sn.B0Units, &sn.LagSeconds, &sn.Source, &sn.Detail)
		sn.At = fromNanos(at)
		return sn, err
	})
	if err != nil {
		return nil, fmt.Errorf("snapshots of %s/%s: %w", upstream, model, err)
	}
	return out, nil
}

// usageRetention keeps the per-minute series for more than the two days the
// quota guard looks back over (as backend/sqlite).
const usageRetention = 3 * 24 * time.Hour

// pruneUsageMinutes deletes old minutes, at most hourly per gateway.
func (s *Store) pruneUsageMinutes(ctx context.Context) error {
	now := s.opts.Now()
	s.mu.Lock()
	due := now.Sub(s.lastPrune) > time.Hour
	if due {
		s.lastPrune = now
	}
	s.mu.Unlock()
	if !due {
		return nil
	}
	if _, err := s.pool.Exec(ctx, `DELETE FROM usage_minutes WHERE minute < $1`, now.Add(-usageRetention).Unix()); err != nil {
		return fmt.Errorf("prune usage minutes: %w", err)
	}
	return nil
}
