package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quotagate/quotagate/backend/internal/ledgersql"
	"github.com/quotagate/quotagate/backend/ledger"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// Defaults for Options.
const (
	DefaultBusyTimeout = 5 * time.Second
	DefaultMaxBatch    = 256
	DefaultReadConns   = 4
)

// Options tunes a Store. The zero value is the production setting.
type Options struct {
	// BusyTimeout bounds how long a connection waits for another process's
	// write lock (a second quotagate, `quotagate verify`).
	BusyTimeout time.Duration
	// MaxBatch bounds how many queued writes share one transaction (and one
	// fsync). 1 means one transaction per write: the baseline of the
	// benchmarks, not a production setting.
	MaxBatch int
	// ReadConns is the size of the read-only pool.
	ReadConns int
	// Synchronous is the SQLite synchronous level; "" means FULL, the only
	// level under which an acknowledged write survives power loss in WAL mode.
	// Tests that do not test durability may pass "OFF" to go faster.
	Synchronous string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// ArchivePartRuns is how many runs one transaction of an archive
	// moves out of the ledger; 0 means 2,000.
	ArchivePartRuns int
	// AuditTextBatch is how many audit rows the writer indexes for text
	// search in one transaction of its own, once that many wait or the
	// writer is idle; 0 means DefaultAuditTextBatch. Below zero the writer
	// never indexes them (tests: the rows are then searched one by one).
	AuditTextBatch int
}

// withDefaults sets the options left zero (and the figures below zero)
// to the package's defaults.
func (o Options) withDefaults() Options {
	o.BusyTimeout = positiveOr(o.BusyTimeout, DefaultBusyTimeout)
	o.MaxBatch = positiveOr(o.MaxBatch, DefaultMaxBatch)
	o.ReadConns = positiveOr(o.ReadConns, DefaultReadConns)
	o.ArchivePartRuns = positiveOr(o.ArchivePartRuns, archivePartRuns)
	if o.AuditTextBatch == 0 {
		o.AuditTextBatch = DefaultAuditTextBatch
	}
	o.Synchronous = cmp.Or(o.Synchronous, "FULL")
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

func positiveOr[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// Store is the SQLite ledger. All writes go through one writer goroutine
// that groups whatever is queued into one IMMEDIATE transaction (group
// commit); reads use a separate query-only pool and see committed state only.
type Store struct {
	ledger.Transitions // Start, Settle, KeepHold, ReleaseHold, Reconcile by s.transition
	ledgersql.Reads    // Tenants, Balance(s), quota usage, Snapshots, SpendHours, OutboxStatus, SchemaVersions

	path string
	opts Options
	wdb  *sql.DB // one connection, used only by the writer goroutine
	rdb  *sql.DB // query-only pool

	mu     sync.RWMutex // guards closed and sends on ops
	closed bool
	ops    chan *writeOp
	done   chan struct{} // closed when the writer has drained ops

	hooks *ledger.HookQueue // to the commit hook, in commit order

	batches   atomic.Int64
	writes    atomic.Int64
	lastPrune time.Time    // writer goroutine only
	stmts     stmtCache    // writer goroutine only
	books     *books       // writer goroutine only
	textLag   atomic.Int64 // written by the writer goroutine only: about how many audit rows the text index lags

	rmu   sync.Mutex
	reads map[string]*sql.Stmt // prepared on the read pool
}

func (s *Store) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := s.read(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// reader runs ledgersql's reads: on the read pool (a *Store), or inside
// the writer's transaction (a *wtx).
type reader struct {
	s interface {
		query(ctx context.Context, query string, args ...any) (*sql.Rows, error)
		queryRow(ctx context.Context, query string, args ...any) *sql.Row
	}
}

func (r reader) Query(ctx context.Context, query string, args ...any) (ledgersql.Rows, func(), error) {
	rows, err := r.s.query(ctx, query, args...)
	if err != nil {
		return nil, nil, err
	}
	return rows, func() { rows.Close() }, nil
}

func (r reader) QueryRow(ctx context.Context, query string, args ...any) ledgersql.Scanner {
	return r.s.queryRow(ctx, query, args...)
}

func (s *Store) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := s.read(ctx, query)
	if err != nil {
		return s.rdb.QueryRowContext(ctx, query, args...) // Scan reports the same error
	}
	return st.QueryRowContext(ctx, args...)
}

// read returns query prepared on the read pool (each pooled connection
// prepares it once).
func (s *Store) read(ctx context.Context, query string) (*sql.Stmt, error) {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	if st, ok := s.reads[query]; ok {
		return st, nil
	}
	st, err := s.rdb.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	s.reads[query] = st
	return st, nil
}

// Open opens (creating if needed) the ledger at path, applies pending
// migrations and starts the writer.
func Open(path string, opts Options) (*Store, error) {
	opts = opts.withDefaults()
	switch strings.ToUpper(opts.Synchronous) {
	case "OFF", "NORMAL", "FULL", "EXTRA":
	default:
		return nil, fmt.Errorf("open ledger %s: unknown synchronous level %q", path, opts.Synchronous)
	}
	wdb, err := sql.Open("sqlite", dsn(path, opts, false))
	if err != nil {
		return nil, fmt.Errorf("open ledger %s: %w", path, err)
	}
	wdb.SetMaxOpenConns(1)
	wdb.SetMaxIdleConns(1)
	wdb.SetConnMaxLifetime(0)
	wdb.SetConnMaxIdleTime(0)
	if err := migrate(context.Background(), wdb); err != nil {
		wdb.Close()
		return nil, fmt.Errorf("open ledger %s: %w", path, err)
	}
	rdb, err := sql.Open("sqlite", dsn(path, opts, true))
	if err != nil {
		wdb.Close()
		return nil, fmt.Errorf("open ledger %s: %w", path, err)
	}
	rdb.SetMaxOpenConns(opts.ReadConns)
	rdb.SetMaxIdleConns(opts.ReadConns)
	s := &Store{
		path:  path,
		opts:  opts,
		wdb:   wdb,
		rdb:   rdb,
		ops:   make(chan *writeOp, 4*opts.MaxBatch),
		done:  make(chan struct{}),
		stmts: stmtCache{ready: map[string]*sql.Stmt{}, wanted: map[string]bool{}},
		books: newBooks(),
		reads: map[string]*sql.Stmt{},

		hooks: ledger.NewHookQueue(),
	}
	s.Transitions.Apply = s.transition
	s.Reads = ledgersql.Reads{Q: reader{s}, NoRows: sql.ErrNoRows, InPeriods: s.balances,
		OutboxPending: outboxPending, RunTable: ledgersql.RunTable{Columns: runColumns, Scan: scanRun, Seq: "rowid"}}
	go s.writer()
	return s, nil
}

// dsn sets every pragma per connection: database/sql opens connections
// lazily, so a single Exec of PRAGMA would configure only one of them.
func dsn(path string, opts Options, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout("+strconv.FormatInt(opts.BusyTimeout.Milliseconds(), 10)+")")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous("+strings.ToUpper(opts.Synchronous)+")")
	q.Add("_pragma", "foreign_keys(1)")
	// Statement and savepoint journals in memory, not in temp files: a
	// profile of the gateway under load had ~10 % of the gateway's CPU writing them to disk. They
	// are not needed after a crash (the WAL is the durable record).
	q.Add("_pragma", "temp_store(MEMORY)")
	if runtime.GOOS == "darwin" {
		// macOS's fsync does not flush the drive's cache; F_FULLFSYNC does.
		q.Add("_pragma", "fullfsync(1)")
		q.Add("_pragma", "checkpoint_fullfsync(1)")
	}
	if readOnly {
		q.Add("_pragma", "query_only(1)")
	} else {
		// Take the write lock at BEGIN: a deferred transaction that reads
		// first cannot wait for the lock when it later writes (SQLITE_BUSY).
		q.Set("_txlock", "immediate")
	}
	u := url.URL{Path: path}
	return "file:" + u.EscapedPath() + "?" + q.Encode()
}

// OnCommit sets the commit hook (ledger.Store's contract). It is called on
// its own goroutine, one committed transaction at a time.
func (s *Store) OnCommit(hook ledger.CommitHook) {
	s.hooks.SetHook(hook)
}

// Path returns the database file's path.
func (s *Store) Path() string { return s.path }

// Close drains queued writes, stops the writer and closes the database.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.ops)
	s.mu.Unlock()
	<-s.done
	s.hooks.Close()
	s.rmu.Lock()
	for _, st := range s.reads {
		st.Close()
	}
	s.rmu.Unlock()
	err := errors.Join(s.rdb.Close(), s.wdb.Close())
	if err != nil {
		return fmt.Errorf("close ledger %s: %w", s.path, err)
	}
	return nil
}

// migrate applies the embedded migrations in name order, each in its own
// transaction together with its schema_version row.
func migrate(ctx context.Context, db *sql.DB) error {
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (
		version    TEXT PRIMARY KEY,
		applied_at INTEGER NOT NULL
	) STRICT`); err != nil {
		return fmt.Errorf("create schema_version: %w", err)
	}
	return ledgersql.Migrate(ctx, migrationFS, func(apply func(ledgersql.MigrationTx) error) error {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if err := apply(migrationTx{tx}); err != nil {
			return err
		}
		return tx.Commit()
	})
}

// migrationTx is a migration's transaction as ledgersql.Migrate runs it.
type migrationTx struct{ tx *sql.Tx }

func (t migrationTx) QueryRow(ctx context.Context, query string, args ...any) ledgersql.Scanner {
	return t.tx.QueryRowContext(ctx, query, args...)
}

func (t migrationTx) Exec(ctx context.Context, query string, args ...any) error {
	_, err := t.tx.ExecContext(ctx, query, args...)
	return err
}

func nanos(t time.Time) int64 { return t.UnixNano() }

func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }

var _ ledger.Store = (*Store)(nil)
