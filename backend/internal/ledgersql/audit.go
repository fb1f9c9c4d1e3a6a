package ledgersql

import "github.com/quotagate/quotagate/backend/ledger"

// AuditColumns are the audit columns ScanAudit reads.
const AuditColumns = `seq, at, kind, tenant_id, run_id, actor, reason, evidence, units, available_before, available_after, detail, count, last_at, micros, period, provider_id`

// ScanAudit reads a row of AuditColumns.
func ScanAudit(r Scanner) (ledger.AuditEntry, error) {
	var e ledger.AuditEntry
	var at, lastAt int64
	var kind, run, actor string
	var units, before, after int64
	if err := r.Scan(&e.Seq, &at, &kind, &e.TenantID, &run, &actor, &e.Reason, &e.Evidence,
		&units, &before, &after, &e.Detail, &e.Count, &lastAt, &e.Micros, &e.Period, &e.ProviderID); err != nil {
		return e, err
	}
	if lastAt == 0 { // one event (SQLite keeps at once)
		lastAt = at
	}
	e.At, e.LastAt = FromNanos(at), FromNanos(lastAt)
	e.Kind = ledger.AuditKind(kind)
	e.RunID = ledger.RunID(run)
	e.Actor = ledger.ReadActor(actor, e.Kind, e.TenantID)
	e.Units, e.AvailableBefore, e.AvailableAfter = ledger.Units(units), ledger.Units(before), ledger.Units(after)
	return e, nil
}
