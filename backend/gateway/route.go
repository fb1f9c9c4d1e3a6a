package gateway

import (
	"cmp"
	"encoding/json"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/quotagate/quotagate/backend/upstream"
	"github.com/quotagate/quotagate/backend/wire"
)

// Routes says how the upstreams share a model (config `priority` and
// `{name, upstream_model}`). The zero value puts every upstream at priority
// 0, each model under its own name.
type Routes struct {
	Priority map[string]int // by upstream name; absent: 0
	// Renamed maps an upstream's name, then a model's client-visible name,
	// to the name that upstream knows the model by.
	Renamed map[string]map[string]string
}

// route is the targets of one client-visible model name: every upstream
// that lists it, lower priority first, config order within a priority.
type route struct {
	model   string
	targets []routeTarget
	turn    atomic.Uint64 // equal priorities take turns, one call at a time
}

// routeTarget is one upstream of a route.
type routeTarget struct {
	up       Upstream
	model    string // the upstream's name for the model
	priority int
}

// name is how audit rows and messages name the target.
func (t routeTarget) name() string { return t.up.Name() + "/" + t.model }

// routeTable is every model's route, in the order the models were first
// listed (GET /v1/models lists each once, in that order).
type routeTable struct {
	byModel map[string]*route
	order   []*route
}

// newRouteTable builds the routes of ups (config order) under r.
func newRouteTable(ups []Upstream, r Routes) routeTable {
	t := routeTable{byModel: map[string]*route{}}
	for _, u := range ups {
		for _, m := range u.Models() {
			rt := t.byModel[m]
			if rt == nil {
				rt = &route{model: m}
				t.byModel[m] = rt
				t.order = append(t.order, rt)
			}
			name := m
			if n := r.Renamed[u.Name()][m]; n != "" {
				name = n
			}
			rt.targets = append(rt.targets, routeTarget{up: u, model: name, priority: r.Priority[u.Name()]})
		}
	}
	for _, rt := range t.order {
		slices.SortStableFunc(rt.targets, func(a, b routeTarget) int { return cmp.Compare(a.priority, b.priority) })
	}
	return t
}

// of is model's route, nil when no upstream lists it.
func (t routeTable) of(model string) *route { return t.byModel[model] }

// first is the target a call without failover would take: the route's
// first by priority (model lists name it as the model's owner).
func (rt *route) first() routeTarget { return rt.targets[0] }

// order is the targets one call tries, in turn: by priority, and within a
// run of equal priorities rotated by one place per call, so that equal
// upstreams share the calls.
func (rt *route) order() []routeTarget {
	out := slices.Clone(rt.targets)
	if len(out) < 2 {
		return out
	}
	n := rt.turn.Add(1) - 1
	for i := 0; i < len(out); {
		j := i + 1
		for j < len(out) && out[j].priority == out[i].priority {
			j++
		}
		if k := j - i; k > 1 {
			group := out[i:j]
			shift := int(n % uint64(k))
			rotated := append(slices.Clone(group[shift:]), group[:shift]...)
			copy(group, rotated)
		}
		i = j
	}
	return out
}

// renameModel puts the upstream's name for the model into a request
// prepared for it: the top-level "model" member of a JSON body, and the
// model in a Gemini path (/models/{model}:…). Doors build requests under
// the client's name; the core renames once, for every door.
func renameModel(path string, body []byte, from, to string) (string, []byte) {
	if from == to {
		return path, body
	}
	if prefix := upstream.GeminiModelsPath + from + ":"; strings.HasPrefix(path, prefix) {
		path = upstream.GeminiModelsPath + to + ":" + strings.TrimPrefix(path, prefix)
	}
	start, end := -1, -1
	wire.EachMember(body, func(key, val []byte) bool {
		if string(key) != "model" {
			return true
		}
		// val is a subslice of body: where it starts is what its capacity lacks.
		start = cap(body) - cap(val)
		end = start + len(val)
		return false
	})
	if start < 0 {
		return path, body
	}
	name, _ := json.Marshal(to) // a string always marshals
	out := make([]byte, 0, len(body)+len(name))
	out = append(append(out, body[:start]...), name...)
	return path, append(out, body[end:]...)
}

// RouteView is one model's route as the dashboard shows it.
type RouteView struct {
	Model   string
	Targets []TargetView // in priority order; equal priorities take turns from here
}

// TargetView is one target of a route.
type TargetView struct {
	Upstream      string
	UpstreamModel string // the upstream's name for the model
	Priority      int
	// Keys is the upstream's key pool (nil without one): last four
	// characters and rest, never a key.
	Keys []upstream.KeyState
}

// keyedUpstream is an Upstream with a key pool to show. *upstream.Client
// satisfies it.
type keyedUpstream interface{ Keys() []upstream.KeyState }

// Routes is every model's route, in the order the models were first listed.
func (g *Gateway) Routes() []RouteView {
	out := make([]RouteView, 0, len(g.table.order))
	for _, rt := range g.table.order {
		v := RouteView{Model: rt.model, Targets: make([]TargetView, 0, len(rt.targets))}
		for _, t := range rt.targets {
			tv := TargetView{Upstream: t.up.Name(), UpstreamModel: t.model, Priority: t.priority}
			if k, ok := t.up.(keyedUpstream); ok {
				tv.Keys = k.Keys()
			}
			v.Targets = append(v.Targets, tv)
		}
		out = append(out, v)
	}
	return out
}
