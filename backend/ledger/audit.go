package ledger

import (
	"strings"
	"time"

	"github.com/quotagate/quotagate/backend/price"
)

// AuditKind names a state change.
type AuditKind string

const (
	AuditAdmit     AuditKind = "admit"
	AuditReject    AuditKind = "reject"
	AuditStart     AuditKind = "start"     // queued → active
	AuditSettle    AuditKind = "settle"    // trusted usage
	AuditHold      AuditKind = "hold"      // usage unknown, hold kept
	AuditRelease   AuditKind = "release"   // provider did no work; hold released with evidence
	AuditReconcile AuditKind = "reconcile" // operator settled a held run with evidence
	AuditCancel    AuditKind = "cancel"
	AuditRecover   AuditKind = "recover" // active at crash → interrupted, hold intact
	AuditConfig    AuditKind = "config"
	AuditEvict     AuditKind = "evict"
	AuditRestore   AuditKind = "restore"
	AuditSync      AuditKind = "sync"
	// A month's runs moved out of the ledger into an archive file, leaving
	// its summaries (one row per summary), and put back.
	AuditArchive   AuditKind = "archive"
	AuditUnarchive AuditKind = "unarchive"
	// AuditFailover: a call left a target of its route for the next, before
	// any output (the refused attempt's run, if one was admitted there; why;
	// from and to in Detail).
	AuditFailover AuditKind = "failover"
	// AuditLookup ends a lookup of a held run at its provider
	// (backend/evidence): its reason the finding's state, its evidence the
	// provider's answer, its detail the finding, its actor provider:<upstream>.
	AuditLookup AuditKind = "lookup"
	// AuditNamed keeps the provider's id of a call still streaming
	// (NamedRule), written once the stream has run a while on an upstream
	// whose usage can be looked up: a crash does not lose it.
	AuditNamed AuditKind = "named"
)

// AuditKinds are the kinds of row the ledger holds, in the order they are
// declared (the dashboard's filter offers them so): what the audit log and
// its export filter by.
var AuditKinds = []AuditKind{AuditAdmit, AuditReject, AuditStart, AuditSettle, AuditHold, AuditRelease,
	AuditReconcile, AuditCancel, AuditRecover, AuditConfig, AuditEvict, AuditRestore, AuditSync, AuditArchive,
	AuditUnarchive, AuditFailover, AuditLookup, AuditNamed, AuditLateEnd, AuditAlert}

// AuditEntry is one append-only row of the audit log.
type AuditEntry struct {
	Seq             int64     `json:"seq"`
	At              time.Time `json:"at"`
	Kind            AuditKind `json:"kind"`
	TenantID        string    `json:"tenant,omitempty"`
	RunID           RunID     `json:"run,omitempty"`
	Actor           Actor     `json:"actor,omitzero"`
	Reason          string    `json:"reason,omitempty"` // error code of a reject, or a short why
	Evidence        string    `json:"evidence,omitempty"`
	Units           Units     `json:"units"`            // the units the change moved (reserve, spent, …)
	AvailableBefore Units     `json:"available_before"` // tenant's available units before the change
	AvailableAfter  Units     `json:"available_after"`
	// Micros is the money the change moved, as Units does units: a priced
	// run's reserve, cost or released hold (0 for an unpriced run).
	Micros price.Micros `json:"micros,omitempty"`
	Detail string       `json:"detail,omitempty"` // free text: upstream/model, config diff, …
	// Count is how many events the row stands for: 1, except for a reject
	// row, which aggregates the refusals of one tenant with one code within
	// a RefusalInterval (At the first, LastAt the last of them).
	Count  int64     `json:"count"`
	LastAt time.Time `json:"last_at"`
	// Period is the budget period whose books the available figures are
	// ("" for the tenant's row: a tenant that never renews), so that Verify
	// chains each period's rows on their own.
	Period string `json:"period,omitempty"`
	// ProviderID is the run's provider id as known when the row was
	// written (Run.ProviderID; "" before the answer named it).
	ProviderID string `json:"provider_id,omitempty"`
}

// RefusalInterval is the window in which repeated refusals of one tenant
// with one code share one audit row: refusals are audited, but a flood of
// them cannot fill the disk (3,000 refusals wrote 4.4 MB when each had a row).
const RefusalInterval = time.Minute

// AuditFilter selects audit rows; zero values mean "no bound". Rows come
// oldest first (by seq) unless Newest is set: the dashboard reads its page
// newest first below a cursor, and the stores serve each of these fields
// through an index, so that a page costs what it holds, not the ledger.
//
// Actor and Text narrow through an index too, but loosely: a store may
// return rows that only look like a match (an actor's older bare spelling,
// a text's trigrams present but apart), so a reader keeps the rows for
// which AuditMatches holds.
type AuditFilter struct {
	From, To  time.Time
	TenantID  string
	Kind      AuditKind
	RunID     RunID
	Actor     Actor  // the row's actor as ReadActor reads it
	Text      string // case-insensitive substring of reason, evidence, detail, actor or run id
	AfterSeq  int64  // rows with a greater seq
	BeforeSeq int64  // rows with a smaller seq
	Newest    bool   // newest first
	Limit     int
}

// AuditMatches reports whether e is selected by f's fields that narrow
// rows (its bounds, tenant, kind, run, actor and text; not its cursor).
func AuditMatches(f AuditFilter, e AuditEntry) bool {
	switch {
	case !f.From.IsZero() && e.At.Before(f.From),
		!f.To.IsZero() && !e.At.Before(f.To),
		f.TenantID != "" && e.TenantID != f.TenantID,
		f.Kind != "" && e.Kind != f.Kind,
		f.RunID != "" && e.RunID != f.RunID,
		!f.Actor.IsZero() && e.Actor != f.Actor:
		return false
	}
	if f.Text != "" {
		hay := strings.ToLower(strings.Join([]string{e.Reason, e.Evidence, e.Detail, e.Actor.String(), string(e.RunID)}, "\x00"))
		return strings.Contains(hay, strings.ToLower(f.Text))
	}
	return true
}
