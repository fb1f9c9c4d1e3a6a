// Package ledger holds quotagate's domain: tenants, units, runs, holds, the
// audit trail, the error codes of the external contract, and the Store
// interface that every ledger backend (SQLite now, PostgreSQL later) implements.
//
// # Invariants
//
// For every tenant, at every observation:
//
//	available = budget − spent − held ≥ 0
//	active ≤ max_concurrent
//
// Admission checks available ≥ reserve and active < max_concurrent (and, for a
// guarded model, the quota limit) and records the run with its hold in ONE
// atomic step. A hold is released only by trusted usage (Settle), by proof that
// the provider did no work (ReleaseHold, with that proof as evidence), or by an
// operator's reconciliation with evidence (Reconcile) — never by a timer, a
// restart or a client's word.
//
// # What is deliberately absent
//
// There is no Expire and no "release after N minutes": a hold whose evidence
// is missing stays until someone reconciles it.
package ledger
