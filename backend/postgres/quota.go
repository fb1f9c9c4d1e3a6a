package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/quotagate/quotagate/backend/internal/ledgersql"
	"github.com/quotagate/quotagate/backend/ledger"
)

// insertSnapshot is ledgersql's, with its arguments numbered.
var insertSnapshot = ledgersql.Dollar(ledgersql.InsertSnapshot)

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
