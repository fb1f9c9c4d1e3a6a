// Package sqlite is the embedded ledger: it implements ledger.Store on one
// SQLite file (modernc.org/sqlite, pure Go) and owns every table.
//
// # Concurrency
//
// One writer goroutine applies every state change. Concurrent callers queue
// their change; the writer takes whatever is queued (up to Options.MaxBatch),
// applies it in one BEGIN IMMEDIATE transaction, commits once and then
// answers each caller — group commit, so durability costs one fsync per
// batch rather than per call. Admissions and run transitions are decided
// before they write, on what the writer keeps in memory (books: each
// tenant's balance row, each guarded model's day, the open runs — read from
// the file on first use; the writer is the file's only writer, the data-dir
// lock keeps other processes out), so a refusal writes nothing but its
// AuditReject row and needs no savepoint. An accepted change writes its run
// row and appends its audit row; the audit rows, each moved balance row and
// quota day are written once per batch, before the commit. Any other change
// (config, recovery) runs in its own SAVEPOINT, with the books written before
// it and read afresh after it; a batch that fails forgets them too. A caller
// whose context ends before the writer reaches its change gets the context's
// error and nothing is applied; once the writer has taken it, the caller
// waits for the commit, so an answer always tells the truth about the disk.
//
// Reads use a separate pool of query-only connections and see committed
// state only. Pragmas (WAL, synchronous=FULL, busy_timeout, foreign_keys,
// query_only, and fullfsync on macOS) are set in the DSN, so every pooled
// connection has them.
//
// # Invariants
//
// Admission checks available ≥ reserve AND active < max_concurrent on the
// tenant's balance, then, for a guarded model, usage + held + reserve ≤ limit
// on the model's day (ledger.AdmitRefusal, ledger.QuotaRefusal); the run row,
// the audit row and the moved balance row go in the same transaction. The
// balance row and the quota day are denormalised so that admission is O(1);
// CHECK constraints keep them non-negative and every run's held units equal
// to its reserve exactly while its usage is pending or unknown. Verify
// recomputes both from the runs and replays the audit log (available_before
// of each row equals available_after of the previous one, per tenant), so a
// drift between the cached rows and the entries is reported, never trusted.
// Triggers make the audit table append-only.
//
// # Durability
//
// A change is acknowledged only after its transaction committed with
// synchronous=FULL. TestCrash kills a writing child process with SIGKILL and
// checks that every acknowledged change survived; power loss is not
// simulated (see RELIABILITY.md T17).
//
// # What is deliberately absent
//
// Nothing expires a hold, and nothing deletes runs or audit rows. The
// per-minute usage series is the one table pruned (after three days).
package sqlite
