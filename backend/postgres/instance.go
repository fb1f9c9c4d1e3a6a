package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
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
	l := &lease{opts: o, token: hex.EncodeToString(b[:]), done: make(chan struct{})}
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
// expired; otherwise it reports until when a twin holds it.
func (s *Store) claimLease(ctx context.Context, l *lease) (bool, time.Time, error) {
	var token string
	var expires int64
	err := s.pool.QueryRow(ctx, `INSERT INTO instances (name, addr, token, started_at, heartbeat_at, expires_at)
		VALUES ($1, $2, $3, `+dbNow+`, `+dbNow+`, `+dbNow+` + $4)
		ON CONFLICT (name) DO UPDATE SET addr = excluded.addr, token = excluded.token, started_at = excluded.started_at,
			heartbeat_at = excluded.heartbeat_at, expires_at = excluded.expires_at
			WHERE instances.expires_at < `+dbNow+` OR instances.token = excluded.token
		RETURNING token, expires_at`, s.opts.Instance, l.opts.Addr, l.token, l.opts.Expiry.Nanoseconds()).Scan(&token, &expires)
	if errors.Is(err, pgx.ErrNoRows) {
		if err := s.pool.QueryRow(ctx, `SELECT expires_at FROM instances WHERE name = $1`, s.opts.Instance).Scan(&expires); err != nil {
			return false, time.Time{}, err
		}
		return false, fromNanos(expires), nil
	}
	if err != nil {
		return false, time.Time{}, err
	}
	return token == l.token, fromNanos(expires), nil
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

// beat renews the lease; a lease found taken (this instance was silent past
// its expiry and was judged dead) is taken again and reported.
func (s *Store) beat(ctx context.Context, l *lease) error {
	tag, err := s.pool.Exec(ctx, `UPDATE instances SET heartbeat_at = `+dbNow+`, expires_at = `+dbNow+` + $1
		WHERE name = $2 AND token = $3`, l.opts.Expiry.Nanoseconds(), s.opts.Instance, l.token)
	if err != nil {
		return fmt.Errorf("renew lease: %w", err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	l.opts.Logger.Error("this instance's lease had expired: another instance ended its open runs interrupted (holds kept)",
		"instance", s.opts.Instance)
	if _, _, err := s.claimLease(ctx, l); err != nil {
		return fmt.Errorf("retake lease: %w", err)
	}
	return nil
}

// ReapExpired ends, interrupted with their holds intact, the open runs of
// instances whose lease expired (and of instances that hold no lease at
// all, such as one whose reaper died half-way): their concurrency slots are
// freed, their money stays held until trusted usage or a reconcile. One
// instance wins each dead lease (the DELETE … RETURNING); the runs' own
// state checks make a second reaper harmless. It returns how many runs it
// ended.
func (s *Store) ReapExpired(ctx context.Context) (int, error) {
	rows, err := s.pool.Query(ctx, `DELETE FROM instances WHERE expires_at < `+dbNow+` AND name <> $1 RETURNING name`, s.opts.Instance)
	if err != nil {
		return 0, fmt.Errorf("reap expired leases: %w", err)
	}
	dead, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return 0, fmt.Errorf("reap expired leases: %w", err)
	}
	rows, err = s.pool.Query(ctx, `SELECT DISTINCT instance FROM runs WHERE status IN ('queued', 'active')
		AND instance <> $1 AND instance NOT IN (SELECT name FROM instances)`, s.opts.Instance)
	if err != nil {
		return 0, fmt.Errorf("find runs of dead instances: %w", err)
	}
	orphans, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return 0, fmt.Errorf("find runs of dead instances: %w", err)
	}
	n := 0
	for _, name := range orphans {
		k, err := s.interruptOpen(ctx, name, ledger.System("lease-expiry"),
			"the lease of instance "+name+" expired while the run was ")
		n += k
		if err != nil {
			return n, err
		}
	}
	if len(dead)+n > 0 {
		s.leaseLogger().Warn("ended the open runs of dead instances interrupted; their holds stay until reconciled",
			"dead", dead, "runs", n)
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
