// Package postgres is the shared ledger: it implements ledger.Store on a
// PostgreSQL database (github.com/jackc/pgx/v5) so that several gateways keep
// one set of books — budgets, holds, runs, the audit log and the quota
// guard's days. Its tables, checks and answers mirror backend/sqlite's; the
// ledgertest contract suite and simulation run against both.
//
// # Concurrency
//
// Every change is one transaction at READ COMMITTED, and that is enough
// because no decision is taken on a value read earlier in the transaction:
//
//   - Admission is one conditional UPDATE of the tenant's row (… SET
//     held = held + r, active = active + 1 WHERE budget − spent − held ≥ r AND
//     active < max_concurrent RETURNING …). When another transaction holds
//     the row, PostgreSQL waits for it and then re-evaluates the WHERE clause
//     on the row version it committed, so the condition is always checked
//     against the latest balance and the row lock serialises the tenant's
//     admissions across every gateway. A guarded model's day is admitted the
//     same way (usage + held + r ≤ limit) in the same transaction, and the
//     run row and its audit row are inserted before the commit.
//   - Settle, keep hold, release, reconcile and the ending of a dead
//     instance's runs change a run only if it is still in the state the
//     change was decided on (UPDATE runs … WHERE id = $1 AND status = $2 AND
//     usage = $3); a change that loses the race re-reads the run and decides
//     again, which then answers run_ended or not_held: exactly once, on any
//     gateway.
//   - Rows are locked in one fixed order: a run, then its tenant, then the
//     quota day (an admission, having no run row yet, takes tenant then quota
//     day; ApplyTenants takes every tenant row in id order). No cycle, no
//     deadlock.
//   - CHECK constraints are the backstop: held ≥ 0, spent + held ≤ budget,
//     a run holds its reserve exactly while its usage is pending or unknown.
//
// Audit rows that carry a tenant's available before and after are written
// while the tenant's row lock is held, so their sequence numbers follow the
// commit order per tenant, and Verify can replay each tenant's chain.
//
// A write once begun is not abandoned when its caller's context ends
// (Options.WriteTimeout bounds it): an answer tells the truth about the
// database.
//
// # The commit hook
//
// OnCommit's hook is told of this gateway's own commits (one change per
// audit row, seq included; a write returns once the hook saw it) and, once
// Serve listens, of the other gateways': each transaction NOTIFYs its
// changes before it commits, and PostgreSQL delivers a NOTIFY on commit
// only, in commit order. One goroutine calls the hook, one call at a time.
// A lost listening connection is reported as a change by system:resync
// (everything may have moved).
//
// # Instances
//
// Each run records the instance that admitted it and relays it. Each
// gateway holds a lease row (TakeLease: renewed every heartbeat, on the
// database's clock); ReapExpired, on every beat, ends the open runs of
// instances whose lease expired exactly as RecoverInterrupted ends this
// instance's own at start: active runs interrupted with their holds kept,
// queued runs released. A cancel of a run relayed elsewhere is routed to
// its instance over NOTIFY (CancelElsewhere), which closes the upstream and
// answers. Polls holds an advisory lock per name, so one gateway polls each
// guarded model's provider balance.
//
// # What is deliberately absent
//
// Nothing expires a hold, and nothing deletes runs or audit rows (a trigger
// refuses UPDATE, DELETE and TRUNCATE on audit). The per-minute usage series
// is the one table pruned (after three days).
package postgres
