package admin_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/admin"
	"github.com/quotagate/quotagate/backend/alert"
	"github.com/quotagate/quotagate/backend/evidence"
	"github.com/quotagate/quotagate/backend/ledger"
)

func run(id string, st ledger.RunStatus, held ledger.Units) ledger.Run {
	return ledger.Run{ID: ledger.RunID(id), TenantID: "local", Upstream: "demo", Model: "demo-chat", Status: st,
		Usage: ledger.UsagePending, ReserveUnits: 102, HeldUnits: held, CreatedAt: time.Unix(int64(len(id)), 0).UTC()}
}

// TestDiffApply: applying Diff(prev, next) to prev gives next, for changed,
// new, gone and reordered rows; an unchanged state is an empty delta.
func TestDiffApply(t *testing.T) {
	base := admin.State{Version: "v", Tenants: []admin.TenantState{{Balance: ledger.Balance{TenantID: "local", BudgetUnits: 1000, AvailableUnits: 1000}}},
		Runs: []ledger.Run{run("r2", ledger.RunActive, 102), run("r1", ledger.RunActive, 102)}}
	base.Normalize() // as every sent state is
	settled := run("r1", ledger.RunCompleted, 0)
	for _, tc := range []struct {
		name string
		next func(admin.State) admin.State
		rows int // rows the delta carries
	}{
		{"Same", func(s admin.State) admin.State { return s }, 0},
		{"Changed", func(s admin.State) admin.State {
			s.Runs = []ledger.Run{s.Runs[0], settled}
			s.Tenants = []admin.TenantState{{Balance: ledger.Balance{TenantID: "local", BudgetUnits: 1000, SpentUnits: 15, AvailableUnits: 883}}}
			return s
		}, 2},
		{"NewFirst", func(s admin.State) admin.State {
			s.Runs = append([]ledger.Run{run("r3", ledger.RunQueued, 102)}, s.Runs...)
			return s
		}, 1},
		{"GoneAndHeld", func(s admin.State) admin.State {
			s.Runs = s.Runs[:1]
			s.Holds = []ledger.Run{run("r1", ledger.RunInterrupted, 102)}
			return s
		}, 1},
		{"Header", func(s admin.State) admin.State { s.Demo = true; s.UptimeSeconds = 9; return s }, 0},
		{"WebhookFails", func(s admin.State) admin.State {
			at := time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC)
			s.Alerts = &alert.Status{Thresholds: []int{80}, Webhook: &alert.WebhookStatus{URL: "http://127.0.0.1:9/h", Pending: 2,
				Failing: true, LastError: "HTTP 500", LastAttemptAt: &at}}
			return s
		}, 0},
		{"KeyRests", func(s admin.State) admin.State {
			s.Keys = map[string][]admin.KeyState{"ark": {{Last4: "1111", RestingUntil: time.Date(2026, 12, 2, 5, 10, 0, 0, time.UTC), Why: "401"}, {Last4: "2222"}}}
			return s
		}, 0},
		{"ProviderFigure", func(s admin.State) admin.State {
			s.Holds = []ledger.Run{run("r1", ledger.RunInterrupted, 102)}
			s.Evidence = map[ledger.RunID]evidence.Finding{"r1": {Run: "r1", Upstream: "openrouter", ProviderID: "gen-1",
				State: evidence.Found, Input: 30, Output: 40, Cost: "0.0042"}}
			return s
		}, 1},
		{"LedgerUnreachable", func(s admin.State) admin.State {
			s.Degraded = "ledger unreachable: dial tcp 127.0.0.1:5432: connection refused"
			return s
		}, 0},
		{"RouteTargetAdded", func(s admin.State) admin.State {
			s.Routes = []admin.RouteState{{Model: "demo-chat", Targets: []admin.RouteTarget{{Upstream: "demo", UpstreamModel: "demo-chat"}}}}
			return s
		}, 0},
		{"ClockMoves", func(s admin.State) admin.State {
			s.Clock = admin.ClockState{Offset: "72h0m0s", Now: time.Date(2026, 12, 31, 23, 59, 58, 0, time.UTC)}
			return s
		}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next := tc.next(base)
			next.Normalize()
			d := admin.Diff(base, next)
			got, _ := json.Marshal(base.Apply(d))
			want, _ := json.Marshal(next)
			if string(got) != string(want) {
				t.Fatalf("Apply(Diff) =\n%s\nwant\n%s\ndelta %+v", got, want, d)
			}
			if n := len(d.Runs) + len(d.Holds) + len(d.Tenants); n > tc.rows+1 {
				t.Errorf("delta carries %d rows, want at most %d: %+v", n, tc.rows+1, d)
			}
			// a provider figure that goes (its hold reconciled) goes from the page
			// too, and so does the banner once the ledger answers again
			back, _ := json.Marshal(next.Apply(admin.Diff(next, base)))
			if orig, _ := json.Marshal(base); (tc.name == "ProviderFigure" || tc.name == "LedgerUnreachable") && string(back) != string(orig) {
				t.Fatalf("Apply(Diff) back =\n%s\nwant\n%s", back, orig)
			}
			if (tc.name == "Same" || tc.name == "ClockMoves") && !d.Empty() {
				t.Errorf("unchanged state gave a delta: %+v", d)
			}
		})
	}
}
