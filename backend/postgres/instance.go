package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quotagate/quotagate/backend/ledger"
)

// dbNow is the database's clock in Unix nanoseconds: leases compare times
// written by different machines, so they all use the database's.
const dbNow = `(extract(epoch from clock_timestamp()) * 1e9)::bigint`

// Instance is one gateway's lease, as Instances lists them.
type Instance struct {
	Name        string    `json:"name"`
	Addr        string    `json:"addr"`
	StartedAt   time.Time `json:"started_at"`
	HeartbeatAt time.Time `json:"heartbeat_at"`
	ExpiresAt   time.Time `json:"expires_at"`
	Live        bool      `json:"live"`
}

// LeaseOptions tune TakeLease.
type LeaseOptions struct {
	Addr      string        // where this gateway answers, shown to the others
	Heartbeat time.Duration // 0 or less: ledger.DefaultHeartbeat
	Expiry    time.Duration // 0 or less: ledger.DefaultLeaseExpiry
	Logger    *slog.Logger
}

type lease struct {
	opts  LeaseOptions
	token string
	stop  context.CancelFunc
	done  chan struct{}
	kick  chan struct{} // an admission refused for want of a lease asks for a beat now

	mu sync.Mutex
	// epoch is the epoch of the lease row this gateway holds (0: none);
	// validTill is, on this machine's clock, the start of the last renewal
	// that succeeded plus the expiry: the database's expires_at is never
	// earlier, so this gateway stops admitting before any other may judge
	// it dead.
	epoch     int64
	validTill time.Time
}

// held returns the epoch this gateway may admit under, 0 when its lease
// lapsed (or was taken) and is not yet renewed.
func (l *lease) held() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.epoch == 0 || !time.Now().Before(l.validTill) {
		return 0
	}
	return l.epoch
}

func (l *lease) renewed(epoch int64, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.epoch, l.validTill = epoch, at.Add(l.opts.Expiry)
}

func (l *lease) lost() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.epoch = 0
}

// TakeLease makes this store's instance a live member of the shared
// ledger: it takes the instance's lease row (waiting up to one expiry for
// the lease of a previous life that died), then renews it every heartbeat
// and, on each beat, ends the open runs of instances whose lease expired.
// It must come before RecoverInterrupted: while a twin with the same
// instance name is alive, TakeLease fails, so a gateway never recovers a
// live twin's runs. Close gives the lease up.
func (s *Store) TakeLease(ctx context.Context, o LeaseOptions) error {
	if o.Heartbeat <= 0 {
		o.Heartbeat = ledger.DefaultHeartbeat
	}
	if o.Expiry <= 0 {
		o.Expiry = ledger.DefaultLeaseExpiry
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	var b [12]byte
	rand.Read(b[:])
	l := &lease{opts: o, token: hex.EncodeToString(b[:]), done: make(chan struct{}), kick: make(chan struct{}, 1)}
	deadline := time.Now().Add(o.Expiry + o.Heartbeat)
	for {
		ok, until, err := s.claimLease(ctx, l)
		if err != nil {
			return fmt.Errorf("take the lease of instance %s: %w", s.opts.Instance, err)
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("take the lease of instance %s: another gateway with this instance name is running (its lease is renewed, now until %s); give each gateway its own ledger.instance",
				s.opts.Instance, until.Format(time.RFC3339))
		}
		o.Logger.Warn("waiting for the lease of a previous life of this instance to expire", "instance", s.opts.Instance, "until", until)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(o.Heartbeat / 2):
		}
	}
	lctx, stop := context.WithCancel(context.Background())
	l.stop = stop
	s.mu.Lock()
	s.lease = l
	s.mu.Unlock()
	go s.heartbeat(lctx, l)
	return nil
}

// claimLease inserts or takes over the instance's row when it is free or
// expired; otherwise it reports until when a twin holds it. A row taken
// over from another incarnation gets a fresh epoch; this incarnation's own
// row, found expired but not yet reaped, keeps its epoch (nobody ended its
// runs: the reaper deletes the row first).
func (s *Store) claimLease(ctx context.Context, l *lease) (bool, time.Time, error) {
	var token string
	var expires, epoch int64
	at := time.Now()
	err := s.pool.QueryRow(ctx, `INSERT INTO instances (name, addr, token, started_at, heartbeat_at, expires_at)
		VALUES ($1, $2, $3, `+dbNow+`, `+dbNow+`, `+dbNow+` + $4)
		ON CONFLICT (name) DO UPDATE SET addr = excluded.addr, token = excluded.token, started_at = excluded.started_at,
			heartbeat_at = excluded.heartbeat_at, expires_at = excluded.expires_at,
			epoch = CASE WHEN instances.token = excluded.token THEN instances.epoch ELSE nextval('lease_epochs') END
			WHERE instances.expires_at < `+dbNow+` OR instances.token = excluded.token
		RETURNING token, expires_at, epoch`, s.opts.Instance, l.opts.Addr, l.token, l.opts.Expiry.Nanoseconds()).Scan(&token, &expires, &epoch)
	if errors.Is(err, pgx.ErrNoRows) {
		if err := s.pool.QueryRow(ctx, `SELECT expires_at FROM instances WHERE name = $1`, s.opts.Instance).Scan(&expires); err != nil {
			return false, time.Time{}, err
		}
		return false, fromNanos(expires), nil
	}
	if err != nil {
		return false, time.Time{}, err
	}
	if token != l.token {
		return false, fromNanos(expires), nil
	}
	l.renewed(epoch, at)
	return true, fromNanos(expires), nil
}

func (s *Store) heartbeat(ctx context.Context, l *lease) {
	defer close(l.done)
	t := time.NewTicker(l.opts.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-l.kick:
		}
		if err := s.beat(ctx, l); err != nil && ctx.Err() == nil {
			l.opts.Logger.Error("lease heartbeat", "instance", s.opts.Instance, "err", err)
		}
		if n, err := s.ReapExpired(ctx); err != nil && ctx.Err() == nil {
			l.opts.Logger.Error("ending the runs of dead instances", "err", err)
		} else if n > 0 {
			l.opts.Logger.Warn("ended the open runs of instances whose lease expired, interrupted with their holds kept", "runs", n)
		}
		if err := s.pruneUsageMinutes(ctx); err != nil && ctx.Err() == nil {
			l.opts.Logger.Warn("prune usage minutes", "err", err)
		}
	}
}

// beat renews the lease of this gateway's epoch. A lease found taken (this
// instance was silent past its expiry and another gateway judged it dead,
// ending its runs) is registered again under a fresh epoch; the runs of
// the old one stay fenced.
func (s *Store) beat(ctx context.Context, l *lease) error {
	l.mu.Lock()
	epoch := l.epoch
	l.mu.Unlock()
	at := time.Now()
	if epoch != 0 {
		tag, err := s.pool.Exec(ctx, `UPDATE instances SET heartbeat_at = `+dbNow+`, expires_at = `+dbNow+` + $1
			WHERE name = $2 AND epoch = $3`, l.opts.Expiry.Nanoseconds(), s.opts.Instance, epoch)
		if err != nil {
			return fmt.Errorf("renew lease: %w", err)
		}
		if tag.RowsAffected() == 1 {
			l.renewed(epoch, at)
			return nil
		}
		l.lost()
		l.opts.Logger.Error("this instance's lease had expired: another instance ended its open runs interrupted (holds kept); registering again under a fresh lease epoch",
			"instance", s.opts.Instance, "epoch", epoch)
	}
	ok, until, err := s.claimLease(ctx, l)
	if err != nil {
		return fmt.Errorf("retake lease: %w", err)
	}
	if !ok {
		return fmt.Errorf("retake lease: another gateway holds the lease of instance %s until %s", s.opts.Instance, until.Format(time.RFC3339))
	}
	l.mu.Lock()
	fresh := l.epoch
	l.mu.Unlock()
	if fresh != epoch {
		l.opts.Logger.Warn("admitting again under a fresh lease", "instance", s.opts.Instance, "epoch", fresh)
	}
	return nil
}

// admitEpoch is the lease epoch an admission is made under: 0 when this
// store holds no lease (a single gateway, a tool), else the live epoch. A
// gateway whose lease lapsed refuses (and asks for a beat at once): the
// others may be ending its runs.
func (s *Store) admitEpoch() (int64, error) {
	s.mu.Lock()
	l := s.lease
	s.mu.Unlock()
	if l == nil {
		return 0, nil
	}
	if e := l.held(); e != 0 {
		return e, nil
	}
	select {
	case l.kick <- struct{}{}:
	default:
	}
	return 0, errLeaseLapsed(s.opts.Instance, l.opts.Heartbeat)
}

// errLeaseLapsed refuses an admission of a gateway that does not hold a
// live lease: nothing was reserved or sent.
func errLeaseLapsed(instance string, retry time.Duration) error {
	return &ledger.Error{Code: ledger.CodeLedgerUnavailable, RetryAfter: max(retry, time.Second),
		Message: "quotagate instance " + instance + " could not renew its lease on the shared ledger and admits no call until it holds a fresh one; nothing was charged or sent — try again shortly"}
}

// ActorLeaseExpiry ends the open runs of a gateway whose lease expired.
var ActorLeaseExpiry = ledger.System("lease-expiry")

// ReapExpired ends, interrupted with their holds intact, the open runs
// whose lease is gone: instances whose lease expired lose their row (one
// gateway wins each, the DELETE … RETURNING), and a run admitted under an
// epoch no row holds any more is an orphan — as is a run from before
// epochs whose instance holds no lease, such as one whose reaper died
// half-way. Their concurrency slots are freed, their money stays held
// until trusted usage or a reconcile; the runs' own state checks make a
// second reaper harmless. It returns how many runs it ended.
func (s *Store) ReapExpired(ctx context.Context) (int, error) {
	rows, err := s.pool.Query(ctx, `DELETE FROM instances WHERE expires_at < `+dbNow+` AND name <> $1 RETURNING name`, s.opts.Instance)
	if err != nil {
		return 0, fmt.Errorf("reap expired leases: %w", err)
	}
	dead, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return 0, fmt.Errorf("reap expired leases: %w", err)
	}
	rows, err = s.pool.Query(ctx, `SELECT id, instance FROM runs WHERE status IN ('queued', 'active') AND (
			(lease_epoch = 0 AND instance <> $1 AND instance NOT IN (SELECT name FROM instances))
			OR (lease_epoch <> 0 AND lease_epoch NOT IN (SELECT epoch FROM instances)))
		ORDER BY created_at, id`, s.opts.Instance)
	if err != nil {
		return 0, fmt.Errorf("find runs of dead instances: %w", err)
	}
	orphans, err := pgx.CollectRows(rows, pgx.RowToStructByPos[orphan])
	if err != nil {
		return 0, fmt.Errorf("find runs of dead instances: %w", err)
	}
	n, err := s.endOrphans(ctx, orphans)
	if len(dead)+n > 0 {
		s.leaseLogger().Warn("ended the open runs of dead instances interrupted; their holds stay until reconciled",
			"dead", dead, "runs", n)
	}
	if fn := s.reaped.Load(); fn != nil && len(dead) > 0 {
		(*fn)(dead)
	}
	return n, err
}

// OnReaped sets what this gateway is told of the instances its reaper
// found dead, after it ended their open runs: each dead instance is found
// by one gateway, which takes over what the dead one left undone (its held
// runs' lookups). fn must not block.
func (s *Store) OnReaped(fn func(dead []string)) { s.reaped.Store(&fn) }

// orphan is an open run whose lease is gone.
type orphan struct {
	ID       string
	Instance string
}

func (s *Store) endOrphans(ctx context.Context, orphans []orphan) (int, error) {
	n := 0
	for _, o := range orphans {
		rule := ledger.RecoverRule("the lease of instance " + o.Instance + " expired while the run was ")
		rule.Op = "interrupt"
		_, changed, err := s.transit(ctx, ledger.RunID(o.ID), ActorLeaseExpiry, rule, false)
		if err != nil {
			return n, err
		}
		if changed {
			n++
		}
	}
	return n, nil
}

func (s *Store) leaseLogger() *slog.Logger {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lease != nil {
		return s.lease.opts.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// dropLease stops the heartbeat and deletes this incarnation's lease row:
// a clean exit leaves no open run (the gateway ended them) and nothing to reap.
func (s *Store) dropLease() {
	s.mu.Lock()
	l := s.lease
	s.lease = nil
	s.mu.Unlock()
	if l == nil {
		return
	}
	l.stop()
	<-l.done
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _ = s.pool.Exec(ctx, `DELETE FROM instances WHERE name = $1 AND token = $2`, s.opts.Instance, l.token)
}

// Instances lists the gateways sharing the ledger, by name.
func (s *Store) Instances(ctx context.Context) ([]Instance, error) {
	rows, err := s.pool.Query(ctx, `SELECT name, addr, started_at, heartbeat_at, expires_at, expires_at >= `+dbNow+`
		FROM instances ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list instances: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Instance, error) {
		var in Instance
		var st, hb, ex int64
		err := r.Scan(&in.Name, &in.Addr, &st, &hb, &ex, &in.Live)
		in.StartedAt, in.HeartbeatAt, in.ExpiresAt = fromNanos(st), fromNanos(hb), fromNanos(ex)
		return in, err
	})
	if err != nil {
		return nil, fmt.Errorf("list instances: %w", err)
	}
	return out, nil
}

// RunInstance names the instance that admitted (and relays) run id.
func (s *Store) RunInstance(ctx context.Context, id ledger.RunID) (string, error) {
	var name string
	err := s.pool.QueryRow(ctx, `SELECT instance FROM runs WHERE id = $1`, string(id)).Scan(&name)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", ledger.Errorf(ledger.CodeRunNotFound, "run %s not found", id)
	}
	if err != nil {
		return "", fmt.Errorf("read run %s: %w", id, err)
	}
	return name, nil
}
