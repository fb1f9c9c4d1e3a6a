// Package evidence settles held runs on the provider's own word: for a
// run held on an upstream with a usage lookup (backend/upstream/lookup),
// it asks the provider what the call cost, after a delay and again with
// backoff for a window, keeps what it found on the hold, and reconciles
// the hold with it — on an operator's click, or at once when the upstream
// has auto_reconcile. Lookups are bounded in number and rate per upstream,
// run beside the gateway (never in an admission's or a stream's way) and
// are picked up again after a restart from the ledger: a held run with a
// provider id and no final lookup row is looked up anew.
package evidence

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/upstream/lookup"
)

// State is where the lookup of one held run is.
type State string

const (
	Looking State = "looking" // not answered yet; retried with backoff
	Found   State = "found"   // the provider's figure, waiting for Apply (or applied at once by auto_reconcile)
	Refused State = "refused" // the answer cannot be evidence (malformed, contradictory, another call's)
	GaveUp  State = "gave_up" // the window passed without an answer; the hold stays
	Applied State = "applied" // the hold was reconciled with the figure
)

// final reports whether a lookup in state s is over (an audit row says so).
func (s State) final() bool { return s == Found || s == Refused || s == GaveUp || s == Applied }

// Finding is what is known of one held run at its provider, as the
// dashboard shows it on the hold.
type Finding struct {
	Run        ledger.RunID `json:"run"`
	Upstream   string       `json:"upstream"`
	ProviderID string       `json:"provider_id"`
	State      State        `json:"state"`
	Input      int64        `json:"input_tokens"`
	Output     int64        `json:"output_tokens"`
	Cached     int64        `json:"cached_tokens,omitempty"`
	Reasoning  int64        `json:"reasoning_tokens,omitempty"`
	Cost       string       `json:"cost,omitempty"` // as the provider wrote it
	LookedUpAt time.Time    `json:"looked_up_at,omitzero"`
	Attempts   int          `json:"attempts"`
	// Note says why a figure was refused, why the lookup gave up, or what
	// the last attempt met.
	Note string `json:"note,omitempty"`
	// Answer is the provider's answer, secrets scrubbed: the evidence.
	Answer string `json:"answer,omitempty"`
	// Auto: the upstream applies a figure at once (auto_reconcile).
	Auto bool `json:"auto,omitempty"`
}

// Units is the figure in the ledger's units (tokens: input + output).
func (f Finding) Units() ledger.Units { return ledger.Units(f.Input + f.Output) }

// Says is the figure in a sentence, for the evidence and the dashboard.
func (f Finding) Says() string {
	s := fmt.Sprintf("the provider %s reports %d input + %d output tokens", f.Upstream, f.Input, f.Output)
	if f.Cached > 0 {
		s += fmt.Sprintf(" (%d cached)", f.Cached)
	}
	if f.Cost != "" {
		s += ", cost " + f.Cost
	}
	return s + fmt.Sprintf(" for call %s, looked up at %s", f.ProviderID, f.LookedUpAt.UTC().Format(time.RFC3339))
}

func (f *Finding) take(fig lookup.Figure) {
	f.Input, f.Output, f.Cached, f.Reasoning, f.Cost = fig.Input, fig.Output, fig.Cached, fig.Reasoning, fig.Cost
}

// AuditLookup is the kind of the audit row that ends a lookup: its reason
// the state, its evidence the provider's answer (scrubbed), its detail the
// Finding as JSON, its actor provider:<upstream>.
const AuditLookup = ledger.AuditLookup

// row is f's audit row about run.
func (f Finding) row(run ledger.Run) ledger.AuditEntry {
	detail, _ := json.Marshal(f)
	ev := f.Answer
	if f.State != Found {
		ev = f.Note
	}
	return ledger.AuditEntry{Kind: AuditLookup, TenantID: run.TenantID, RunID: run.ID, Period: run.Period,
		Actor: ledger.Provider(f.Upstream), Reason: string(f.State), Evidence: ev, Units: f.Units(),
		Detail: string(detail), ProviderID: f.ProviderID}
}

// fromRow reads a finding back from its audit row.
func fromRow(e ledger.AuditEntry) (Finding, bool) {
	var f Finding
	if e.Kind != AuditLookup || json.Unmarshal([]byte(e.Detail), &f) != nil || !f.State.final() {
		return Finding{}, false
	}
	return f, true
}
