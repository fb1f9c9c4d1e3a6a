package ledger_test

import (
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
)

// TestCheckpointOfAnArchivedChain: a checkpoint taken after a chain's
// every row was archived holds the chain as its summaries leave it, and a
// full replay from the summaries agrees with it (rather than reporting a
// chain with no audit row).
func TestCheckpointOfAnArchivedChain(t *testing.T) {
	sum := ledger.ArchiveSummary{Month: "2026-10", TenantID: "p", Period: "2026-10", Runs: 3, Rows: 6,
		SpentUnits: 12, Net: -12, Settled: 12, FirstSeq: 4, LastSeq: 9}
	replay := func(expect *ledger.Checkpoint) *ledger.Verification {
		v := &ledger.Verification{}
		if expect != nil {
			v.Expect(*expect)
		}
		v.Archived(sum)
		v.AuditRow(1, "p", "", ledger.AuditConfig, 0, 0, 100)
		v.EndReplay()
		return v
	}
	cp := replay(nil).Checkpoint(10, time.Unix(0, 0))
	if len(cp.Chains) != 2 || cp.Chains[1].Period != "2026-10" || cp.Chains[1].Spent != 12 {
		t.Fatalf("checkpoint chains %+v, want p and its archived period with spent 12", cp.Chains)
	}
	if v := replay(&cp); len(v.Problems) > 0 {
		t.Fatalf("full replay against the checkpoint: %q", v.Problems)
	}
	cp.Chains[1].Spent = 13
	if v := replay(&cp); len(v.Problems) != 1 {
		t.Fatalf("full replay against an altered checkpoint: %q, want the archived chain reported", v.Problems)
	}
}
