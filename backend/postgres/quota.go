package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quotagate/quotagate/backend/internal/ledgersql"
	"github.com/quotagate/quotagate/backend/ledger"
)

// QuotaUsage returns a guarded model's settled usage and in-flight holds for
// day, summed over every gateway sharing the database.
func (s *Store) QuotaUsage(ctx context.Context, upstream, model, day string) (ledger.QuotaUsage, error) {
	u := ledger.QuotaUsage{Upstream: upstream, Model: model, Day: day}
	err := s.pool.QueryRow(ctx, quotaUsage, upstream, model, day).Scan(&u.UsageUnits, &u.HeldInFlight)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return u, fmt.Errorf("quota usage of %s/%s on %s: %w", upstream, model, day, err)
	}
	return u, nil
}

// UsageSeries returns the per-minute settled units of a guarded model in
// [from, to), oldest first; minutes with no usage are absent.
func (s *Store) UsageSeries(ctx context.Context, upstream, model string, from, to time.Time) ([]ledger.UsagePoint, error) {
	rows, err := s.pool.Query(ctx, usageSeries, upstream, model, ledgersql.CeilUnix(from), ledgersql.CeilUnix(to))
	if err != nil {
		return nil, fmt.Errorf("usage series of %s/%s: %w", upstream, model, err)
	}
	defer rows.Close()
	out, err := ledgersql.Collect(rows, ledgersql.ScanUsagePoint)
	if err != nil {
		return nil, fmt.Errorf("usage series of %s/%s: %w", upstream, model, err)
	}
	return out, nil
}

// The statements of ledgersql, with their arguments numbered.
var (
	quotaUsage     = ledgersql.Dollar(ledgersql.QuotaUsage)
	usageSeries    = ledgersql.Dollar(ledgersql.UsageSeries)
	insertSnapshot = ledgersql.Dollar(ledgersql.InsertSnapshot)
	snapshots      = ledgersql.Dollar(ledgersql.Snapshots)
)

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
		if err := w.QueryRow(ctx, insertSnapshot, ledgersql.SnapshotArgs(out)...).Scan(&out.ID); err != nil {
			return fmt.Errorf("insert snapshot: %w", err)
		}
		c := insertAuditIn(w, ledgersql.SnapshotAudit(out), false, s.opts.Instance)
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
	rows, err := s.pool.Query(ctx, snapshots, upstream, model, ledgersql.NanosOrMin(since))
	if err != nil {
		return nil, fmt.Errorf("snapshots of %s/%s: %w", upstream, model, err)
	}
	defer rows.Close()
	out, err := ledgersql.Collect(rows, ledgersql.ScanSnapshot)
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
