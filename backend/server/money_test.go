package server_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/admin"
	"github.com/quotagate/quotagate/backend/config"
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
