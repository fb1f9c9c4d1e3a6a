package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/ledger/ledgertest"
	"github.com/quotagate/quotagate/backend/sqlite"
)

// tamperings are edits behind the store's back, each with a line verify
// says about it; fromCheckpoint says a replay from a checkpoint written
// before the edit finds it too (an edit of a run that had ended by then
// takes a full replay).
var tamperings = []struct {
	name           string
	sql            string
	want           string
	fromCheckpoint bool
}{
	{"BalanceRowHeld", `UPDATE tenants SET held_units = held_units + 1 WHERE id = 't'`, "held 43 but its runs hold 42", true},
	{"BalanceRowSpent", `UPDATE tenants SET spent_units = spent_units + 2, budget_units = budget_units + 2 WHERE id = 't'`,
		"spent 9 but its runs spent 7", true},
	{"BalanceRowActive", `UPDATE tenants SET active = 0 WHERE id = 't'`, "active 0 but 1 of its runs", true},
	{"RunSpent", `UPDATE runs SET spent_units = 6 WHERE id = 'settled'`, "spent 6, but 1 settle/reconcile audit rows (units 7)", false},
	{"RunDeleted", `DELETE FROM runs WHERE id = 'held'`, "admitted run held, which is missing", false},
	{"QuotaDay", `UPDATE quota_days SET usage_units = usage_units + 5`, "quota demo/demo-model 2026-11-29", true},
	{"BudgetWithoutAudit", `UPDATE tenants SET budget_units = 500 WHERE id = 't'`, "available 451 but replaying its audit rows gives 51", true},
	{"RunCost", `UPDATE runs SET cost_micros = 13 WHERE id = 'settled'`, "run settled: cost 0.000013 of money but its audit rows carry 0.000014", false},
	{"BalanceRowSpentMicros", `UPDATE tenants SET spent_micros = 15 WHERE id = 't'`, "spent 0.000015 of money but its runs cost 0.000014", true},
	{"BalanceRowHeldMicros", `UPDATE tenants SET held_micros = held_micros + 1 WHERE id = 't'`, "holds 0.000117 of money but its runs hold 0.000116", true},
	{"PeriodSpent", `UPDATE tenant_periods SET spent_units = spent_units + 1 WHERE tenant_id = 'p'`, "spent 6 held 0 (money 0.00, 0.00) but its runs spent 5", true},
	{"PeriodOverBudget", `UPDATE tenant_periods SET held_units = 96 WHERE tenant_id = 'p'`, "spent and holds more than the budget", true},
	{"RunLeftItsPeriod", `UPDATE runs SET period = '' WHERE id = 'daily'`, "tenant p: spent 0 but its runs spent 5", false},
}

// TestVerifyFindsTampering edits the file behind the store's back and
// expects `quotagate verify` (sqlite.Verify) to name each difference.
func TestVerifyFindsTampering(t *testing.T) {
	for _, tc := range tamperings {
		t.Run(tc.name, func(t *testing.T) {
			path := tamperLedger(t)
			raw, err := sql.Open("sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := raw.Exec(tc.sql); err != nil {
				t.Fatal(err)
			}
			raw.Close()
			problems, err := sqlite.Verify(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, p := range problems {
				found = found || strings.Contains(p, tc.want)
			}
			if !found {
				t.Fatalf("verify said %q, want a line containing %q", problems, tc.want)
			}
		})
	}
}

// tamperLedger writes ledgertest.TamperBooks into a new ledger and returns
// its path.
func tamperLedger(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ledger.db")
	st, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ledgertest.TamperBooks(t, st)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestAuditIsAppendOnly: the file itself refuses to edit or delete audit rows.
func TestAuditIsAppendOnly(t *testing.T) {
	path := tamperLedger(t)
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, q := range []string{`UPDATE audit SET units = 0`, `DELETE FROM audit`} {
		if _, err := raw.Exec(q); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: %v, want the append-only refusal", q, err)
		}
	}
}

func TestVerifyMissingFile(t *testing.T) {
	if _, err := sqlite.Verify(context.Background(), filepath.Join(t.TempDir(), "absent.db")); err == nil {
		t.Fatal("verify of a missing ledger succeeded (and would have created it)")
	}
}

// TestVerifyFromCheckpointFindsTampering: the edits a replay from a
// checkpoint written before them still finds.
func TestVerifyFromCheckpointFindsTampering(t *testing.T) {
	for _, tc := range tamperings {
		if !tc.fromCheckpoint {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			path := tamperLedger(t)
			if p := verifyAt(t, path, ledger.VerifyOptions{Checkpoint: true}); len(p) > 0 {
				t.Fatalf("first verify: %q", p)
			}
			rawExec(t, path, tc.sql)
			wantLine(t, verifyAt(t, path, ledger.VerifyOptions{}), tc.want)
		})
	}
}
