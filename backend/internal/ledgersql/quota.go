package ledgersql

import (
	"fmt"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
)

// QuotaUsage selects a guarded model's settled usage and in-flight holds
// for a day: upstream, model, day.
const QuotaUsage = `SELECT usage_units, held_units FROM quota_days
	WHERE upstream = ? AND model = ? AND day = ?`

// UsageSeries selects a guarded model's per-minute settled units in a
// range of minutes: upstream, model, CeilUnix(from), CeilUnix(to) (a
// minute belongs to the range when its start does).
const UsageSeries = `SELECT minute, units FROM usage_minutes
	WHERE upstream = ? AND model = ? AND minute >= ? AND minute < ? ORDER BY minute`

// ScanUsagePoint reads a row of UsageSeries.
func ScanUsagePoint(r Scanner) (ledger.UsagePoint, error) {
	var minute int64
	var p ledger.UsagePoint
	err := r.Scan(&minute, &p.Units)
	p.Minute = time.Unix(minute, 0).UTC()
	return p, err
}

// InsertSnapshot records a balance sync and returns its id; SnapshotArgs
// are its arguments.
const InsertSnapshot = `INSERT INTO snapshots (upstream, model, day, at, balance_units, usage_at_sync,
	limit_units, limit_v6, b0_units, lag_seconds, source, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
	RETURNING id`

// SnapshotArgs are InsertSnapshot's arguments for snap.
func SnapshotArgs(snap ledger.Snapshot) []any {
	return []any{snap.Upstream, snap.Model, snap.Day, Nanos(snap.At), int64(snap.BalanceUnits),
		int64(snap.UsageAtSync), int64(snap.LimitUnits), int64(snap.LimitV6Units), int64(snap.B0Units),
		snap.LagSeconds, snap.Source, snap.Detail}
}

// Snapshots selects a guarded model's snapshots at or after a time, oldest
// first: upstream, model, NanosOrMin(since).
const Snapshots = `SELECT id, upstream, model, day, at, balance_units, usage_at_sync,
	limit_units, limit_v6, b0_units, lag_seconds, source, detail FROM snapshots
	WHERE upstream = ? AND model = ? AND at >= ? ORDER BY at, id`

// ScanSnapshot reads a row of Snapshots.
func ScanSnapshot(r Scanner) (ledger.Snapshot, error) {
	var sn ledger.Snapshot
	var at int64
	err := r.Scan(&sn.ID, &sn.Upstream, &sn.Model, &sn.Day, &at, &sn.BalanceUnits, &sn.UsageAtSync,
		&sn.LimitUnits, &sn.LimitV6Units, &sn.B0Units, &sn.LagSeconds, &sn.Source, &sn.Detail)
	sn.At = FromNanos(at)
	return sn, err
}

// SnapshotAudit is the audit row of a balance sync.
func SnapshotAudit(snap ledger.Snapshot) ledger.AuditEntry {
	return ledger.AuditEntry{Kind: ledger.AuditSync, Actor: ledger.SourceActor(snap.Source),
		Units: snap.BalanceUnits, Detail: fmt.Sprintf("%s/%s day=%s balance=%d usage_at_sync=%d limit=%d limit_v6=%d b0=%d",
			snap.Upstream, snap.Model, snap.Day, snap.BalanceUnits, snap.UsageAtSync, snap.LimitUnits,
			snap.LimitV6Units, snap.B0Units)}
}
