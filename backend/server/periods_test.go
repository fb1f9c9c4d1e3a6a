package server_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// A tenant whose budget renews shows its current period on GET /v1/balance
// and in the admin state, with its last periods' spend; one that never
// renews shows none.
func TestPeriodsInBalanceAndState(t *testing.T) {
	s := openYAML(t, `
meter: utf8-bytes-v1
timezone: Pacific/Kiritimati
tenants:
  - {id: a, key: sk-test-aaaaaaaa, budget_units: 100000, max_concurrent: 4, budget_period: month}
  - {id: b, key: sk-test-bbbbbbbb, budget_units: 100000, max_concurrent: 4}
upstreams:
  - {name: demo, kind: demo, models: [demo-chat]}
`)
	if code, _ := chatPlan(t, s, "sk-test-aaaaaaaa", ""); code != 200 {
		t.Fatalf("chat: %d", code)
	}
	kiritimati, _ := time.LoadLocation("Pacific/Kiritimati")
	month := time.Now().In(kiritimati).Format("2006-01")
	var bal struct {
		Period      string    `json:"period"`
		PeriodStart time.Time `json:"period_start"`
		PeriodEnd   time.Time `json:"period_end"`
		SpentUnits  int64     `json:"spent_units"`
	}
	getJSON(t, s, "/v1/balance", "sk-test-aaaaaaaa", &bal)
	if bal.Period != month || bal.PeriodStart.Day() != 1 || !bal.PeriodEnd.After(time.Now()) || bal.SpentUnits == 0 {
		t.Fatalf("balance of a monthly tenant = %+v, want period %s", bal, month)
	}
	var raw map[string]any
	getJSON(t, s, "/v1/balance", "sk-test-bbbbbbbb", &raw)
	if _, ok := raw["period"]; ok {
		t.Fatalf("a budget that never renews names a period: %v", raw)
	}
	st, err := s.State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(st)
	var state struct {
		Tenants []struct {
			Tenant string `json:"tenant"`
			Period string `json:"period"`
		} `json:"tenants"`
		Periods map[string][]struct {
			Period     string `json:"period"`
			SpentUnits int64  `json:"spent_units"`
		} `json:"periods"`
	}
	if err := json.Unmarshal(js, &state); err != nil {
		t.Fatal(err)
	}
	if state.Tenants[0].Period != month || state.Tenants[1].Period != "" {
		t.Fatalf("state's tenants = %+v", state.Tenants)
	}
	h := state.Periods["a"]
	if len(state.Periods) != 1 || len(h) != 1 || h[0].Period != month || h[0].SpentUnits != bal.SpentUnits {
		t.Fatalf("state's periods = %+v, want a's %s with %d spent", state.Periods, month, bal.SpentUnits)
	}
}
