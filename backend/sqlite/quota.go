package sqlite

import (
	"context"
	"fmt"
	"strings"

	"github.com/quotagate/quotagate/backend/internal/ledgersql"
	"github.com/quotagate/quotagate/backend/ledger"
)

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
