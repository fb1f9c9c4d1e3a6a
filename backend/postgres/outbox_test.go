package postgres_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/ledger/ledgertest"
	"github.com/quotagate/quotagate/backend/postgres"
	"github.com/quotagate/quotagate/backend/postgres/pgtest"
)

func TestOutbox(t *testing.T) {
	ledgertest.RunOutbox(t, func(tb testing.TB) ledger.Store { return MustOpenStore(tb, postgres.Options{}) })
}

// TestOutboxClaims: gateways sharing a ledger claim an alert one at a time;
// a claim that runs out lets another gateway take the alert over.
func TestOutboxClaims(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	var stores []*postgres.Store
	for _, name := range []string{"gw-a", "gw-b", "gw-c", "gw-d"} {
		st := mustOpen(t, dsn, postgres.Options{Instance: name})
		t.Cleanup(func() { st.Close() })
		stores = append(stores, st)
	}
	at := time.Date(2026, 12, 14, 9, 30, 0, 0, time.UTC)
	for _, key := range []string{"t1-a", "t2-a", "t1-b", "t3-a"} {
		r := ledger.AlertRecord{Key: key, Tenant: key[:2], Kind: "threshold", Body: []byte(`{}`), At: at, Deliver: true}
		if ok, err := stores[0].RecordAlert(ctx, r); err != nil || !ok {
			t.Fatalf("record %s: %v %v", key, ok, err)
		}
	}
	claimed := make([][]ledger.OutboxAlert, len(stores))
	var wg sync.WaitGroup
	for i, st := range stores {
		wg.Go(func() {
			var err error
			if claimed[i], err = st.DueAlerts(ctx, at, time.Minute, 10); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	seen := map[string]int{}
	for _, c := range claimed {
		for _, a := range c {
			seen[a.Key]++
		}
	}
	if len(seen) != 3 || seen["t1-a"] != 1 || seen["t2-a"] != 1 || seen["t3-a"] != 1 {
		t.Fatalf("claims %v, want each queue's head (t1-a, t2-a, t3-a) claimed once", seen)
	}
	if due, err := stores[1].DueAlerts(ctx, at.Add(30*time.Second), time.Minute, 10); err != nil || len(due) != 0 {
		t.Fatalf("within the claims: %+v, %v", due, err)
	}
	due, err := stores[1].DueAlerts(ctx, at.Add(2*time.Minute), time.Minute, 10)
	if err != nil || len(due) != 3 {
		t.Fatalf("after the claims ran out: %+v, %v", due, err)
	}
}
