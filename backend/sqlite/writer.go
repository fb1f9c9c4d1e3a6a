package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
)

// writeOp is one state change queued to the writer.
type writeOp struct {
	ctx context.Context
	// apply makes the change inside its own savepoint. On error the
	// savepoint is rolled back, so a refused or failed op leaves nothing
	// behind and its neighbours in the batch are untouched.
	apply func(w *wtx) error
	// refused, if set, runs after apply's savepoint was rolled back because
	// apply returned a domain error: it records the refusal (AuditReject).
	refused func(w *wtx, err error) error
	// decided says apply makes every check before its first write, and
	// after it fails only when SQLite does: it then runs without a
	// savepoint (three statements and a statement journal saved per op),
	// and an error after a write fails the whole batch.
	decided bool
	// aside says apply touches neither tenants, runs nor quota days (an
	// audit row of its own, a snapshot): the writer's books stay as they
	// are. Any other op that is not decided may change what the books
	// hold, so the books are written before it and forgotten after it.
	aside bool
	done  chan error
}

// wtx is the writer's transaction as an op sees it, with the batch's clock.
type wtx struct {
	tx      *sql.Tx
	now     time.Time
	stmts   *stmtCache
	books   *books
	changes []ledger.Change // one per audit row written, for the commit hook
	writes  int             // statements run that may write, to tell a refusal from a half-done op
	bulk    bool            // a Bulk op is applying: audit rows go in larger statements
}

// stmtCtx is the context every statement of the writer runs under: once the
// writer has taken an op it is done whole or not at all, whatever the
// caller's context does meanwhile (a statement cancelled half-way through an
// op without a savepoint would leave half of it behind).
var stmtCtx = context.Background()

// writes reports whether query may change a row (anything but a SELECT).
func writes(query string) bool {
	return !strings.HasPrefix(strings.TrimSpace(query), "SELECT")
}

// stmtCache holds the writer's statements prepared on its one connection:
// parsing SQL is a good part of a small write's cost. A statement seen for
// the first time runs unprepared and is prepared after the batch, when the
// connection is free again.
type stmtCache struct {
	ready  map[string]*sql.Stmt
	wanted map[string]bool
}

func (c *stmtCache) prepare(db *sql.DB) error {
	for q := range c.wanted {
		st, err := db.Prepare(q)
		if err != nil {
			return fmt.Errorf("prepare: %w", err)
		}
		c.ready[q] = st
	}
	clear(c.wanted)
	return nil
}

func (c *stmtCache) close() {
	for _, st := range c.ready {
		st.Close()
	}
}

// prepared is query's statement prepared for this transaction, or nil the
// first time the writer runs query (stmtCache prepares it after the batch).
func (w *wtx) prepared(query string) *sql.Stmt {
	if st, ok := w.stmts.ready[query]; ok {
		return w.tx.StmtContext(stmtCtx, st)
	}
	w.stmts.wanted[query] = true
	return nil
}

func (w *wtx) exec(_ context.Context, query string, args ...any) (sql.Result, error) {
	w.writes++
	if st := w.prepared(query); st != nil {
		return st.ExecContext(stmtCtx, args...)
	}
	return w.tx.ExecContext(stmtCtx, query, args...)
}

// insertOnce runs an INSERT … ON CONFLICT DO NOTHING and reports whether
// it inserted; one that did not wrote nothing, so it is not counted as a
// write (a decided op may still refuse after it).
func (w *wtx) insertOnce(ctx context.Context, query string, args ...any) (bool, error) {
	res, err := w.exec(ctx, query, args...)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, err
	}
	if n == 0 {
		w.writes--
	}
	return n > 0, nil
}

// query and queryRow count a statement that writes (INSERT … RETURNING)
// as exec does.
func (w *wtx) query(_ context.Context, query string, args ...any) (*sql.Rows, error) {
	w.countWrite(query)
	if st := w.prepared(query); st != nil {
		return st.QueryContext(stmtCtx, args...)
	}
	return w.tx.QueryContext(stmtCtx, query, args...)
}

func (w *wtx) queryRow(_ context.Context, query string, args ...any) *sql.Row {
	w.countWrite(query)
	if st := w.prepared(query); st != nil {
		return st.QueryRowContext(stmtCtx, args...)
	}
	return w.tx.QueryRowContext(stmtCtx, query, args...)
}

func (w *wtx) countWrite(query string) {
	if writes(query) {
		w.writes++
	}
}

// Stats counts the writer's work since Open.
type Stats struct {
	Batches int64 `json:"batches"` // transactions committed (or failed): one fsync each
	Writes  int64 `json:"writes"`  // writes taken in them (one whose caller gave up is counted, not applied)
}

// AuditTextLag is about how many audit rows wait for the writer's next
// batch of the text index: 0 once it caught up (or its last batch failed;
// the next one tries again). Search reads the rows waiting one by one.
func (s *Store) AuditTextLag() int64 { return s.textLag.Load() }

// Stats reports how many writes shared how many transactions.
func (s *Store) Stats() Stats {
	return Stats{Batches: s.batches.Load(), Writes: s.writes.Load()}
}

var errClosed = ledger.Errorf(ledger.CodeInternal, "the ledger is closed")

// write queues op and waits for its outcome. Once the writer has taken the op
// the caller waits for the commit even if ctx ends meanwhile: answering early
// would leave the caller not knowing whether its change is on disk.
func (s *Store) write(ctx context.Context, apply func(w *wtx) error, refused func(w *wtx, err error) error) error {
	return s.queue(ctx, &writeOp{ctx: ctx, apply: apply, refused: refused})
}

// writeAside is write for an apply that touches neither tenants, runs nor
// quota days (see writeOp.aside).
func (s *Store) writeAside(ctx context.Context, apply func(w *wtx) error) error {
	return s.queue(ctx, &writeOp{ctx: ctx, apply: apply, aside: true})
}

// writeDecided is write for an apply that decides before it writes (see
// writeOp.decided).
func (s *Store) writeDecided(ctx context.Context, apply func(w *wtx) error, refused func(w *wtx, err error) error) error {
	return s.queue(ctx, &writeOp{ctx: ctx, apply: apply, refused: refused, decided: true})
}

func (s *Store) queue(ctx context.Context, op *writeOp) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	op.done = make(chan error, 1)
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return errClosed
	}
	select {
	case s.ops <- op:
	case <-ctx.Done():
		s.mu.RUnlock()
		return ctx.Err()
	}
	s.mu.RUnlock()
	return <-op.done
}

// writer is the only goroutine that writes. It takes whatever is queued (up
// to MaxBatch), applies it in one transaction, commits once, then answers
// every caller: durability costs one fsync per batch, not per call. Between
// batches it indexes the audit rows' text (audit_text.go): once a batch of
// rows waits, or when no write came for a moment.
func (s *Store) writer() {
	defer close(s.done)
	defer s.stmts.close()
	batch := make([]*writeOp, 0, s.opts.MaxBatch)
	s.textLag.Store(1) // rows a crash or another process left above the mark are indexed once idle
	idle := time.NewTimer(auditTextIdle)
	defer idle.Stop()
	for {
		var op *writeOp
		select {
		case op = <-s.ops:
		case <-idle.C:
			if s.textLag.Load() > 0 && s.opts.AuditTextBatch > 0 {
				s.indexAuditTextBatch(s.opts.AuditTextBatch)
				if s.textLag.Load() > 0 {
					idle.Reset(auditTextIdle)
				}
			}
			continue
		}
		if op == nil {
			return // closed
		}
		batch = append(batch[:0], op)
	fill:
		for len(batch) < s.opts.MaxBatch {
			select {
			case next, ok := <-s.ops:
				if !ok {
					break fill
				}
				batch = append(batch, next)
			default:
				break fill
			}
		}
		lag := s.textLag.Load()
		s.runBatch(batch)
		if now := s.textLag.Load(); s.opts.AuditTextBatch > 0 && now >= int64(s.opts.AuditTextBatch) {
			// As many rows as the batch appended, should it have appended
			// more than a batch of the index (Bulk): the index keeps up.
			s.indexAuditTextBatch(max(s.opts.AuditTextBatch, int(now-lag)))
		}
		idle.Reset(auditTextIdle)
	}
}

func (s *Store) runBatch(batch []*writeOp) {
	results := make([]error, len(batch))
	changes, err := s.applyBatchSafely(batch, results)
	s.textLag.Add(int64(len(changes)))
	s.batches.Add(1)
	s.writes.Add(int64(len(batch)))
	if len(s.stmts.wanted) > 0 {
		// A failure to prepare only costs speed: the statement runs unprepared.
		_ = s.stmts.prepare(s.wdb)
	}
	if err != nil {
		for _, op := range batch {
			op.done <- err
		}
		return
	}
	if !s.hooks.HasHook() || len(changes) == 0 {
		for i, op := range batch {
			op.done <- results[i]
		}
		return
	}
	// The callers hear of their write once the hook has seen it, except
	// the hook's own writes: their delivery waits for the hook to return.
	// batch is reused by the writer: the delivery keeps its own list.
	var ops []*writeOp
	var opResults []error
	for i, op := range batch {
		if ledger.InHook(op.ctx) {
			op.done <- results[i]
			continue
		}
		ops, opResults = append(ops, op), append(opResults, results[i])
	}
	s.hooks.Push(changes, func() {
		for i, op := range ops {
			op.done <- opResults[i]
		}
	})
}

// applyBatchSafely turns a panic in an op into an error for the whole batch
// (its transaction is rolled back), so that one bug cannot leave every
// caller waiting on a dead writer.
func (s *Store) applyBatchSafely(batch []*writeOp, results []error) (changes []ledger.Change, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.books.forget()
			changes, err = nil, fmt.Errorf("ledger writer: panic: %v", p)
		}
	}()
	changes, err = s.applyBatch(batch, results)
	if err != nil {
		s.books.forget() // rolled back: the file is the truth
	}
	return changes, err
}

// applyBatch applies batch in one transaction and returns, once it is
// committed, what it changed.
func (s *Store) applyBatch(batch []*writeOp, results []error) ([]ledger.Change, error) {
	ctx := context.Background()
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("begin write: %w", err)
	}
	defer tx.Rollback()
	w := &wtx{tx: tx, now: s.opts.Now().UTC(), stmts: &s.stmts, books: s.books}
	if err := w.checkBooks(ctx); err != nil {
		return nil, err
	}
	for i, op := range batch {
		if err := op.ctx.Err(); err != nil {
			results[i] = err // the caller gave up before anything was done
			continue
		}
		w.now = s.opts.Now().UTC() // each change carries its own time
		opErr, fatal := s.applyOp(ctx, w, op)
		if fatal != nil {
			return nil, fatal
		}
		results[i] = opErr
	}
	if err := w.flush(ctx); err != nil {
		return nil, err
	}
	if w.now.Sub(s.lastPrune) > time.Hour {
		if err := pruneUsageMinutes(ctx, w); err != nil {
			return nil, err
		}
		s.lastPrune = w.now
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("commit write: %w", err)
	}
	return w.changes, nil
}

// applyOp runs one op in a savepoint. It returns the op's own outcome, and a
// fatal error when the transaction itself can no longer be trusted.
func (s *Store) applyOp(ctx context.Context, w *wtx, op *writeOp) (opErr, fatal error) {
	if op.decided {
		return applyDecided(w, op)
	}
	apply := op.apply
	if !op.aside {
		// The op reads and writes the tables the books stand for: they are
		// written first, and forgotten after, whatever the op did.
		if err := w.flush(ctx); err != nil {
			return nil, err
		}
		defer w.books.forget()
		apply = func(w *wtx) error {
			if err := op.apply(w); err != nil {
				return err
			}
			return w.flush(ctx) // what the op moved through the books
		}
	}
	opErr, fatal = savepoint(ctx, w, apply)
	if fatal != nil || opErr == nil || op.refused == nil {
		return opErr, fatal
	}
	var domain *ledger.Error
	if !errors.As(opErr, &domain) {
		return opErr, nil
	}
	auditErr, fatal := savepoint(ctx, w, func(w *wtx) error { return op.refused(w, opErr) })
	if fatal != nil {
		return nil, fatal
	}
	if auditErr != nil {
		return fmt.Errorf("audit refusal %v: %w", opErr, auditErr), nil
	}
	return opErr, nil
}

// applyDecided runs a decided op without a savepoint: a refusal has
// written nothing, so there is nothing to roll back; a failure after a
// write cannot be undone alone and fails the batch.
func applyDecided(w *wtx, op *writeOp) (opErr, fatal error) {
	noted, wrote, appended := len(w.changes), w.writes, len(w.books.audit)
	opErr = op.apply(w)
	if opErr == nil {
		return nil, nil
	}
	if w.writes != wrote {
		return nil, fmt.Errorf("ledger writer: an op failed after writing: %w", opErr)
	}
	w.changes = w.changes[:noted]
	w.books.audit = w.books.audit[:appended]
	var domain *ledger.Error
	if op.refused == nil || !errors.As(opErr, &domain) {
		return opErr, nil
	}
	// The refusal's record is one INSERT, atomic on its own.
	if auditErr := op.refused(w, opErr); auditErr != nil {
		w.changes = w.changes[:noted]
		w.books.audit = w.books.audit[:min(appended, len(w.books.audit))]
		return fmt.Errorf("audit refusal %v: %w", opErr, auditErr), nil
	}
	return opErr, nil
}

func savepoint(ctx context.Context, w *wtx, fn func(w *wtx) error) (opErr, fatal error) {
	// What earlier ops appended is written before the savepoint, so that a
	// rollback to it cannot take their rows along.
	if err := w.flushAudit(ctx); err != nil {
		return nil, err
	}
	if _, err := w.exec(ctx, `SAVEPOINT op`); err != nil {
		return nil, fmt.Errorf("savepoint: %w", err)
	}
	noted := len(w.changes)
	if opErr = fn(w); opErr != nil {
		w.changes = w.changes[:noted] // rolled back: nothing to report
		w.books.audit = w.books.audit[:0]
		if _, err := w.exec(ctx, `ROLLBACK TO op`); err != nil {
			return nil, fmt.Errorf("rollback to savepoint after %v: %w", opErr, err)
		}
	}
	if _, err := w.exec(ctx, `RELEASE op`); err != nil {
		return nil, fmt.Errorf("release savepoint: %w", err)
	}
	return opErr, nil
}

// usageRetention keeps the per-minute series for more than the two days the
// quota guard looks back over.
const usageRetention = 3 * 24 * time.Hour

func pruneUsageMinutes(ctx context.Context, w *wtx) error {
	cut := w.now.Add(-usageRetention).Unix()
	if _, err := w.exec(ctx, `DELETE FROM usage_minutes WHERE minute < ?`, cut); err != nil {
		return fmt.Errorf("prune usage minutes: %w", err)
	}
	return nil
}
