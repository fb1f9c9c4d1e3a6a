package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/admin"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/upstream/demo"
)

// TestSeed002Route: seed 002's route — a guarded free-quota endpoint first,
// the paid endpoint second, two demo upstreams standing in for Ark — under
// a scripted eviction: the free endpoint's daily cap runs out partway.
// No call is refused while a target can serve it, nothing is billed on the
// free endpoint past its guard, and once it is evicted the paid endpoint
// takes every call, the route view saying so.
func TestSeed002Route(t *testing.T) {
	t.Parallel()
	free, paid := startDemo(t, "flash-ga"), startDemo(t, "flash")
	const dailyCap, usageWall = 4000, 3000
	r := newRig(t, rigOptions{extraUpstreams: fmt.Sprintf(`  - {name: ark-free, base_url: %q, priority: 0, models: [{name: flash, upstream_model: flash-ga}],
     quota: {daily_cap: %d, usage_wall: %d, small_buffer: 100, balance_wall: 100, burst_sync: 100, timezone: Asia/Shanghai, balance: {kind: manual}}}
  - {name: ark-paid, base_url: %q, priority: 1, models: [flash]}`, free.URL(), dailyCap, usageWall, paid.URL())})
	// The provider console's figure for today's free quota: the guard's b0.
	if got := r.admin("POST", "/admin/api/quota/ark-free/flash/balance", fmt.Sprintf(`{"b0": %d}`, dailyCap)); got.status != http.StatusOK {
		t.Fatalf("b0: %d %s", got.status, got.body)
	}
	body := strings.Replace(chatBody("问题: how far is the free quota?", false, 64), `"demo-chat"`, `"flash"`, 1)
	const calls = 120
	served := map[string]int{}
	for i := range calls {
		got := r.chat(r.keyA, body)
		if got.status != http.StatusOK {
			t.Fatalf("call %d refused while the paid endpoint could serve it: %d %s", i, got.status, got.body)
		}
		served[r.waitRun(got.runID()).Upstream]++
	}
	st := routeState(t, r)
	var freeRow *admin.QuotaState
	for i := range st.Quota {
		if st.Quota[i].Upstream == "ark-free" && st.Quota[i].Model == "flash" {
			freeRow = &st.Quota[i]
		}
	}
	if freeRow == nil {
		t.Fatalf("no quota row for ark-free/flash: %+v", st.Quota)
	}
	billedFree := spentAt(t, r, "ark-free")
	t.Logf("seed-002 route: %d calls, %d served by ark-free, %d by ark-paid; ark-free billed %d units (guard limit %d, usage wall %d, daily cap %d), evicted=%v (%s); refused 0",
		calls, served["ark-free"], served["ark-paid"], billedFree, freeRow.Limit, usageWall, dailyCap, freeRow.Evicted, freeRow.EvictedReason)
	if served["ark-free"] == 0 || served["ark-paid"] == 0 || !freeRow.Evicted {
		t.Fatalf("served %v, free evicted %v: the scripted eviction did not move the calls", served, freeRow.Evicted)
	}
	if billedFree > ledger.Units(dailyCap) || freeRow.UsageToday > ledger.Units(dailyCap) {
		t.Fatalf("ark-free billed %d units (usage today %d), past its daily cap %d", billedFree, freeRow.UsageToday, dailyCap)
	}
	if n := free.Stats().Received; n != served["ark-free"] {
		t.Fatalf("ark-free saw %d calls and served %d: a call reached it past its guard", n, served["ark-free"])
	}
	if len(st.Routes) == 0 {
		t.Fatal("no routes in the admin state")
	}
	for _, rt := range st.Routes {
		if rt.Model == "flash" {
			if len(rt.Targets) != 2 || rt.Targets[0].Upstream != "ark-free" || !rt.Targets[0].Evicted ||
				rt.Targets[0].UpstreamModel != "flash-ga" || rt.Targets[1].Upstream != "ark-paid" || rt.Targets[1].Evicted {
				t.Fatalf("route of flash: %+v", rt)
			}
		}
	}
	r.verify()
}

func startDemo(t *testing.T, model string) *demo.Server {
	t.Helper()
	d, err := demo.Start(demo.Options{Models: []string{model}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// routeState reads /admin/api/state.
func routeState(t *testing.T, r *rig) admin.State {
	t.Helper()
	got := r.admin("GET", "/admin/api/state", "")
	var st admin.State
	if err := json.Unmarshal(got.body, &st); err != nil {
		t.Fatalf("state: %v: %s", err, got.body)
	}
	return st
}

// spentAt is the units the ledger charged on runs at upstream.
func spentAt(t *testing.T, r *rig, upstream string) ledger.Units {
	t.Helper()
	runs, err := r.s.Store().Runs(context.Background(), ledger.RunFilter{Limit: 1_000_000})
	if err != nil {
		t.Fatal(err)
	}
	var n ledger.Units
	for _, run := range runs {
		if run.Upstream == upstream {
			n += run.SpentUnits + run.HeldUnits
		}
	}
	return n
}
