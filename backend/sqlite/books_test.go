package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/sqlite"
)

// TestBooksFollowAnotherWriter: the writer decides on balances it keeps in
// memory, yet a commit by another connection to the same file (which the
// data-dir lock forbids in a gateway, but nothing in the file does) is seen
// by the next admission: a budget cut elsewhere refuses, a held run settled
// elsewhere cannot be settled twice, and Verify stays clean.
func TestBooksFollowAnotherWriter(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	a, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	tenant := ledger.Tenant{ID: "t", BudgetUnits: 300, MaxConcurrent: 5}
	if err := a.ApplyTenants(ctx, []ledger.Tenant{tenant}, ledger.ActorConfig); err != nil {
		t.Fatal(err)
	}
	admit := func(st *sqlite.Store, id ledger.RunID) error {
		_, err := st.Admit(ctx, ledger.AdmitRequest{RunID: id, TenantID: "t", Upstream: "u", Model: "m", ReserveUnits: 102})
		return err
	}
	if err := admit(a, "r1"); err != nil { // a's books now hold t: 300 − 102
		t.Fatal(err)
	}
	b, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Settle(ctx, "r1", 15, "usage", ledger.TenantActor("t")); err != nil {
		t.Fatal(err)
	}
	if err := admit(b, "r2"); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	// 300 − 15 spent − 102 held by r2 = 183 available: one more fits, the
	// next does not (a's stale books would have said 198 and 96).
	if err := admit(a, "r3"); err != nil {
		t.Fatal(err)
	}
	if err := admit(a, "r4"); ledger.ErrorCode(err) != ledger.CodeInsufficientBudget {
		t.Fatalf("r4: %v, want %s", err, ledger.CodeInsufficientBudget)
	}
	if _, err := a.Settle(ctx, "r1", 15, "usage", ledger.TenantActor("t")); ledger.ErrorCode(err) != ledger.CodeRunEnded {
		t.Fatalf("settling r1 again: %v, want %s", err, ledger.CodeRunEnded)
	}
	bal, err := a.Balance(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	if bal.SpentUnits != 15 || bal.HeldUnits != 204 || bal.Active != 2 {
		t.Fatalf("balance %+v, want spent 15, held 204, active 2", bal)
	}
	if problems, err := a.Verify(ctx); err != nil || len(problems) > 0 {
		t.Fatalf("verify: %v %v", problems, err)
	}
}
