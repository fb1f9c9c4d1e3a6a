package admin

import (
	"context"
	"encoding/json"
	"time"

	"github.com/quotagate/quotagate/backend/alert"
	"github.com/quotagate/quotagate/backend/evidence"
	"github.com/quotagate/quotagate/backend/gate"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/quota"
	"github.com/quotagate/quotagate/backend/upstream"
)

// State is the whole live snapshot the dashboard shows (CONTRACTS.md, "Admin
// state JSON"). Lists are never nil, so they encode as [] rather than null.
type State struct {
	Version       string    `json:"version"`
	StartedAt     time.Time `json:"started_at"`
	UptimeSeconds int64     `json:"uptime_seconds"`
	DataDir       string    `json:"data_dir"`
	Addr          string    `json:"addr"`
	Meter         string    `json:"meter"`
	// Currency is the gateway's (ISO 4217), which every *_micros figure
	// and cost is in; absent when the books are in units only.
	Currency string        `json:"currency,omitempty"`
	Demo     bool          `json:"demo"`
	Tenants  []TenantState `json:"tenants"`
	Runs     []ledger.Run  `json:"runs"`  // newest first, at most MaxRuns
	Holds    []ledger.Run  `json:"holds"` // usage pending or unknown
	// Evidence is what the providers reported of the holds, by run: a
	// figure to apply, a refusal, or a lookup still under way; absent when
	// no upstream has a usage_lookup.
	Evidence  map[ledger.RunID]evidence.Finding `json:"evidence,omitempty"`
	Gates     []GateState                       `json:"gates"`
	Quota     []QuotaState                      `json:"quota"`
	Snapshots []ledger.Snapshot                 `json:"snapshots"` // latest first, at most MaxSnapshots
	// Clock is the time the gateway's books run on: always present, so a
	// dashboard can say when it runs off real time (QUOTAGATE_CLOCK_OFFSET).
	Clock ClockState `json:"clock"`
	// Alerts are the thresholds and how the webhook is doing; absent
	// without the alerts key.
	Alerts *alert.Status `json:"alerts,omitempty"`
	// Periods are the last budget periods' spend of each tenant whose
	// budget renews, newest first (at most ledger.PeriodHistoryLength);
	// absent when no tenant's does.
	Periods map[string][]ledger.PeriodSpend `json:"periods,omitempty"`
	// Keys are the key pools of the upstreams that have one (api_keys), by
	// upstream name; absent when none has.
	Keys map[string][]KeyState `json:"keys,omitempty"`
	// Degraded says why the snapshot is partial — "ledger unreachable: …"
	// while a shared ledger's database is away — so that the dashboard says
	// so instead of freezing; absent when the ledger answered.
	Degraded string `json:"degraded,omitempty"`
	// Routes are every model's route: the upstreams that serve it in the
	// order calls try them, and which of them a call would pass over now.
	Routes []RouteState `json:"routes"`
}

// RouteState is one model's route (DESIGN "Routes").
type RouteState struct {
	Model   string        `json:"model"`
	Targets []RouteTarget `json:"targets"` // lower priority first; equal priorities take turns
}

// RouteTarget is one upstream of a route and what it can take now: a call
// passes over a target whose quota guard evicted the model, and one whose
// gate is full while a later one has room; an upstream whose every pool
// key rests refuses.
type RouteTarget struct {
	Upstream      string `json:"upstream"`
	UpstreamModel string `json:"upstream_model"` // the upstream's name for the model
	Priority      int    `json:"priority"`
	Evicted       bool   `json:"evicted"`
	Full          bool   `json:"full"` // every slot of its gate is taken
	// Keys is its key pool: last four characters and until when each
	// rests; empty without a pool.
	Keys []KeyState `json:"keys"`
}

// ClockState is the gateway's clock: how far it runs from real time (a Go
// duration, "0s" on real time) and its reading when the state was built,
// which periods, quota days and run times are in.
type ClockState struct {
	Offset string    `json:"offset"`
	Now    time.Time `json:"now"`
}

// Bounds of the lists in State.
const (
	MaxRuns      = 50
	MaxSnapshots = 20
)

// TenantState is one tenant's balance with its policy. Its JSON is one
// object: the balance's members as the ledger writes them (money budget
// members only for a money budget; the period's only when the budget
// renews), then the limits'.
type TenantState struct {
	ledger.Balance
	TenantLimits
}

// TenantLimits is a tenant's limits as this gateway applies them, its use
// of them here, and whether it is still configured.
type TenantLimits struct {
	// Queued counts the tenant's calls waiting at a gate of this gateway
	// (the gate's queue, however many runs there are; not the listed page).
	Queued        int `json:"queued"`
	MaxConcurrent int `json:"max_concurrent"`
	PerMinute     int `json:"per_minute"`
	PerHour       int `json:"per_hour"`
	// Rate is the tenant's use of its request limits, read from the rate
	// limiter itself; nil when neither window is on. Each gateway counts
	// the calls it admitted (the windows are per gateway).
	Rate *RateUse `json:"rate,omitempty"`
	// Removed: the tenant is no longer configured (deleted on the dashboard
	// or gone from the file); its balance row stays as history.
	Removed bool `json:"removed,omitempty"`
}

// MarshalJSON writes the balance's members and the limits' in one object
// (the embedded balance's own MarshalJSON would otherwise write it alone).
func (t TenantState) MarshalJSON() ([]byte, error) {
	balance, err := json.Marshal(t.Balance)
	if err != nil {
		return nil, err
	}
	limits, err := json.Marshal(t.TenantLimits)
	if err != nil {
		return nil, err
	}
	return append(append(balance[:len(balance)-1], ','), limits[1:]...), nil
}

// RateUse is one tenant's position in its sliding request windows (seed 003).
type RateUse struct {
	LastMinute int    `json:"last_minute"` // admitted calls younger than a minute
	LastHour   int    `json:"last_hour"`   // admitted calls younger than an hour (0 when per_hour is off)
	Refused    uint64 `json:"refused"`     // calls refused with 429 rate_limited since the gateway started
}

// GateState is one upstream gate's queue (seed 003), as the gate reports it.
type GateState = gate.State

// KeyState is one key of an upstream's pool as the client reports it: its
// last four characters and until when it rests, never the key.
type KeyState = upstream.KeyState

// QuotaState is one guarded model's quota guard (seed 002), as the guard
// reports it.
type QuotaState = quota.Row

// StateSource builds the current State; the server assembles it from the
// ledger, the gates and the quota guards.
type StateSource interface {
	State(ctx context.Context) (State, error)
}

// StateFunc adapts a function to StateSource.
type StateFunc func(ctx context.Context) (State, error)

// State calls f.
func (f StateFunc) State(ctx context.Context) (State, error) { return f(ctx) }

// Normalize replaces nil lists with empty ones so the JSON carries [].
func (s *State) Normalize() {
	if s.Tenants == nil {
		s.Tenants = []TenantState{}
	}
	if s.Runs == nil {
		s.Runs = []ledger.Run{}
	}
	if s.Holds == nil {
		s.Holds = []ledger.Run{}
	}
	if s.Gates == nil {
		s.Gates = []GateState{}
	}
	if s.Quota == nil {
		s.Quota = []QuotaState{}
	}
	if s.Snapshots == nil {
		s.Snapshots = []ledger.Snapshot{}
	}
	if s.Routes == nil {
		s.Routes = []RouteState{}
	}
	for i := range s.Routes {
		for j := range s.Routes[i].Targets {
			if s.Routes[i].Targets[j].Keys == nil {
				s.Routes[i].Targets[j].Keys = []KeyState{}
			}
		}
	}
}
