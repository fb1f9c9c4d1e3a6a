package ledger_test

import (
	"testing"

	"github.com/quotagate/quotagate/backend/ledger"
)

func openRun(status ledger.RunStatus) ledger.Run {
	return ledger.Run{ID: "r1", TenantID: "t", Upstream: "demo", Model: "m", QuotaDay: "2026-12-01",
		Status: status, Usage: ledger.UsagePending, ReserveUnits: 102, HeldUnits: 102}
}

func named(r ledger.Run, providerID string) ledger.Run {
	r.ProviderID = providerID
	return r
}

func heldRun() ledger.Run {
	r := openRun(ledger.RunInterrupted)
	r.Usage = ledger.UsageUnknown
	return r
}

// TestRules: each rule's decided transition (status, usage, split, audit
// kind and units, moves), or its typed refusal. Seed 000: a reserve of 102
// settled at 15.
func TestRules(t *testing.T) {
	for _, tc := range []struct {
		name   string
		rule   ledger.Rule
		run    ledger.Run
		code   string // refusal expected, "" for none
		status ledger.RunStatus
		usage  ledger.UsageStatus
		kind   ledger.AuditKind
		units  ledger.Units // audit units
		moves  ledger.Moves
		none   bool
	}{
		{name: "SettleSeed000", rule: ledger.SettleRule(15, "usage"), run: openRun(ledger.RunActive),
			status: ledger.RunCompleted, usage: ledger.UsageTrusted, kind: ledger.AuditSettle, units: 15,
			moves: ledger.Moves{Spent: 15, Held: -102, Used: 15, Active: -1}},
		{name: "SettleOverrun", rule: ledger.SettleRule(1002, "usage"), run: openRun(ledger.RunActive),
			status: ledger.RunCompleted, usage: ledger.UsageTrusted, kind: ledger.AuditSettle, units: 102,
			moves: ledger.Moves{Spent: 102, Held: -102, Used: 1002, Active: -1}},
		{name: "ErrRunEndedSettle", rule: ledger.SettleRule(15, "usage"), run: heldRun(), code: ledger.CodeRunEnded},
		{name: "ErrInvalidSettleUnits", rule: ledger.SettleRule(-1, "usage"), run: openRun(ledger.RunActive), code: ledger.CodeInvalidRequest},
		{name: "KeepHoldCancelled", rule: ledger.KeepHoldRule(ledger.RunCancelled, "client left"), run: openRun(ledger.RunActive),
			status: ledger.RunCancelled, usage: ledger.UsageUnknown, kind: ledger.AuditCancel, units: 102,
			moves: ledger.Moves{Active: -1}},
		{name: "KeepHoldInterrupted", rule: ledger.KeepHoldRule(ledger.RunInterrupted, "cut"), run: openRun(ledger.RunActive),
			status: ledger.RunInterrupted, usage: ledger.UsageUnknown, kind: ledger.AuditHold, units: 102,
			moves: ledger.Moves{Active: -1}},
		{name: "ErrKeepHoldNotAnEnd", rule: ledger.KeepHoldRule(ledger.RunActive, "x"), run: openRun(ledger.RunActive), code: ledger.CodeInvalidRequest},
		{name: "ReleaseFailed", rule: ledger.ReleaseHoldRule(ledger.RunFailed, "HTTP 400 before output"), run: openRun(ledger.RunActive),
			status: ledger.RunFailed, usage: ledger.UsageReleased, kind: ledger.AuditRelease, units: 102,
			moves: ledger.Moves{Held: -102, Active: -1}},
		{name: "ErrReleaseNoEvidence", rule: ledger.ReleaseHoldRule(ledger.RunFailed, " "), run: openRun(ledger.RunActive), code: ledger.CodeInvalidRequest},
		{name: "Reconcile", rule: ledger.ReconcileRule(40, "bill"), run: heldRun(),
			status: ledger.RunInterrupted, usage: ledger.UsageReconciled, kind: ledger.AuditReconcile, units: 40,
			moves: ledger.Moves{Spent: 40, Held: -102, Used: 40}},
		{name: "ErrNotHeldPending", rule: ledger.ReconcileRule(40, "bill"), run: openRun(ledger.RunActive), code: ledger.CodeNotHeld},
		{name: "ErrReconcileAboveReserve", rule: ledger.ReconcileRule(103, "bill"), run: heldRun(), code: ledger.CodeInvalidRequest},
		{name: "StartActiveIsNone", rule: ledger.StartRule(), run: openRun(ledger.RunActive), none: true},
		{name: "StartQueued", rule: ledger.StartRule(), run: openRun(ledger.RunQueued),
			status: ledger.RunActive, usage: ledger.UsagePending, kind: ledger.AuditStart},
		{name: "RecoverQueuedReleases", rule: ledger.RecoverRule(ledger.RecoveryWhy), run: openRun(ledger.RunQueued),
			status: ledger.RunFailed, usage: ledger.UsageReleased, kind: ledger.AuditRelease, units: 102,
			moves: ledger.Moves{Held: -102, Active: -1}},
		{name: "RecoverActiveKeepsHold", rule: ledger.RecoverRule(ledger.RecoveryWhy), run: openRun(ledger.RunActive),
			status: ledger.RunInterrupted, usage: ledger.UsageUnknown, kind: ledger.AuditRecover, units: 102,
			moves: ledger.Moves{Active: -1}},
		{name: "RecoverEndedIsNone", rule: ledger.RecoverRule(ledger.RecoveryWhy), run: heldRun(), none: true},
		{name: "NamedActive", rule: ledger.NamedRule("gen-1"), run: openRun(ledger.RunActive),
			status: ledger.RunActive, usage: ledger.UsagePending, kind: ledger.AuditNamed},
		{name: "NamedEndedIsNone", rule: ledger.NamedRule("gen-1"), run: heldRun(), none: true},
		{name: "NamedTwiceIsNone", rule: ledger.NamedRule("gen-2"), run: named(openRun(ledger.RunActive), "gen-1"), none: true},
		{name: "NamedNothingIsNone", rule: ledger.NamedRule(""), run: openRun(ledger.RunActive), none: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := tc.rule.Decide(tc.run)
			if tc.code != "" {
				if ledger.ErrorCode(err) != tc.code {
					t.Fatalf("err = %v, want code %s", err, tc.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tr.None(tc.run) != tc.none {
				t.Fatalf("None = %v, want %v", tr.None(tc.run), tc.none)
			}
			if tc.none {
				return
			}
			a := tr.After
			if a.Status != tc.status || a.Usage != tc.usage || tr.Kind != tc.kind || tr.Units != tc.units {
				t.Fatalf("got %s/%s %s units %d, want %s/%s %s units %d",
					a.Status, a.Usage, tr.Kind, tr.Units, tc.status, tc.usage, tc.kind, tc.units)
			}
			if m := tr.Moves(tc.run); m != tc.moves {
				t.Fatalf("moves %+v, want %+v", m, tc.moves)
			}
			if a.HeldUnits != 0 && a.Usage.Holding() != true || a.Usage.Holding() && a.HeldUnits != a.ReserveUnits {
				t.Fatalf("held %d with usage %s", a.HeldUnits, a.Usage)
			}
			if tc.kind == ledger.AuditNamed && a.ProviderID != "gen-1" {
				t.Fatalf("named run keeps provider id %q", a.ProviderID)
			}
			e := tr.Audit(tc.run, ledger.Operator("test"), 500)
			if e.AvailableBefore != 500+tc.moves.Spent+tc.moves.Held || e.Actor != ledger.Operator("test") || e.Kind != tc.kind {
				t.Fatalf("audit %+v", e)
			}
		})
	}
}
