package ledger_test

import (
	"strings"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
)

func TestKeyedRetry(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	released := func(id ledger.RunID) ledger.KeyedRun {
		return ledger.KeyedRun{ID: id, Status: ledger.RunFailed, Usage: ledger.UsageReleased, CreatedAt: at}
	}
	with := func(id ledger.RunID, s ledger.RunStatus, u ledger.UsageStatus) ledger.KeyedRun {
		return ledger.KeyedRun{ID: id, Status: s, Usage: u, CreatedAt: at}
	}
	for _, tc := range []struct {
		name    string
		earlier []ledger.KeyedRun // newest first
		retryOf ledger.RunID
		dupOf   ledger.RunID
	}{
		{name: "FirstUse"},
		{name: "InFlight", earlier: []ledger.KeyedRun{with("r1", ledger.RunActive, ledger.UsagePending)}, dupOf: "r1"},
		{name: "Queued", earlier: []ledger.KeyedRun{with("r1", ledger.RunQueued, ledger.UsagePending)}, dupOf: "r1"},
		{name: "Settled", earlier: []ledger.KeyedRun{with("r1", ledger.RunCompleted, ledger.UsageTrusted)}, dupOf: "r1"},
		{name: "Held", earlier: []ledger.KeyedRun{with("r1", ledger.RunInterrupted, ledger.UsageUnknown)}, dupOf: "r1"},
		{name: "Reconciled", earlier: []ledger.KeyedRun{with("r1", ledger.RunInterrupted, ledger.UsageReconciled)}, dupOf: "r1"},
		{name: "ReleasedIsRetried", earlier: []ledger.KeyedRun{released("r2"), released("r1")}, retryOf: "r2"},
		{name: "HeldBehindReleased", earlier: []ledger.KeyedRun{released("r3"), with("r2", ledger.RunCompleted, ledger.UsageTrusted), released("r1")}, dupOf: "r2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := ledger.AdmitRequest{RunID: "new", TenantID: "a", IdempotencyKey: "k"}
			retryOf, err := ledger.KeyedRetry(req, tc.earlier)
			if tc.dupOf != "" {
				if ledger.ErrorCode(err) != ledger.CodeDuplicateRequest || ledger.ErrorRunID(err) != tc.dupOf ||
					!strings.Contains(ledger.ErrorMessage(err), string(tc.dupOf)) || retryOf != "" {
					t.Fatalf("got %q, %v; want duplicate_request naming %s", retryOf, err, tc.dupOf)
				}
				return
			}
			if err != nil || retryOf != tc.retryOf {
				t.Fatalf("got %q, %v; want retry of %q", retryOf, err, tc.retryOf)
			}
		})
	}
}

func TestRunFacts(t *testing.T) {
	for _, tc := range []struct {
		run  ledger.Run
		want string
	}{
		{ledger.Run{}, ""},
		{ledger.Run{Door: "chat", UpstreamProtocol: "chat"}, " door=chat upstream_protocol=chat"},
		{ledger.Run{Door: "messages", UpstreamProtocol: "chat", IdempotencyKey: "k", RetryCount: 2, RetryOf: "r1"},
			" door=messages upstream_protocol=chat idempotency_key=k retry_count=2 retry_of=r1"},
	} {
		if got := ledger.RunFacts(tc.run); got != tc.want {
			t.Errorf("RunFacts(%+v) = %q, want %q", tc.run, got, tc.want)
		}
	}
	if !(ledger.Run{Door: "messages", UpstreamProtocol: "chat"}).Translated() || (ledger.Run{Door: "chat", UpstreamProtocol: "chat"}).Translated() ||
		(ledger.Run{}).Translated() {
		t.Error("Translated: only a run relayed in another protocol than its door's")
	}
}

func TestSettleUsageRule(t *testing.T) {
	open := ledger.Run{ID: "r", TenantID: "a", Status: ledger.RunActive, Usage: ledger.UsagePending, ReserveUnits: 100, HeldUnits: 100}
	tr, err := ledger.SettleUsageRule(ledger.Settlement{Units: 60, CachedTokens: 40, Evidence: "usage"}).Decide(open)
	if err != nil || tr.After.CachedTokens != 40 || tr.After.SpentUnits != 60 || tr.After.Usage != ledger.UsageTrusted {
		t.Fatalf("transition %+v, %v", tr, err)
	}
	for _, bad := range []ledger.Settlement{{Units: -1}, {Units: 1, CachedTokens: -1}, {Units: 1, CachedTokens: int64(ledger.MaxUnits) + 1}} {
		if _, err := ledger.SettleUsageRule(bad).Decide(open); ledger.ErrorCode(err) != ledger.CodeInvalidRequest {
			t.Errorf("%+v: %v, want invalid_request", bad, err)
		}
	}
	ended := open
	ended.Status, ended.Usage, ended.HeldUnits = ledger.RunCompleted, ledger.UsageTrusted, 0
	if _, err := ledger.SettleUsageRule(ledger.Settlement{Units: 1}).Decide(ended); ledger.ErrorCode(err) != ledger.CodeRunEnded {
		t.Errorf("an ended run: %v", err)
	}
}
