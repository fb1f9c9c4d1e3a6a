package postgres

import (
	"context"
	"sync"

	"github.com/jackc/pgx/v5"
)

// pollers holds the session advisory locks of Polls on one connection of
// its own: a lock lives as long as that connection, so a gateway that dies
// gives up its polling when PostgreSQL drops its connection.
type pollers struct {
	mu   sync.Mutex
	conn *pgx.Conn
	held map[string]bool
}

// Polls reports whether this gateway is the one that polls name (the quota
// guard asks it per guarded model): it takes pg_try_advisory_lock on name
// and keeps it; another gateway asking for the same name gets false until
// this one's connection ends. A database error answers false: nobody polls
// twice, at worst nobody polls until the next ask.
func (s *Store) Polls(ctx context.Context, name string) bool {
	p := &s.pollers
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conn != nil && p.conn.Ping(ctx) != nil {
		p.conn.Close(context.Background()) // its locks are gone with it
		p.conn = nil
	}
	if p.conn == nil {
		conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
		if err != nil {
			return false
		}
		p.conn, p.held = conn, map[string]bool{}
	}
	if p.held[name] {
		return true
	}
	var ok bool
	if err := p.conn.QueryRow(ctx, `SELECT pg_try_advisory_lock(hashtextextended($1, 0))`, "quotagate "+name).Scan(&ok); err != nil {
		return false
	}
	p.held[name] = ok
	return ok
}

func (s *Store) stopPolling() {
	p := &s.pollers
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conn != nil {
		// Released at once for the next asker, not when the server notices
		// the connection is gone.
		_, _ = p.conn.Exec(context.Background(), `SELECT pg_advisory_unlock_all()`)
		p.conn.Close(context.Background())
		p.conn = nil
	}
}
