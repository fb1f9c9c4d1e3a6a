package admin_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/admin"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/price"
	"github.com/quotagate/quotagate/backend/upstream"
)

var update = flag.Bool("update", false, "rewrite golden files")

// goldenState has a row in every list, with figures from the seeds: 102
// reserved and 15 settled (000), a 1002-unit hold, the 2,242,178 b0 (002).
func goldenState() admin.State {
	t0 := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	demoChat := price.Quote{Input: 1_000_000, CachedInput: 250_000, CacheWrite: 1_250_000, Output: 4_000_000}.Price()
	deepseek := price.Quote{Input: 2_000_000, CachedInput: 500_000, CacheWrite: 2_000_000, Output: 8_000_000}.Price()
	held := ledger.Run{ID: "run_01JQ7UNKNOWN000000000000", TenantID: "local", Upstream: "ark", Model: "deepseek-v4-flash",
		QuotaDay: "2026-11-29", Status: ledger.RunInterrupted, Usage: ledger.UsageUnknown, ReserveUnits: 1002,
		HeldUnits: 1002, Evidence: "stream cut before [DONE]", CreatedAt: t0.Add(40 * time.Minute), UpdatedAt: t0.Add(40*time.Minute + 12*time.Second),
		Door: "messages", UpstreamProtocol: "chat", IdempotencyKey: "stainless-node-retry-5b1f0c2e", RetryCount: 1,
		RetryOf: "run_01JQ7RELEASED00000000000", ProviderID: "chatcmpl-8f2c1e", RelayedUnits: 40, Attempts: 1,
		// deepseek's prices in CNY: 2 input + 1000 output tokens reserved
		InputUnits: 2, Prices: &deepseek, ReserveMicros: 8_004}
	done := ledger.Run{ID: "run_01JQ7DONE000000000000000", TenantID: "tenant-a", Upstream: "demo", Model: "demo-chat",
		Status: ledger.RunCompleted, Usage: ledger.UsageTrusted, ReserveUnits: 102, SpentUnits: 15,
		CreatedAt: t0.Add(-time.Minute), UpdatedAt: t0.Add(-58 * time.Second),
		Door: "chat", UpstreamProtocol: "chat", CachedTokens: 4,
		// the second attempt of its call: the first target refused it before any output
		Attempts: 2, FailoverOf: "run_01JQ7FAILEDOVER000000000",
		// demo-chat at 1.00 / 0.25 / 1.25 / 4.00: 2 input + 100 output
		// reserved is 402 micros; 7 uncached + 4 cached in, 4 out cost 24
		InputUnits: 2, Prices: &demoChat, ReserveMicros: 402, CostMicros: 24}
	return admin.State{
		Version: "0.1.0", StartedAt: t0, UptimeSeconds: 3725, DataDir: "/root/.local/share/quotagate",
		Addr: "127.0.0.1:8787", Meter: "tiktoken", Demo: true, Currency: "CNY",
		Tenants: []admin.TenantState{
			{Balance: ledger.Balance{TenantID: "local", BudgetUnits: 1_000_000, SpentUnits: 0, HeldUnits: 1002, AvailableUnits: 998_998, Active: 1,
				HeldMicros: 8_004}, TenantLimits: admin.TenantLimits{Queued: 1, MaxConcurrent: 4}},
			{Balance: ledger.Balance{TenantID: "tenant-a", BudgetUnits: 110, SpentUnits: 15, AvailableUnits: 95,
				HasMoneyBudget: true, BudgetMicros: 50_000_000, SpentMicros: 24, AvailableMicros: 49_999_976},
				TenantLimits: admin.TenantLimits{MaxConcurrent: 1, PerMinute: 10, PerHour: 120,
					Rate: &admin.RateUse{LastMinute: 10, LastHour: 22, Refused: 1}}}, // seed 003: the 11th call in a minute is refused
			{Balance: ledger.Balance{TenantID: "gone", BudgetUnits: 500, SpentUnits: 102, AvailableUnits: 398}, TenantLimits: admin.TenantLimits{Removed: true}},
		},
		Runs:  []ledger.Run{held, done},
		Holds: []ledger.Run{held},
		Gates: []admin.GateState{{Upstream: "demo", MaxConcurrent: 2, InFlight: 1, Queued: 0, MaxWaiters: 4, MaxWaitMS: 8000, Admitted: 1234}},
		Quota: []admin.QuotaState{{Upstream: "ark", Model: "deepseek-v4-flash", Day: "2026-11-29", UsageToday: 1_696_135,
			HeldInFlight: 1002, BalanceAtSync: 1_726_526, UsageAtSync: 515_652, SyncedAt: ptr(t0.Add(time.Hour)), LagSeconds: 840,
			B0Estimate: 2_242_178, Limit: 2_192_178, LimitV6: 2_192_128, Evicted: true, EvictedReason: "usage wall reached"}},
		Snapshots: []ledger.Snapshot{{ID: 2, Upstream: "ark", Model: "deepseek-v4-flash", Day: "2026-11-29", At: t0.Add(time.Hour),
			BalanceUnits: 1_726_526, UsageAtSync: 515_652, LimitUnits: 2_192_178, LimitV6Units: 2_192_128, B0Units: 2_242_178,
			LagSeconds: 840, Source: "volcengine"}},
		Clock: admin.ClockState{Offset: "72h0m0s", Now: t0.Add(3725 * time.Second)},
		// seed 002's route: the guarded free endpoint (evicted, one pool key
		// resting after a 401) first, the paid one after it
		Routes: []admin.RouteState{{Model: "deepseek-v4-flash", Targets: []admin.RouteTarget{
			{Upstream: "ark-free", UpstreamModel: "deepseek-v4-flash-ga-260731", Evicted: true,
				Keys: []upstream.KeyState{{Last4: "7f3a"}, {Last4: "c0de", RestingUntil: t0.Add(10 * time.Minute), Why: "401"}}},
			{Upstream: "ark-paid", UpstreamModel: "deepseek-v4-flash", Priority: 1, Full: true, Keys: []upstream.KeyState{}},
		}}},
	}
}

// TestStateGolden pins the state JSON; the dashboard's contract test reads
// the same file (STYLE §9), so a renamed field fails on both sides.
func TestStateGolden(t *testing.T) {
	matchGolden(t, "state.golden.json", goldenState(), "state JSON", "tell the dashboard")
}

// matchGolden holds v's indented JSON (named what) to testdata/file; -update
// rewrites the file, then the dashboard's side needs what then says.
func matchGolden(t *testing.T, file string, v any, what, then string) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", file)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs from %s (if intended, go test -update and %s):\n%s", what, path, then, got)
	}
}

func TestNormalizeGivesEmptyLists(t *testing.T) {
	var s admin.State
	s.Normalize()
	b, _ := json.Marshal(s)
	var m map[string]json.RawMessage
	_ = json.Unmarshal(b, &m)
	for _, k := range []string{"tenants", "runs", "holds", "gates", "quota", "snapshots"} {
		if string(m[k]) != "[]" {
			t.Errorf("%s = %s, want []", k, m[k])
		}
	}
}

func ptr[T any](v T) *T { return &v }
