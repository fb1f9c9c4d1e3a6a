package pgtest_test

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/quotagate/quotagate/backend/postgres/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// TestDatabase connects as the ordinary role through each DSN form and
// checks it owns its database but is no superuser.
func TestDatabase(t *testing.T) {
	s := pgtest.Shared(t)
	ctx := context.Background()
	name, err := s.CreateDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, dsn := range []string{s.URL(name), s.Keyword(name), s.Socket(name)} {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatalf("connect %s: %v", dsn, err)
		}
		var super bool
		var owner, user string
		if err := conn.QueryRow(ctx, `SELECT rolsuper, current_user,
			(SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = current_database())
			FROM pg_roles WHERE rolname = current_user`).Scan(&super, &user, &owner); err != nil {
			t.Fatal(err)
		}
		conn.Close(ctx)
		if super || user != pgtest.Role || owner != pgtest.Role {
			t.Fatalf("%s: superuser=%v user=%s owner=%s, want an ordinary role owning its database", dsn, super, user, owner)
		}
	}
}
