package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// reach waits until the database answers, trying again with backoff for
// up to opts.ConnectWait while it is unreachable, with one log line per
// failed attempt. A database that answers with a refusal — a wrong
// password, an unknown role or database — is not waited for: the error says
// which, and never carries the password.
func reach(ctx context.Context, pool *pgxpool.Pool, where string, opts Options) error {
	deadline := time.Now().Add(max(opts.ConnectWait, 0))
	wait := 250 * time.Millisecond
	for attempt := 1; ; attempt++ {
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := pool.Ping(pctx)
		cancel()
		if err == nil {
			return nil
		}
		if refused := refusal(err); refused != "" {
			return errors.New(refused)
		}
		left := time.Until(deadline)
		if !Unreachable(err) || left <= 0 || ctx.Err() != nil {
			return fmt.Errorf("cannot reach PostgreSQL (attempt %d, gave up after %s): %w", attempt, opts.ConnectWait.Round(time.Second), err)
		}
		wait = min(wait, left)
		opts.Logger.Warn("cannot reach the PostgreSQL ledger yet; trying again", "db", where, "attempt", attempt,
			"next_in", wait.Round(time.Millisecond), "gives_up_at", deadline.Format(time.TimeOnly), "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait): // backoff between attempts to reach a database that is away
		}
		wait = min(2*wait, 4*time.Second)
	}
}

// refusal explains a database that answered but refused this gateway's
// credentials or names, or "" for any other error.
func refusal(err error) string {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return ""
	}
	switch pe.Code {
	case "28P01":
		return "PostgreSQL refused the password of the DSN's role (password authentication failed; check the DSN's password — it is not printed)"
	case "28000":
		return "PostgreSQL refused the DSN's role (no pg_hba.conf entry or role not allowed to log in): " + pe.Message
	case "3D000":
		return "PostgreSQL has no such database: " + pe.Message
	}
	return ""
}

// Unreachable reports an error of a database that is away — refused or
// dropped connections, a server starting or shutting down, a network
// timeout — as opposed to one that answered with an error. The gateway then
// answers 503 ledger_unavailable and the dashboard says the ledger is
// unreachable.
func Unreachable(err error) bool {
	if err == nil {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "57P01", "57P02", "57P03", "08000", "08003", "08006", "08001", "08004":
			return true // admin shutdown, crash shutdown, cannot connect now, connection exceptions
		}
		return false
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) || pgconn.SafeToRetry(err) || pgconn.Timeout(err) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, context.DeadlineExceeded)
}

// Ping reports whether the database answers now.
func (s *Store) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return s.pool.Ping(ctx)
}
