package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/quotagate/quotagate/backend/internal/ledgersql"
	"github.com/quotagate/quotagate/backend/ledger"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// Defaults for Options.
const (
	DefaultMaxConns     = 16
	DefaultWriteTimeout = 30 * time.Second
	DefaultConnectWait  = 30 * time.Second
)

// Options tunes a Store. The zero value is the production setting.
type Options struct {
	// Instance names this gateway among those sharing the database; runs
	// it admits carry it. "" means the host name.
	Instance string
	// MaxConns bounds the connection pool.
	MaxConns int32
	// WriteTimeout bounds one write transaction once begun. A write is not
	// abandoned when its caller's context ends (the answer must tell the
	// truth about the database), only after this bound.
	WriteTimeout time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// ConnectWait bounds how long Open waits for an unreachable database
	// (a server still starting, a network not up yet), trying again with
	// backoff; 0 means DefaultConnectWait, negative one attempt only.
	ConnectWait time.Duration
	// Logger gets a line per failed attempt to reach the database; nil
	// discards them.
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.Instance == "" {
		o.Instance, _ = os.Hostname()
	}
	if o.MaxConns <= 0 {
		o.MaxConns = DefaultMaxConns
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.ConnectWait == 0 {
		o.ConnectWait = DefaultConnectWait
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Store is the PostgreSQL ledger.
type Store struct {
	ledger.Transitions // Start, Settle, KeepHold, ReleaseHold, Reconcile by s.transition
	ledgersql.Reads    // Tenants, Balance(s), quota usage, Snapshots, SpendHours, OutboxStatus, SchemaVersions

	hooks    *ledger.HookQueue // to the commit hook (see OnCommit), in commit order
	commitMu sync.Mutex        // held across COMMIT and the push of its delivery
	opts     Options
	pool     *pgxpool.Pool
	dsn      string // with the password removed, for messages

	mu        sync.Mutex
	closed    bool
	closing   bool
	lastPrune time.Time
	claim     *configClaim // set by ClaimConfig
	lease     *lease       // set by TakeLease
	peer      *peer        // set by Serve
	pollers   pollers      // Polls' advisory locks

	chCommit, chCancel string // NOTIFY channels of this ledger (its schema)

	reaped atomic.Pointer[func(dead []string)] // see OnReaped
}

// Open connects to the database named by dsn (a URL, a keyword DSN, or a
// keyword DSN whose host is a Unix socket directory), applies pending
// migrations and returns the store. The role needs to own the database (or
// its schema), not to be a superuser.
func Open(ctx context.Context, dsn string, opts Options) (*Store, error) {
	opts = opts.withDefaults()
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("open ledger: the PostgreSQL DSN is not valid: %s", scrubDSNError(err))
	}
	cfg.MaxConns = opts.MaxConns
	cfg.ConnConfig.RuntimeParams["application_name"] = "quotagate " + opts.Instance
	// READ COMMITTED is the default; set it so a database default cannot
	// change what the package doc argues.
	cfg.ConnConfig.RuntimeParams["default_transaction_isolation"] = "read committed"
	cfg.ConnConfig.RuntimeParams["timezone"] = "UTC"
	where := describe(cfg.ConnConfig)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open ledger %s: %w", where, err)
	}
	if err := reach(ctx, pool, where, opts); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open ledger %s: %w", where, err)
	}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open ledger %s: %w", where, err)
	}
	var schema string
	if err := pool.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open ledger %s: %w", where, err)
	}
	s := &Store{opts: opts, pool: pool, dsn: where, hooks: ledger.NewHookQueue(),
		chCommit: "quotagate_commit_" + schema, chCancel: "quotagate_cancel_" + schema}
	s.Transitions.Apply = s.transition
	s.Reads = ledgersql.Reads{Q: reader{pool}, NoRows: pgx.ErrNoRows, InPeriods: s.balances,
		OutboxPending: outboxPending, RunTable: ledgersql.RunTable{Columns: runColumns, Scan: scanRun, Seq: "seq"}}
	return s, nil
}

// reader runs ledgersql's reads, their arguments numbered: on the pool, or
// inside a transaction.
type reader struct {
	pool interface {
		Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
		QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	}
}

func (r reader) Query(ctx context.Context, query string, args ...any) (ledgersql.Rows, func(), error) {
	rows, err := r.pool.Query(ctx, ledgersql.Dollar(query), args...)
	if err != nil {
		return nil, nil, err
	}
	return rows, rows.Close, nil
}

func (r reader) QueryRow(ctx context.Context, query string, args ...any) ledgersql.Scanner {
	return r.pool.QueryRow(ctx, ledgersql.Dollar(query), args...)
}

// describe names the database without its password.
func describe(c *pgx.ConnConfig) string {
	return fmt.Sprintf("postgres %s@%s:%d/%s", c.User, c.Host, c.Port, c.Database)
}

// scrubDSNError keeps a parse error from echoing a password.
func scrubDSNError(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, "cannot parse `"); i >= 0 {
		if j := strings.Index(msg[i+len("cannot parse `"):], "`"); j >= 0 {
			msg = msg[:i] + "cannot parse the DSN" + msg[i+len("cannot parse `")+j+1:]
		}
	}
	return msg
}

// Instance is the name this store writes on the runs it admits.
func (s *Store) Instance() string { return s.opts.Instance }

// Where names the database (role, host, port, database; no password).
func (s *Store) Where() string { return s.dsn }

// Close closes the pool; further calls fail.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed || s.closing {
		s.mu.Unlock()
		return nil
	}
	s.closing = true
	s.mu.Unlock()
	s.stopPeer()
	s.stopPolling()
	s.dropLease()
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.hooks.Close()
	s.pool.Close()
	return nil
}

// migrationLock is the advisory lock that serialises migrations of gateways
// starting at once against one database.
const migrationLock = 0x71756f7461 // "quota"

// migrate applies the embedded migrations in name order, each in its own
// transaction with its schema_version row, under an advisory lock.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, int64(migrationLock)); err != nil {
		return fmt.Errorf("migrate: lock: %w", err)
	}
	defer conn.Exec(context.Background(), `SELECT pg_advisory_unlock($1)`, int64(migrationLock))
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_version (
		version    text PRIMARY KEY,
		applied_at bigint NOT NULL
	)`); err != nil {
		return fmt.Errorf("create schema_version: %w", err)
	}
	return ledgersql.Migrate(ctx, migrationFS, func(apply func(ledgersql.MigrationTx) error) error {
		return pgx.BeginFunc(ctx, conn.Conn(), func(tx pgx.Tx) error { return apply(migrationTx{tx}) })
	})
}

// migrationTx is a migration's transaction as ledgersql.Migrate runs it.
type migrationTx struct{ tx pgx.Tx }

func (t migrationTx) QueryRow(ctx context.Context, query string, args ...any) ledgersql.Scanner {
	return t.tx.QueryRow(ctx, ledgersql.Dollar(query), args...)
}

func (t migrationTx) Exec(ctx context.Context, query string, args ...any) error {
	if len(args) > 0 {
		query = ledgersql.Dollar(query) // a script has no arguments: it runs as written
	}
	_, err := t.tx.Exec(ctx, query, args...)
	return err
}

// wtx is one write transaction as a change sees it, with its clock.
type wtx struct {
	pgx.Tx
	now     time.Time
	changes []ledger.Change              // one per audit row, for the commit hook and the other gateways
	later   pgx.Batch                    // statements whose results nothing waits for, sent in one round trip before the commit
	columns map[string]map[string]string // a table's column types, once read (restoring an archive)
}

// queue adds a statement whose result the change does not need (an audit
// row, a quota-day move): it is sent with the others in one round trip
// before the commit, and its failure fails the transaction.
func (w *wtx) queue(sql string, args ...any) *pgx.QueuedQuery { return w.later.Queue(sql, args...) }

func (w *wtx) flush(ctx context.Context) error {
	if w.later.Len() == 0 {
		return nil
	}
	err := w.SendBatch(ctx, &w.later).Close()
	w.later = pgx.Batch{}
	return err
}

var errClosed = ledger.Errorf(ledger.CodeInternal, "the ledger is closed")

// write runs fn in one READ COMMITTED transaction and commits it. A
// deadlock or serialization failure (neither expected with the fixed lock
// order, but PostgreSQL may report either) is retried a few times. Once
// begun, the transaction runs to its end even if ctx ends: the caller then
// learns what the database holds.
func (s *Store) write(ctx context.Context, fn func(w *wtx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return errClosed
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.WriteTimeout)
	defer cancel()
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		var done chan struct{}
		done, err = s.writeOnce(wctx, fn, !ledger.InHook(ctx))
		if done != nil {
			<-done // the caller hears of its write once the hook has seen it
		}
		if !retryable(err) {
			break
		}
	}
	return err
}

// writeOnce runs fn in one transaction: its deferred statements, then the
// NOTIFY of its changes to the other gateways, then COMMIT; and queues its
// changes for the hook in commit order. done, when not nil, is closed once
// the hook saw them.
func (s *Store) writeOnce(ctx context.Context, fn func(w *wtx) error, wait bool) (done chan struct{}, err error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(context.Background()) // a no-op once committed
	w := &wtx{Tx: tx, now: s.opts.Now().UTC()}
	if err := fn(w); err != nil {
		return nil, err
	}
	if err := w.flush(ctx); err != nil { // fills the audit rows' seqs
		return nil, err
	}
	if err := s.notifyChanges(ctx, w); err != nil {
		return nil, err
	}
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	if err := tx.Commit(ctx); err != nil {
		return nil, err
	}
	if len(w.changes) == 0 {
		return nil, nil
	}
	var then func()
	if wait {
		done = make(chan struct{})
		then = func() { close(done) }
	}
	s.hooks.Push(w.changes, then)
	return done, nil
}

func retryable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "40001" || pe.Code == "40P01"
	}
	return false
}

// isRunsKey reports a duplicate run id (SQLSTATE 23505 on runs' primary key).
func isRunsKey(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505" && pe.ConstraintName == "runs_pkey"
}

func nanos(t time.Time) int64 { return t.UnixNano() }

func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }

var _ ledger.Store = (*Store)(nil)
