package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/admin"
	"github.com/quotagate/quotagate/backend/config"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/price"
	"github.com/quotagate/quotagate/backend/server"
)

// A prices.json in the data dir that is not a valid price table refuses
// the start with the file's error, rather than pricing with other prices.
func TestBrokenPriceFileRefusesToStart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, price.FileName), []byte(`{"currency":"EUR"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := server.Open(context.Background(), server.Options{DataDir: dir, Addr: "127.0.0.1:0"})
	if err == nil {
		s.Close()
		t.Fatal("a broken prices.json started")
	}
	if !strings.Contains(err.Error(), "price table") || !strings.Contains(err.Error(), price.FileName) {
		t.Fatalf("error %q does not name the price file", err)
	}
}

const moneyYAML = `meter: utf8-bytes-v1
money: {currency: USD, usd_rate: "1"}
tenants:
  - id: team
    key: ${QG_TEST_TEAM_KEY}
    budget_units: 100000
upstreams: [{name: demo, kind: demo, models: [demo-chat, demo-reasoner]}]
`

// Settings edits a tenant's money budget: applied at once, shown as an
// override of the file, written back quoted, and the same after a restart;
// a budget with more than 6 decimal places is refused and changes nothing.
func TestSettingsMoneyBudget(t *testing.T) {
	s, path := openFile(t, moneyYAML)
	tok := s.AdminToken()
	if resp, b := do(t, "POST", s.URL()+"/admin/api/tenants", tok, `{"id":"team","budget_units":100000,"budget":"0.1234567","max_concurrent":1}`); resp.StatusCode != 400 ||
		!strings.Contains(string(b), "tenants[0].budget") {
		t.Fatalf("a budget of 7 decimal places: %d %s", resp.StatusCode, b)
	}
	if resp, b := do(t, "POST", s.URL()+"/admin/api/tenants", tok, `{"id":"team","budget_units":100000,"budget":"12.50","max_concurrent":1}`); resp.StatusCode != 200 {
		t.Fatalf("save: %d %s", resp.StatusCode, b)
	}
	st := tenantSettings(t, s)
	if st.Tenants[0].Budget != "12.50" || !slices.Contains(st.Overrides, admin.Override{Tenant: "team", Field: "budget", File: "", Now: "12.50"}) {
		t.Fatalf("settings after save: %s", mustJSON(t, st))
	}
	var bal struct {
		BudgetMicros int64  `json:"budget_micros"`
		Currency     string `json:"currency"`
		Budget       string `json:"budget"`
	}
	getJSON(t, s, "/v1/balance", teamKey, &bal)
	if bal.BudgetMicros != 12_500_000 || bal.Currency != "USD" || bal.Budget != "12.50" {
		t.Fatalf("balance after the edit: %+v", bal)
	}
	if resp, b := do(t, "POST", s.URL()+"/admin/api/tenants/write-back", tok, ""); resp.StatusCode != 200 {
		t.Fatalf("write-back: %d %s", resp.StatusCode, b)
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), `budget: "12.50"`) {
		t.Fatalf("rewritten file:\n%s", data)
	}
	dir := s.DataDir()
	s.Close()
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	s2 := open(t, dir, func(o *server.Options) { o.Config = cfg; o.ConfigPath = path })
	if st := tenantSettings(t, s2); len(st.Overrides) != 0 || st.Tenants[0].Budget != "12.50" {
		t.Fatalf("after restart: %s", mustJSON(t, st))
	}
}

// getJSON GETs path with key and decodes a 200 answer into v.
func getJSON(t *testing.T, s *server.Server, path, key string, v any) {
	t.Helper()
	resp, b := do(t, "GET", s.URL()+path, key, "")
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("GET %s: %v in %s", path, err, b)
	}
}

// pricedYAML is a money budget of 0.001 USD (1,000 micros) on the demo,
// demo-chat at 1 input / 0.25 cached / 1.25 cache write / 4 output per 1M
// tokens (a token of input costs 1 micro, of output 4), and a model
// without a price. Under utf8-bytes-v1 "hi" counts 2.
const pricedYAML = `meter: utf8-bytes-v1
money: {currency: USD, usd_rate: "1"}
tenants:
  - {id: team, key: "${QG_TEST_TEAM_KEY}", budget: "0.001"}
upstreams:
  - name: demo
    kind: demo
    models: [demo-chat, unpriced-model]
    prices: {demo-chat: {input: "%s", cached_input: "0.25", cache_write: "1.25", output: "%s"}}
`

// runMoney is what GET /v1/runs/{id} says of a run's money.
type runMoney struct {
	Status        string `json:"status"`
	Usage         string `json:"usage"`
	ReserveMicros int64  `json:"reserve_micros"`
	CostMicros    int64  `json:"cost_micros"`
	Cost          string `json:"cost"`
	Prices        struct {
		Input, Output string
	} `json:"prices"`
}

// balanceMoney is what GET /v1/balance says of a tenant's money.
type balanceMoney struct {
	Currency        string `json:"currency"`
	BudgetMicros    int64  `json:"budget_micros"`
	SpentMicros     int64  `json:"spent_micros"`
	HeldMicros      int64  `json:"held_micros"`
	AvailableMicros int64  `json:"available_micros"`
	Spent           string `json:"spent"`
	Available       string `json:"available"`
}

// A money budget over HTTP: a call reserves the cost of its counted input
// and output cap and is charged the cost of its trusted usage; a call whose
// reserve costs more than is left is 402 insufficient_budget saying so in
// money; a model without a price is 400 model_unpriced, nothing reserved.
func TestMoneyBudgetEndToEnd(t *testing.T) {
	s, _ := openFile(t, fmt.Sprintf(pricedYAML, "1", "4"))
	// max_tokens 200: 2 + 800 micros reserved, above what the demo answers
	resp, b := do(t, "POST", s.URL()+"/v1/chat/completions", teamKey, `{"model":"demo-chat","max_tokens":200,"messages":[{"role":"user","content":"hi"}]}`)
	if resp.StatusCode != 200 {
		t.Fatalf("chat: %d %s", resp.StatusCode, b)
	}
	var u struct {
		Usage struct {
			Prompt     int64 `json:"prompt_tokens"`
			Completion int64 `json:"completion_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(b, &u); err != nil {
		t.Fatal(err)
	}
	var run runMoney
	getJSON(t, s, "/v1/runs/"+resp.Header.Get("X-Run-Id"), teamKey, &run)
	wantCost := u.Usage.Prompt*1 + u.Usage.Completion*4
	if run.Usage != "trusted" || run.ReserveMicros != 2*1+200*4 || run.CostMicros != wantCost || run.Cost != price.Micros(wantCost).String() ||
		run.Prices.Input != "1.00" || run.Prices.Output != "4.00" || wantCost == 0 {
		t.Fatalf("run %+v; want reserve 802 and cost %d (usage %+v)", run, wantCost, u.Usage)
	}
	var bal balanceMoney
	getJSON(t, s, "/v1/balance", teamKey, &bal)
	if bal.Currency != "USD" || bal.BudgetMicros != 1000 || bal.SpentMicros != wantCost || bal.HeldMicros != 0 ||
		bal.AvailableMicros != 1000-wantCost || bal.Spent != price.Micros(wantCost).String() || bal.Available != price.Micros(1000-wantCost).String() {
		t.Fatalf("balance %+v after a call costing %d", bal, wantCost)
	}

	big := `{"model":"demo-chat","max_tokens":1000,"messages":[{"role":"user","content":"hi"}]}` // 4,002 micros reserved
	resp, b = do(t, "POST", s.URL()+"/v1/chat/completions", teamKey, big)
	if resp.StatusCode != http.StatusPaymentRequired || !strings.Contains(string(b), "insufficient_budget") || !strings.Contains(string(b), "money") {
		t.Fatalf("a reserve above the money left: %d %s", resp.StatusCode, b)
	}
	for _, door := range []struct{ path, body string }{
		{"/v1/chat/completions", `{"model":"unpriced-model","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`},
		{"/v1/responses", `{"model":"unpriced-model","max_output_tokens":16,"input":"hi"}`},
		{"/v1/messages", `{"model":"unpriced-model","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`},
	} {
		resp, b = do(t, "POST", s.URL()+door.path, teamKey, door.body)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "model_unpriced") || resp.Header.Get("X-Run-Id") != "" {
			t.Errorf("%s to a model without a price: %d %s (run %q)", door.path, resp.StatusCode, b, resp.Header.Get("X-Run-Id"))
		}
	}
	getJSON(t, s, "/v1/balance", teamKey, &bal)
	if bal.SpentMicros != wantCost || bal.HeldMicros != 0 {
		t.Fatalf("refusals moved money: %+v", bal)
	}
	runs, err := s.Store().Runs(context.Background(), ledger.RunFilter{TenantID: "team"})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs after the refusals: %d, %v; want the one call", len(runs), err)
	}
}

// A held run keeps the prices it was reserved with across a price change
// and a restart on the same data dir: a reconcile without a bill prices
// its units at them (input first, the rest output); a bill above its
// reserve's cost is refused, saying so.
func TestHeldRunKeepsItsPrices(t *testing.T) {
	s, path := openFile(t, fmt.Sprintf(pricedYAML, "1", "4"))
	_, id := chatPlan(t, s, teamKey, "kind=cut&after=1") // "hi", max_tokens 10: 2 + 40 micros
	var run runMoney
	getJSON(t, s, "/v1/runs/"+id, teamKey, &run)
	if run.Usage != "unknown" || run.ReserveMicros != 42 {
		t.Fatalf("cut run %+v; want held with 42 micros reserved", run)
	}
	dir := s.DataDir()
	s.Close()
	if err := os.WriteFile(path, []byte(fmt.Sprintf(pricedYAML, "10", "40")), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	s2 := open(t, dir, func(o *server.Options) { o.Config = cfg; o.ConfigPath = path })
	getJSON(t, s2, "/v1/runs/"+id, teamKey, &run)
	if run.ReserveMicros != 42 || run.Prices.Input != "1.00" || run.Prices.Output != "4.00" {
		t.Fatalf("after the price change and a restart: %+v; want the prices it was reserved with", run)
	}
	tok := s2.AdminToken()
	resp, b := do(t, "POST", s2.URL()+"/admin/api/holds/"+id+"/reconcile", tok, `{"units":5,"evidence":"bill","cost":"0.000043"}`)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "exceeds the reserve") {
		t.Fatalf("a bill above the reserve's cost: %d %s", resp.StatusCode, b)
	}
	resp, b = do(t, "POST", s2.URL()+"/admin/api/holds/"+id+"/reconcile", tok, `{"units":5,"evidence":"bill","cost":"1e-6"}`)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "cost") {
		t.Fatalf("a cost that is not a decimal: %d %s", resp.StatusCode, b)
	}
	resp, b = do(t, "POST", s2.URL()+"/admin/api/holds/"+id+"/reconcile", tok, `{"units":5,"evidence":"console"}`)
	if resp.StatusCode != 200 {
		t.Fatalf("reconcile: %d %s", resp.StatusCode, b)
	}
	getJSON(t, s2, "/v1/runs/"+id, teamKey, &run)
	if run.CostMicros != 2*1+3*4 { // at the new prices it would be 2×10 + 3×40
		t.Fatalf("reconciled run %+v; want 14 micros at the prices it was reserved with", run)
	}
}
