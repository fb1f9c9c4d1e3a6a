package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/quotagate/quotagate/backend/internal/ledgersql"
	"github.com/quotagate/quotagate/backend/ledger"
)

// QuotaUsage returns a guarded model's settled usage and in-flight holds for day.
func (s *Store) QuotaUsage(ctx context.Context, upstream, model, day string) (ledger.QuotaUsage, error) {
	u := ledger.QuotaUsage{Upstream: upstream, Model: model, Day: day}
	err := s.queryRow(ctx, ledgersql.QuotaUsage, upstream, model, day).Scan(&u.UsageUnits, &u.HeldInFlight)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return u, fmt.Errorf("quota usage of %s/%s on %s: %w", upstream, model, day, err)
	}
	return u, nil
}

// UsageSeries returns the per-minute settled units of a guarded model in
// [from, to), oldest first; minutes with no usage are absent.
func (s *Store) UsageSeries(ctx context.Context, upstream, model string, from, to time.Time) ([]ledger.UsagePoint, error) {
	rows, err := s.query(ctx, ledgersql.UsageSeries, upstream, model, ledgersql.CeilUnix(from), ledgersql.CeilUnix(to))
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
		if err := w.queryRow(ctx, ledgersql.InsertSnapshot, ledgersql.SnapshotArgs(snap)...).Scan(&snap.ID); err != nil {
			return fmt.Errorf("insert snapshot: %w", err)
		}
		c, err := insertAuditChange(ctx, w, ledgersql.SnapshotAudit(snap), false)
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
	rows, err := s.query(ctx, ledgersql.Snapshots, upstream, model, ledgersql.NanosOrMin(since))
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
