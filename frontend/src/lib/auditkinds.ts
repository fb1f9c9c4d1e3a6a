// The audit log's kinds (ledger.AuditKind), in the ledger's order: the audit
// view's filter offers them. A test reads them back from backend/ledger so
// the two lists cannot drift apart.
export const auditKinds = ['admit', 'reject', 'start', 'settle', 'hold', 'release', 'reconcile', 'cancel', 'recover', 'config', 'evict', 'restore', 'sync', 'archive', 'unarchive', 'failover', 'lookup', 'named', 'late_end', 'alert'] as const;

export type AuditKind = (typeof auditKinds)[number];
