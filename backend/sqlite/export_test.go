package sqlite

import (
	"context"

	"github.com/quotagate/quotagate/backend/ledger"
)

// BlockWriter queues a write that holds the writer until release is called,
// so that a test can line up a batch. It returns once the writer holds it.
func (s *Store) BlockWriter() (release func()) {
	held, free := make(chan struct{}), make(chan struct{})
	go s.write(context.Background(), func(*wtx) error {
		close(held)
		<-free
		return nil
	}, nil)
	<-held
	return func() { close(free) }
}

// Queued is how many writes wait for the writer.
func (s *Store) Queued() int { return len(s.ops) }

// ConnPragmas reads the pragmas of the writer's connection and of every
// connection of the read pool (all held at once, so they are distinct).
func (s *Store) ConnPragmas(ctx context.Context) ([]map[string]int64, error) {
	names := []string{"synchronous", "busy_timeout", "foreign_keys", "query_only"}
	var out []map[string]int64
	err := s.write(ctx, func(w *wtx) error {
		m := map[string]int64{}
		for _, n := range names {
			var v int64
			if err := w.tx.QueryRowContext(ctx, "PRAGMA "+n).Scan(&v); err != nil {
				return err
			}
			m[n] = v
		}
		out = append(out, m)
		return nil
	}, nil)
	if err != nil {
		return nil, err
	}
	for range s.opts.ReadConns {
		c, err := s.rdb.Conn(ctx)
		if err != nil {
			return nil, err
		}
		defer c.Close()
		m := map[string]int64{}
		for _, n := range names {
			var v int64
			if err := c.QueryRowContext(ctx, "PRAGMA "+n).Scan(&v); err != nil {
				return nil, err
			}
			m[n] = v
		}
		out = append(out, m)
	}
	return out, nil
}

// IndexAuditText indexes n audit rows above the text index's mark (n <= 0:
// all of them), as the writer's batches of the index do.
func (s *Store) IndexAuditText(ctx context.Context, n int) error {
	return s.writeAside(ctx, func(w *wtx) error {
		_, _, err := indexAuditText(ctx, w.tx, n)
		return err
	})
}

// VerifyFrom is Store.VerifyWith that also says where its replay started
// (0: the first row) and how many audit rows it replayed.
func VerifyFrom(ctx context.Context, s *Store, opts ledger.VerifyOptions) (problems []string, resumed int64, replayed int, err error) {
	v, err := s.verify(ctx, opts)
	if err != nil {
		return nil, 0, 0, err
	}
	return v.Problems, v.Resumed(), v.Replayed(), nil
}
