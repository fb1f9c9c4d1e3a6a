package ledger

import (
	"time"

	"github.com/quotagate/quotagate/backend/price"
)

// RunID identifies one admitted call; it is also the idempotency key of
// every transition of that run.
type RunID string

// RunStatus is where a run is in its life.
type RunStatus string

const (
	RunQueued      RunStatus = "queued"      // admitted, hold taken, waiting at the upstream gate
	RunActive      RunStatus = "active"      // the upstream call is in flight
	RunCompleted   RunStatus = "completed"   // ended normally
	RunInterrupted RunStatus = "interrupted" // cut by the upstream, or the process died mid-run
	RunCancelled   RunStatus = "cancelled"   // cancelled by its owner, the operator or the client's disconnect
	RunFailed      RunStatus = "failed"      // the upstream refused or could not be reached
)

// Ended reports whether the run can no longer change status.
func (s RunStatus) Ended() bool {
	switch s {
	case RunQueued, RunActive:
		return false
	case RunCompleted, RunInterrupted, RunCancelled, RunFailed:
		return true
	}
	return true
}

// UsageStatus says what the ledger knows of a run's true cost.
type UsageStatus string

const (
	UsagePending    UsageStatus = "pending"    // run not ended yet; hold in place
	UsageTrusted    UsageStatus = "trusted"    // settled on trusted usage; hold gone
	UsageUnknown    UsageStatus = "unknown"    // evidence missing or contradictory; hold kept
	UsageReconciled UsageStatus = "reconciled" // an operator settled it with evidence; hold gone
	UsageReleased   UsageStatus = "released"   // proof the provider did no work; spent 0, hold gone
)

// Holding reports whether a run in this usage state still holds its reserve.
func (u UsageStatus) Holding() bool { return u == UsagePending || u == UsageUnknown }

// Run is one admitted call.
type Run struct {
	ID           RunID       `json:"id"`
	TenantID     string      `json:"tenant"`
	Upstream     string      `json:"upstream"`
	Model        string      `json:"model"`
	QuotaDay     string      `json:"quota_day,omitempty"` // the guarded model's day (YYYY-MM-DD) at admission
	Status       RunStatus   `json:"status"`
	Usage        UsageStatus `json:"usage"`
	ReserveUnits Units       `json:"reserve_units"`
	SpentUnits   Units       `json:"spent_units"`
	HeldUnits    Units       `json:"held_units"` // ReserveUnits while Usage.Holding(), else 0
	// OverrunUnits are trusted units beyond the reserve: never charged to the
	// tenant (available stays ≥ 0), but counted in a guarded model's quota day.
	OverrunUnits Units `json:"overrun_units,omitempty"`
	// InputUnits is the counted input part of ReserveUnits (0 for runs
	// recorded before it was kept): a reconcile without a cost prices its
	// units as this input first, the rest as output.
	InputUnits Units `json:"input_units,omitempty"`
	// Prices are the model's prices when the run was admitted (nil: the
	// model had none, and the run costs nothing); a held run keeps them
	// across a price change and a restart. JSON "prices" (see MarshalJSON).
	Prices *price.Price `json:"-"`
	// ReserveMicros is what the run reserved in money: its counted input
	// and output cap at Prices. CostMicros is what it was charged: the cost
	// of its trusted (or reconciled) usage at most ReserveMicros, the rest
	// OverrunMicros, never charged (as OverrunUnits). JSON "cost" is
	// CostMicros as a decimal string.
	ReserveMicros price.Micros `json:"reserve_micros"`
	CostMicros    price.Micros `json:"cost_micros"`
	OverrunMicros price.Micros `json:"overrun_micros,omitempty"`
	Evidence      string       `json:"evidence,omitempty"`
	// Instance is the gateway that admitted and relays the run, on a ledger
	// several gateways share (backend/postgres); "" on a gateway's own.
	Instance string `json:"instance,omitempty"`
	// Door is the front door the call came in by ("chat", "responses",
	// "messages"); UpstreamProtocol the protocol it was relayed to the
	// upstream in: the door's own (native) or "chat" (translated). Both ""
	// for runs recorded before they were kept.
	Door             string `json:"door"`
	UpstreamProtocol string `json:"upstream_protocol"`
	// IdempotencyKey is the client's Idempotency-Key header ("" when none);
	// RetryCount its X-Stainless-Retry-Count (0 on a first attempt or
	// without the header).
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	RetryCount     int    `json:"retry_count"`
	// RetryOf is the earlier run of the same tenant this run retries (its
	// retry group, decided at admission; see AdmitRequest), "" when none.
	RetryOf RunID `json:"retry_of,omitempty"`
	// Attempts is how many attempts of its call, this one included, the
	// gateway admitted by the time it admitted this run: 1 unless the call
	// failed over to it from another target of its route (DESIGN "Routes").
	// The answering run's Attempts is the call's. FailoverOf is the attempt
	// before it, whose hold was released before this one was admitted (""
	// on a first attempt): following it from the run X-Run-Id names walks
	// back through every earlier attempt of the call.
	Attempts   int   `json:"attempts"`
	FailoverOf RunID `json:"failover_of,omitempty"`
	// CachedTokens is the part of the trusted prompt the provider served
	// from its cache (OpenAI prompt_tokens_details.cached_tokens, Responses
	// input_tokens_details.cached_tokens, Anthropic cache_read_input_tokens),
	// recorded at Settle; shown, never priced differently.
	CachedTokens int64 `json:"cached_tokens"`
	// ProviderID is the provider's own id of the call, as its answer gave
	// it (chat's first chunk id, the Responses response id, the Messages
	// message id, Gemini's responseId), translated or native alike; ""
	// when the answer carried none. It is what a usage lookup asks the
	// provider about (backend/evidence).
	ProviderID string `json:"provider_id"`
	// RelayedUnits is the output the gateway relayed to the client, under
	// the run's meter, recorded at its end (0 before it was kept): a
	// provider's figure with less output contradicts what was relayed.
	RelayedUnits Units `json:"relayed_units,omitempty"`
	// Period is the budget period of its tenant the run was admitted in
	// ("2026-12"; "" when the tenant's budget never renews): the books its
	// hold, settlement and reconcile move.
	Period    string    `json:"period,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Translated reports whether the run was relayed in another protocol than
// its door's (translated to chat completions and back).
func (r Run) Translated() bool {
	return r.Door != "" && r.UpstreamProtocol != "" && r.Door != r.UpstreamProtocol
}

// QuotaCheck asks Admit to also enforce a guarded model's daily limit, in the
// same atomic step: usage_today + held_in_flight + reserve ≤ LimitUnits, where
// both sums cover runs of (Upstream, Model) with QuotaDay == Day.
type QuotaCheck struct {
	Day        string // YYYY-MM-DD in the quota's time zone
	LimitUnits Units
}

// AdmitRequest is one call asking for admission.
type AdmitRequest struct {
	RunID        RunID
	TenantID     string
	Upstream     string
	Model        string
	ReserveUnits Units
	// InputUnits is the counted input part of ReserveUnits (Run.InputUnits).
	InputUnits Units
	// ReserveMicros is the reserve's cost at Prices (price.Price.ReserveCost);
	// Prices the model's prices, nil when it has none — refused with
	// CodeModelUnpriced for a tenant with a money budget.
	ReserveMicros price.Micros
	Prices        *price.Price
	Queued        bool        // start as RunQueued (waiting at the gate) instead of RunActive
	Quota         *QuotaCheck // nil: the model is not guarded
	Actor         Actor       // who asked, for the audit row; the zero Actor means the tenant itself

	// Door and UpstreamProtocol are recorded on the run as they are.
	Door             string
	UpstreamProtocol string
	// IdempotencyKey, when set, makes Admit refuse the call with
	// CodeDuplicateRequest while a run of the same tenant admitted within
	// IdempotencyWindow carries the same key and did not end released — a
	// run that provably cost nothing (ReleaseHold) does not use its key up,
	// so the retry of a call the provider refused is admitted, with RetryOf
	// naming the latest run with the key. Decided in the admission's atomic
	// step: of concurrent calls with one key, exactly one is admitted.
	// At most MaxIdempotencyKeyBytes of visible ASCII (CheckIdempotencyKey).
	IdempotencyKey string
	// RetryCount is the client's X-Stainless-Retry-Count.
	RetryCount int
	// Fingerprint identifies the request's body (a hash; "" for none). A
	// call without a key whose RetryCount is n > 0 gets as RetryOf the
	// latest run of the tenant within IdempotencyWindow with the same
	// fingerprint and RetryCount n − 1: the SDK's previous attempt. Kept on
	// the run row only, never shown.
	Fingerprint string
	// Attempt is the call's attempt this run is (Run.Attempts; 0 means 1)
	// and FailoverOf the attempt before it (Run.FailoverOf).
	Attempt    int
	FailoverOf RunID
}

// IdempotencyWindow is how long a run's Idempotency-Key refuses another call
// of its tenant with the same key: a day, longer than any client's retries
// of one call.
const IdempotencyWindow = 24 * time.Hour

// MaxIdempotencyKeyBytes bounds an Idempotency-Key (Stripe's limit; the
// Stainless SDKs' keys are about 60 bytes).
const MaxIdempotencyKeyBytes = 255

// CheckIdempotencyKey reports CodeInvalidRequest unless key is empty or 1 to
// MaxIdempotencyKeyBytes bytes of visible ASCII (no spaces or controls: it
// is shown on the dashboard and written to the audit trail).
func CheckIdempotencyKey(key string) error {
	if len(key) > MaxIdempotencyKeyBytes {
		return Errorf(CodeInvalidRequest, "the Idempotency-Key header is %d bytes long; at most %d are allowed", len(key), MaxIdempotencyKeyBytes)
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x21 || key[i] > 0x7e {
			return Errorf(CodeInvalidRequest, "the Idempotency-Key header may hold only visible ASCII characters (byte %d is not)", i)
		}
	}
	return nil
}

// MaxRetryCount bounds a recorded RetryCount (an SDK retries a handful of times).
const MaxRetryCount = 1000

// Settlement is what Store.SettleUsage records of a run's trusted usage.
type Settlement struct {
	Units        Units  // what the provider reported, as Settle's units
	CachedTokens int64  // Run.CachedTokens; 0 ≤ CachedTokens ≤ MaxUnits
	Evidence     string // the verdict's line
	// Usage is the trusted usage Units came from, which the run's cost is
	// priced from (every token at its own price); nil prices Units as a
	// reconcile without a cost does (price.ReconcileTokens).
	Usage *Usage
}

// Reconciliation is what Store.ReconcileCost records of a held run: its
// units, and the provider's bill when known (HasCost: CostMicros, at most
// the run's ReserveMicros), else the units priced at the run's prices as
// its input first, the rest as output (price.ReconcileTokens).
//
// A provider's own figure (FromProvider) may exceed the reserve: the
// tenant is then charged the reserve and the rest is kept as the run's
// overrun, as a settlement on trusted usage does; its Tokens, the
// provider's split of Units, are priced each at its own price (none:
// Units as the input first, the rest as output). An operator's figure
// above the reserve is refused.
type Reconciliation struct {
	Units        Units
	CostMicros   price.Micros
	HasCost      bool
	Evidence     string
	FromProvider bool
	Tokens       *price.Tokens
}

// RunFilter selects runs for listing.
//
// Runs come newest first (by admission, then by the order they were
// written); Before pages down that order through the index each listing
// has (all runs, a tenant's, the holding ones), so that a page reads about
// the runs it returns.
type RunFilter struct {
	TenantID    string
	HoldingOnly bool  // only runs whose usage is pending or unknown
	Before      RunID // only runs listed after this one ("": from the newest); CodeRunNotFound if there is none
	Limit       int   // 0 or less: DefaultRunsLimit
}

// DefaultRunsLimit is how many runs Store.Runs returns when the filter sets
// no limit.
const DefaultRunsLimit = 100

// RunsLimit is how many runs f asks for: its Limit, or DefaultRunsLimit.
func (f RunFilter) RunsLimit() int {
	if f.Limit <= 0 {
		return DefaultRunsLimit
	}
	return f.Limit
}
