package sqlite_test

import (
	"context"
	"testing"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/ledger/ledgertest"
	"github.com/quotagate/quotagate/backend/sqlite"
)

// TestCloseDrainsQueuedWrites: writes queued before Close are applied and
// answered; writes after Close are refused; Close twice is harmless; the
// drained writes are on disk when the ledger is opened again.
func TestCloseDrainsQueuedWrites(t *testing.T) {
	ctx := context.Background()
	st := MustOpenStoreNoCleanup(t, sqlite.Options{})
	path := st.Path()
	ledgertest.MustApply(t, st, ledgertest.Tenant("t", 1000, 10))
	release := st.BlockWriter()
	errs := make(chan error, 5)
	for i := range 5 {
		go func() { _, err := st.Admit(ctx, req(ledger.RunID(rune('a'+i)), 10)); errs <- err }()
	}
	waitQueued(t, st, 5)
	closed := make(chan error)
	go func() { closed <- st.Close() }()
	release()
	for range 5 {
		if err := <-errs; err != nil {
			t.Fatalf("queued admit: %v", err)
		}
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	_, err := st.Admit(ctx, req("late", 10))
	ledgertest.WantCode(t, err, ledger.CodeInternal)

	st2, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	ledgertest.WantBalance(t, st2, ledger.Balance{TenantID: "t", BudgetUnits: 1000, HeldUnits: 50, AvailableUnits: 950, Active: 5})
	ledgertest.WantVerified(t, st2)
}
