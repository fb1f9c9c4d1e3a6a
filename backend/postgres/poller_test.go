package postgres_test

import (
	"context"
	"testing"

	"github.com/quotagate/quotagate/backend/postgres"
	"github.com/quotagate/quotagate/backend/postgres/pgtest"
	"github.com/quotagate/quotagate/backend/quota"
)

var _ quota.Poller = (*postgres.Store)(nil)

// TestPolls: one gateway at a time polls a name; when it closes (or dies:
// its connection ends), the next one to ask takes over.
func TestPolls(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	a := mustOpen(t, dsn, postgres.Options{Instance: "a"})
	b := mustOpen(t, dsn, postgres.Options{Instance: "b"})
	defer b.Close()
	if !a.Polls(ctx, "ark/m") || !a.Polls(ctx, "ark/m") {
		t.Fatal("the first gateway to ask does not poll")
	}
	if b.Polls(ctx, "ark/m") {
		t.Fatal("two gateways poll the same model")
	}
	if !b.Polls(ctx, "ark/other") {
		t.Fatal("another model's poller is refused")
	}
	a.Close()
	if !b.Polls(ctx, "ark/m") {
		t.Fatal("the poller closed, but nobody took over")
	}
}
