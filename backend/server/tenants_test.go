package server_test

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/admin"
	"github.com/quotagate/quotagate/backend/ledger"
)

func settings(t *testing.T, body string) admin.TenantSettings {
	t.Helper()
	var s admin.TenantSettings
	if err := json.Unmarshal([]byte(body), &s); err != nil {
		t.Fatalf("settings %q: %v", body, err)
	}
	return s
}

// TestTenantSettings drives the Settings tab's API: an edit applies at once,
// is audited as the operator and shows as an override of the file; a new
// tenant gets a generated key; a rotated key replaces the old one at once;
// bad input changes nothing; discard puts the file's values back.
func TestTenantSettings(t *testing.T) {
	s := open(t, t.TempDir(), nil)
	oldKey := s.GeneratedKeys()["local"]
	balanceWith := func(key string) int {
		resp := get(t, s, "/v1/balance", key)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}

	code, body := post(t, s, "/admin/api/tenants", `{"id":"local","budget_units":4242,"max_concurrent":2,"per_minute":5,"per_hour":50,"allowed_models":[]}`)
	if code != 200 {
		t.Fatalf("edit local: %d %s", code, body)
	}
	st := settings(t, body)
	var fields []string
	for _, o := range st.Overrides {
		fields = append(fields, o.Tenant+"."+o.Field+"="+o.File+"→"+o.Now)
	}
	if got := strings.Join(fields, " "); got != "local.budget_units=1000000→4242 local.max_concurrent=4→2 local.per_minute=0→5 local.per_hour=0→50" {
		t.Errorf("overrides: %s", got)
	}
	b, err := s.Store().Balance(context.Background(), "local")
	if err != nil || b.BudgetUnits != 4242 {
		t.Fatalf("ledger budget %+v %v", b, err)
	}
	rows, err := s.Store().Audit(context.Background(), ledger.AuditFilter{TenantID: "local"})
	if err != nil || len(rows) == 0 || rows[len(rows)-1].Actor != ledger.ActorAdmin {
		t.Fatalf("last audit row of local: %+v %v", rows[len(rows)-1:], err)
	}

	if code, body = post(t, s, "/admin/api/tenants", `{"id":"local","budget_units":-1,"max_concurrent":2}`); code != 400 || !strings.Contains(body, "budget") {
		t.Errorf("negative budget: %d %s", code, body)
	}
	if code, body = post(t, s, "/admin/api/tenants", `{"id":"new team","budget_units":10,"max_concurrent":1}`); code != 400 {
		t.Errorf("bad id: %d %s", code, body)
	}

	if code, body = post(t, s, "/admin/api/tenants", `{"id":"team-b","budget_units":500,"max_concurrent":1}`); code != 200 {
		t.Fatalf("create team-b: %d %s", code, body)
	}
	if k := s.GeneratedKeys()["team-b"]; k == "" || balanceWith(k) != 200 {
		t.Errorf("team-b has no working generated key (%q)", k)
	}

	code, body = post(t, s, "/admin/api/tenants/local/rotate", ``)
	if code != 200 {
		t.Fatalf("rotate: %d %s", code, body)
	}
	var rot struct{ Key string }
	_ = json.Unmarshal([]byte(body), &rot)
	if rot.Key == "" || rot.Key == oldKey || balanceWith(oldKey) != 401 || balanceWith(rot.Key) != 200 || s.GeneratedKeys()["local"] != rot.Key {
		t.Errorf("rotation: new %q, old key %d, new key %d", rot.Key, balanceWith(oldKey), balanceWith(rot.Key))
	}

	code, body = post(t, s, "/admin/api/tenants/discard", ``)
	if code != 200 {
		t.Fatalf("discard: %d %s", code, body)
	}
	if b, _ := s.Store().Balance(context.Background(), "local"); b.BudgetUnits != 1_000_000 {
		t.Errorf("after discard the budget is %d, want the file's 1,000,000", b.BudgetUnits)
	}
	if balanceWith(rot.Key) != 200 {
		t.Error("discard dropped the generated key")
	}
}
