package admin

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/quotagate/quotagate/backend/alert"
	"github.com/quotagate/quotagate/backend/evidence"
	"github.com/quotagate/quotagate/backend/ledger"
)

// Delta is what changed between two States a dashboard socket sent, so that
// a burst of commits costs the page a few rows, not a whole snapshot per
// change. Keyed lists (runs, holds, tenants) carry the rows that changed or
// appeared and the keys that left, plus the new order when it moved; the
// small lists (gates, quota, snapshots) are replaced whole when they differ.
// Messages carry a sequence number: a page that misses one re-reads the state.
type Delta struct {
	UptimeSeconds int64 `json:"uptime_seconds"`
	// Clock moves with every snapshot, like the uptime, so it is always sent.
	Clock ClockState `json:"clock"`

	Runs       []ledger.Run   `json:"runs,omitempty"`
	RunsGone   []ledger.RunID `json:"runs_gone,omitempty"`
	RunsOrder  []ledger.RunID `json:"runs_order,omitempty"`
	Holds      []ledger.Run   `json:"holds,omitempty"`
	HoldsGone  []ledger.RunID `json:"holds_gone,omitempty"`
	HoldsOrder []ledger.RunID `json:"holds_order,omitempty"`

	Tenants     []TenantState `json:"tenants,omitempty"`
	TenantsGone []string      `json:"tenants_gone,omitempty"`
	TenantOrder []string      `json:"tenant_order,omitempty"`

	Gates     []GateState       `json:"gates,omitempty"`
	Quota     []QuotaState      `json:"quota,omitempty"`
	Snapshots []ledger.Snapshot `json:"snapshots,omitempty"`
	// Alerts is the alerts' status when it changed (a webhook starting or
	// ceasing to fail, alerts waiting), so the dashboard's banner follows.
	Alerts *alert.Status `json:"alerts,omitempty"`
	// Periods is the tenants' period history when it changed, whole.
	Periods map[string][]ledger.PeriodSpend `json:"periods,omitempty"`
	// Keys is the key pools when a key started or ended its rest, whole.
	Keys map[string][]KeyState `json:"keys,omitempty"`
	// Evidence is the holds' provider findings when one changed, whole
	// ({} when none is left).
	Evidence *map[ledger.RunID]evidence.Finding `json:"evidence,omitempty"`
	// Degraded is State.Degraded when it changed ("" once the ledger
	// answers again), so the dashboard's banner comes and goes with it.
	Degraded *string `json:"degraded,omitempty"`
	// Routes is every route when a target was evicted, filled or freed, whole.
	Routes []RouteState `json:"routes,omitempty"`
	// Header is the state's other fields when one of them changed (version,
	// addr, meter, demo, data dir).
	Header *Header `json:"header,omitempty"`
}

// Header is the part of State that is neither a list nor the uptime or clock.
type Header struct {
	Version string `json:"version"`
	DataDir string `json:"data_dir"`
	Addr    string `json:"addr"`
	Meter   string `json:"meter"`
	Demo    bool   `json:"demo"`
}

func headerOf(s State) Header {
	return Header{Version: s.Version, DataDir: s.DataDir, Addr: s.Addr, Meter: s.Meter, Demo: s.Demo}
}

// Empty reports whether d carries nothing but the uptime and the clock.
func (d Delta) Empty() bool {
	return len(d.Runs)+len(d.RunsGone)+len(d.RunsOrder)+len(d.Holds)+len(d.HoldsGone)+len(d.HoldsOrder)+
		len(d.Tenants)+len(d.TenantsGone)+len(d.TenantOrder) == 0 &&
		d.Gates == nil && d.Quota == nil && d.Snapshots == nil && d.Alerts == nil && d.Periods == nil && d.Keys == nil && d.Evidence == nil && d.Routes == nil && d.Header == nil
}

// Diff is the Delta that turns prev into next.
func Diff(prev, next State) Delta {
	d := Delta{UptimeSeconds: next.UptimeSeconds, Clock: next.Clock}
	d.Runs, d.RunsGone, d.RunsOrder = diffKeyed(prev.Runs, next.Runs, runKey)
	d.Holds, d.HoldsGone, d.HoldsOrder = diffKeyed(prev.Holds, next.Holds, runKey)
	d.Tenants, d.TenantsGone, d.TenantOrder = diffKeyed(prev.Tenants, next.Tenants, func(t TenantState) string { return t.TenantID })
	if !sameJSON(prev.Gates, next.Gates) {
		d.Gates = next.Gates
	}
	if !sameJSON(prev.Quota, next.Quota) {
		d.Quota = next.Quota
	}
	if !sameJSON(prev.Snapshots, next.Snapshots) {
		d.Snapshots = next.Snapshots
	}
	if next.Alerts != nil && !sameJSON(prev.Alerts, next.Alerts) {
		d.Alerts = next.Alerts
	}
	if next.Periods != nil && !sameJSON(prev.Periods, next.Periods) {
		d.Periods = next.Periods
	}
	if next.Keys != nil && !sameJSON(prev.Keys, next.Keys) {
		d.Keys = next.Keys
	}
	if prev.Degraded != next.Degraded {
		why := next.Degraded
		d.Degraded = &why
	}
	if !sameJSON(prev.Evidence, next.Evidence) {
		e := next.Evidence
		if e == nil {
			e = map[ledger.RunID]evidence.Finding{}
		}
		d.Evidence = &e
	}
	if !sameJSON(prev.Routes, next.Routes) {
		d.Routes = next.Routes
	}
	if h := headerOf(next); h != headerOf(prev) {
		d.Header = &h
	}
	return d
}

func runKey(r ledger.Run) ledger.RunID { return r.ID }

// diffKeyed returns the rows of next that are new or changed, the keys of
// prev that are gone, and next's key order when it differs from what prev's
// order becomes after the removals and appends.
func diffKeyed[T any, K comparable](prev, next []T, key func(T) K) (changed []T, gone []K, order []K) {
	old := make(map[K][]byte, len(prev))
	for _, r := range prev {
		old[key(r)] = mustJSON(r)
	}
	inNext := make(map[K]bool, len(next))
	for _, r := range next {
		k := key(r)
		inNext[k] = true
		if b, ok := old[k]; !ok || !bytes.Equal(b, mustJSON(r)) {
			changed = append(changed, r)
		}
	}
	var kept []K
	for _, r := range prev {
		if k := key(r); !inNext[k] {
			gone = append(gone, k)
		} else {
			kept = append(kept, k)
		}
	}
	nextKeys := make([]K, len(next))
	for i, r := range next {
		nextKeys[i] = key(r)
	}
	// Without an order the page keeps the old order and appends new rows.
	implied := kept
	for _, r := range next {
		if _, ok := old[key(r)]; !ok {
			implied = append(implied, key(r))
		}
	}
	if !slices.Equal(implied, nextKeys) {
		order = nextKeys
		if order == nil {
			order = []K{}
		}
	}
	return changed, gone, order
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return nil // the state is plain data; an error would be a programming bug
	}
	return b
}

func sameJSON(a, b any) bool { return bytes.Equal(mustJSON(a), mustJSON(b)) }

// Apply returns s with d applied: what a page does with a delta message.
func (s State) Apply(d Delta) State {
	s.UptimeSeconds, s.Clock = d.UptimeSeconds, d.Clock
	s.Runs = applyKeyed(s.Runs, d.Runs, d.RunsGone, d.RunsOrder, runKey)
	s.Holds = applyKeyed(s.Holds, d.Holds, d.HoldsGone, d.HoldsOrder, runKey)
	s.Tenants = applyKeyed(s.Tenants, d.Tenants, d.TenantsGone, d.TenantOrder, func(t TenantState) string { return t.TenantID })
	s.Gates, s.Quota, s.Snapshots = whole(s.Gates, d.Gates), whole(s.Quota, d.Quota), whole(s.Snapshots, d.Snapshots)
	s.Periods, s.Keys = wholeMap(s.Periods, d.Periods), wholeMap(s.Keys, d.Keys)
	s.Routes = whole(s.Routes, d.Routes)
	if d.Alerts != nil {
		s.Alerts = d.Alerts
	}
	if d.Evidence != nil {
		s.Evidence = *d.Evidence
		if len(s.Evidence) == 0 {
			s.Evidence = nil
		}
	}
	if d.Degraded != nil {
		s.Degraded = *d.Degraded
	}
	if h := d.Header; h != nil {
		s.Version, s.DataDir, s.Addr, s.Meter, s.Demo = h.Version, h.DataDir, h.Addr, h.Meter, h.Demo
	}
	return s
}

// whole is a list the delta sends whole when it changed: the delta's
// when it carries one, else the page's as it was.
func whole[S ~[]E, E any](page, delta S) S {
	if delta == nil {
		return page
	}
	return delta
}

// wholeMap is whole for a map.
func wholeMap[M ~map[K]V, K comparable, V any](page, delta M) M {
	if delta == nil {
		return page
	}
	return delta
}

func applyKeyed[T any, K comparable](rows, changed []T, gone, order []K, key func(T) K) []T {
	byKey := make(map[K]T, len(rows)+len(changed))
	keys := make([]K, 0, len(rows)+len(changed))
	for _, r := range rows {
		byKey[key(r)] = r
		keys = append(keys, key(r))
	}
	for _, r := range changed {
		k := key(r)
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = r
	}
	for _, k := range gone {
		delete(byKey, k)
	}
	if order != nil {
		keys = order
	}
	out := make([]T, 0, len(keys))
	for _, k := range keys {
		if r, ok := byKey[k]; ok {
			out = append(out, r)
		}
	}
	return out
}
