package ledger

import (
	"context"
	"time"
)

// Store is the ledger's durable state. Every method that changes state writes
// its audit row in the same transaction, and returns only after the change is
// on disk. Errors are *Error with the codes below where a caller branches on
// them; anything else is internal.
//
// # Actors
//
// Every transition takes the Actor that made it (tenant:<id>, operator:<how>,
// system:<part>) and records it in its audit row as that text; an actor
// that is none of the three is CodeInvalidRequest and changes nothing.
// Reading a row applies ReadActor, so rows written before actors had a
// kind read as the actor that wrote them.
//
// # The commit hook
//
// OnCommit sets the one function told what each committed transaction
// changed ([]Change: one per audit row written, with its seq, run, tenant and
// quota day). Every implementation keeps this contract:
//   - the hook is called after the commit returned, never for a transaction
//     that rolled back, exactly once per transaction that wrote an audit row;
//   - calls come one at a time, in commit order (a store shared by several
//     gateways, such as PostgreSQL, reports the other gateways' commits
//     through the same hook, in their commit order);
//   - a write returns to its caller only after the hook has seen its changes,
//     so that what follows a write (the quota guard's verdict, the live hub)
//     is in place when the caller answers — except a write made from inside
//     the hook with the hook's ctx (ledger.InHook), which returns after its
//     commit: its changes are delivered after the hook returns;
//   - the hook never runs on the goroutine that writes, so it cannot stall
//     or deadlock the writer; a slow hook delays only the callers waiting on it.
//
// The hook must not block on anything that itself waits for a store write
// made with another context.
type Store interface {
	// OnCommit sets the commit hook (nil: none). Set it once, before the
	// first write whose changes matter; changes committed earlier are not
	// reported.
	OnCommit(hook CommitHook)

	// ApplyTenants upserts the configured tenants idempotently (budget, policy,
	// key hashes), auditing each real change as AuditConfig by actor. Tenants
	// absent from the list are kept (their history matters) but get no new keys.
	ApplyTenants(ctx context.Context, tenants []Tenant, actor Actor) error
	// Tenants lists every tenant with its key hashes.
	Tenants(ctx context.Context) ([]Tenant, error)

	// Admit checks available ≥ reserve, active < max_concurrent and the quota
	// check if any, and records the run with its hold — all in one atomic step.
	// Errors: CodeInsufficientBudget, CodeConcurrencyLimit, CodeQuotaGuard,
	// CodeInvalidAPIKey (unknown tenant), CodeConflict (duplicate run id),
	// CodeDuplicateRequest (req.IdempotencyKey already used: the error's
	// RunID is the earlier run). A refusal is audited as AuditReject with the
	// code as reason. The run records req's door, protocol, key, retry count
	// and the retry group it joins (Run.RetryOf; see AdmitRequest).
	Admit(ctx context.Context, req AdmitRequest) (Run, error)
	// Start moves a queued run to active. CodeRunEnded if it already ended.
	Start(ctx context.Context, id RunID, actor Actor) (Run, error)
	// Settle ends a run on trusted usage: spends units, releases the rest. Units
	// above the reserve spend the reserve and are kept as the run's overrun,
	// which counts in a guarded model's quota day but not in the tenant's
	// balance. CodeRunEnded if the run already ended; CodeInvalidRequest if
	// units is out of range.
	Settle(ctx context.Context, id RunID, units Units, evidence string, actor Actor) (Run, error)
	// SettleUsage is Settle that also records the usage's cached tokens on
	// the run (Run.CachedTokens), in the same step; Settle is SettleUsage
	// with CachedTokens 0. CodeInvalidRequest for CachedTokens out of range.
	SettleUsage(ctx context.Context, id RunID, s Settlement, actor Actor) (Run, error)
	// KeepHold ends a run whose usage is unknown (status interrupted, cancelled
	// or completed-without-evidence); the reserve stays held.
	KeepHold(ctx context.Context, id RunID, status RunStatus, reason string, actor Actor) (Run, error)
	// ReleaseHold ends a run the provider provably did no work for (HTTP error
	// before output, connection never made, gave up while queued): spent 0,
	// hold released, evidence recorded. status is failed or cancelled.
	ReleaseHold(ctx context.Context, id RunID, status RunStatus, evidence string, actor Actor) (Run, error)
	// Reconcile settles a held (usage unknown) run at units, 0 ≤ units ≤
	// reserve, with non-empty evidence, exactly once. CodeNotHeld (409) when
	// the run holds nothing (already reconciled, settled, or still running);
	// CodeInvalidRequest for bad units or empty evidence; CodeRunNotFound.
	Reconcile(ctx context.Context, id RunID, units Units, evidence string, actor Actor) (Run, error)
	// ReconcileCost is Reconcile that also takes the provider's bill
	// (c.HasCost: 0 ≤ CostMicros ≤ the run's ReserveMicros, else
	// CodeInvalidRequest); without one, a priced run's units are priced as
	// its input first, the rest as output. Reconcile is ReconcileCost
	// without a bill.
	ReconcileCost(ctx context.Context, id RunID, c Reconciliation, actor Actor) (Run, error)
	// ApplyRule loads run id, decides its transition by rule and writes it
	// with its audit row as actor's, in one step, as the methods above do
	// (each is one rule); the gateway uses it to end a run with the
	// provider's id noted (Rule.Noting).
	ApplyRule(ctx context.Context, id RunID, actor Actor, rule Rule) (Run, error)
	// RecoverInterrupted marks runs left active by a dead process as
	// interrupted with usage unknown, holds intact; a run left queued never
	// reached the provider (it is started before it is sent), so it ends
	// failed with its hold released and that evidence. Both are audited by
	// actor (ActorRecovery). Called once on start; the count is of both.
	RecoverInterrupted(ctx context.Context, actor Actor) (int, error)

	Balance(ctx context.Context, tenantID string) (Balance, error)
	Balances(ctx context.Context) ([]Balance, error)
	// PeriodHistory returns what the tenant spent in its last n budget
	// periods that have books, newest first (none for a tenant that never
	// renewed).
	PeriodHistory(ctx context.Context, tenantID string, n int) ([]PeriodSpend, error)
	Run(ctx context.Context, id RunID) (Run, error) // CodeRunNotFound
	Runs(ctx context.Context, f RunFilter) ([]Run, error)

	// AppendAudit records an event that changes no balance (a rate-limit
	// refusal, an eviction, a sync); e.Actor is required.
	AppendAudit(ctx context.Context, e AuditEntry) error
	// Audit returns rows matching f in sequence order.
	Audit(ctx context.Context, f AuditFilter) ([]AuditEntry, error)

	// QuotaUsage sums a guarded model's settled usage and in-flight holds for day.
	QuotaUsage(ctx context.Context, upstream, model, day string) (QuotaUsage, error)
	// UsageSeries returns per-minute settled units of a guarded model in [from, to).
	UsageSeries(ctx context.Context, upstream, model string, from, to time.Time) ([]UsagePoint, error)
	// SaveSnapshot stores a balance sync and audits it as AuditSync.
	SaveSnapshot(ctx context.Context, s Snapshot) (Snapshot, error)
	// Snapshots returns a guarded model's snapshots at or after since, oldest first.
	Snapshots(ctx context.Context, upstream, model string, since time.Time) ([]Snapshot, error)

	// Verify recomputes every balance from the runs and the audit entries and
	// returns one line per difference; empty means consistent.
	Verify(ctx context.Context) ([]string, error)

	Close() error
}
