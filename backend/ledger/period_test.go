package ledger_test

import (
	"strings"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/period"
)

// TestPlanTenantsCalendar: a calendar's change is a config change in the
// config's words; a budget below what the current period spent and holds
// is refused; a zone or week start means nothing to a budget that never
// renews.
func TestPlanTenantsCalendar(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	monthly := period.Calendar{Kind: period.Month, Zone: berlin, WeekStarts: time.Monday}
	stored := func(cal period.Calendar, current ledger.PeriodBooks) []ledger.StoredTenant {
		return []ledger.StoredTenant{{Tenant: ledger.Tenant{ID: "t", BudgetUnits: 100, MaxConcurrent: 1, Calendar: cal}, Current: current}}
	}
	for _, tc := range []struct {
		name   string
		stored []ledger.StoredTenant
		want   ledger.Tenant
		detail string // "" for no audit row
		code   string
	}{
		{"NoneToMonth", stored(period.Calendar{}, ledger.PeriodBooks{}),
			ledger.Tenant{ID: "t", BudgetUnits: 100, MaxConcurrent: 1, Calendar: monthly},
			"budget_period none→month; timezone local→Europe/Berlin", ""},
		{"WeekStarts", stored(period.Calendar{Kind: period.Week, Zone: berlin, WeekStarts: time.Monday}, ledger.PeriodBooks{}),
			ledger.Tenant{ID: "t", BudgetUnits: 100, MaxConcurrent: 1, Calendar: period.Calendar{Kind: period.Week, Zone: berlin, WeekStarts: time.Sunday}},
			"week_starts monday→sunday", ""},
		{"Same", stored(monthly, ledger.PeriodBooks{}), ledger.Tenant{ID: "t", BudgetUnits: 100, MaxConcurrent: 1, Calendar: monthly}, "", ""},
		{"ZoneOfNone", stored(period.Calendar{Kind: period.None}, ledger.PeriodBooks{}),
			ledger.Tenant{ID: "t", BudgetUnits: 100, MaxConcurrent: 1, Calendar: period.Calendar{Kind: period.None, Zone: berlin}}, "", ""},
		{"BelowPeriod", stored(monthly, ledger.PeriodBooks{Label: "2026-12", SpentUnits: 50, HeldUnits: 20}),
			ledger.Tenant{ID: "t", BudgetUnits: 60, MaxConcurrent: 1, Calendar: monthly}, "", ledger.CodeInvalidRequest},
		{"AtPeriod", stored(monthly, ledger.PeriodBooks{Label: "2026-12", SpentUnits: 50, HeldUnits: 20}),
			ledger.Tenant{ID: "t", BudgetUnits: 70, MaxConcurrent: 1, Calendar: monthly}, "budget_units 100→70", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ledger.PlanTenants(tc.stored, []ledger.Tenant{tc.want}, ledger.Operator("test"))
			if got := ledger.ErrorCode(err); err != nil && got != tc.code || err == nil && tc.code != "" {
				t.Fatalf("err = %v, want code %q", err, tc.code)
			}
			if tc.code != "" {
				return
			}
			if tc.detail == "" {
				if len(p.Audit) != 0 || len(p.Update) != 0 {
					t.Fatalf("plan %+v, want no change", p)
				}
				return
			}
			if len(p.Audit) != 1 || !strings.Contains(p.Audit[0].Detail, tc.detail) || len(p.Update) != 1 {
				t.Fatalf("plan %+v, want one update audited as %q", p, tc.detail)
			}
		})
	}
}

// TestVerificationPeriodChains: each period's audit rows chain on their
// own, the first of a period starting wherever its books did; a config row
// loosens the tenant's other periods (a budget change moves them all).
func TestVerificationPeriodChains(t *testing.T) {
	var v ledger.Verification
	v.AuditRow(1, "t", "", ledger.AuditConfig, 100, 0, 100)       // created
	v.AuditRow(2, "t", "2026-11", ledger.AuditAdmit, 30, 100, 70) // a period's first row
	v.AuditRow(3, "t", "2026-12", ledger.AuditAdmit, 10, 100, 90)
	v.AuditRow(4, "t", "2026-11", ledger.AuditSettle, 20, 70, 80)
	v.AuditRow(5, "t", "", ledger.AuditConfig, 50, 100, 150) // budget 100→150
	v.AuditRow(6, "t", "2026-11", ledger.AuditAdmit, 5, 130, 125)
	v.TenantEnd("t", 150, 0)
	v.PeriodEnd("t", "2026-11", 125, 20)
	v.PeriodEnd("t", "2026-12", 140, 0) // loose since the config row: its available is not replayed
	if len(v.Problems) != 0 {
		t.Fatalf("problems in a consistent history: %q", v.Problems)
	}
	v.AuditRow(7, "t", "2026-11", ledger.AuditAdmit, 5, 999, 994)
	v.PeriodEnd("t", "2026-11", 994, 21)
	v.PeriodEnd("t", "2026-10", 100, 0)
	for i, want := range []string{"audit row 7 starts at available 999 but the previous row left 125",
		"period 2026-11 spent 21 but its settle and reconcile audit rows add up to 20",
		"period 2026-10 has books but no audit row"} {
		if i >= len(v.Problems) || !strings.Contains(v.Problems[i], want) {
			t.Fatalf("problems %q, want %q at %d", v.Problems, want, i)
		}
	}
}
