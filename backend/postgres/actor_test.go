package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/quotagate/quotagate/backend/ledger/ledgertest"
	"github.com/quotagate/quotagate/backend/postgres"
	"github.com/quotagate/quotagate/backend/postgres/pgtest"
)

// TestActorsReadApart: a tenant named "quota" and the quota guard read
// apart, in rows written now and in rows a shared ledger received from a
// gateway of the previous version (typed actors need no migration).
func TestActorsReadApart(t *testing.T) {
	dsn := pgtest.DSN(t)
	st := mustOpen(t, dsn, postgres.Options{})
	t.Cleanup(func() { _ = st.Close() })
	ledgertest.ActorsReadApart(t, st, func(values string) error {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, `INSERT INTO audit (at, kind, tenant_id, run_id, actor) VALUES `+values)
		return err
	})
}
