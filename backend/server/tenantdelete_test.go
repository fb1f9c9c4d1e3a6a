package server_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/admin"
	"github.com/quotagate/quotagate/backend/config"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/server"
)

// Deleting a tenant from Settings: refused in words while a run is in
// flight and while its hold is kept (nothing changes), then done once the
// hold is reconciled — its key stops working, the operator is audited, the
// file's tenant shows as an override; a tenant added on the dashboard just
// goes (no override, its key file removed); write-back removes the tenant
// from the file and a restart on it agrees.
func TestSettingsDeleteTenant(t *testing.T) {
	s, path := openFile(t, settingsYAML)
	tok := s.AdminToken()
	del := func(id string) (int, string) {
		resp, b := do(t, "POST", s.URL()+"/admin/api/tenants/"+id+"/delete", tok, "")
		return resp.StatusCode, string(b)
	}
	if resp, b := do(t, "POST", s.URL()+"/admin/api/tenants", tok, `{"id":"bot","budget_units":5000,"max_concurrent":3}`); resp.StatusCode != 200 {
		t.Fatalf("create bot: %d %s", resp.StatusCode, b)
	}
	botKey := s.GeneratedKeys()["bot"]

	stalled := make(chan struct{})
	go func() { defer close(stalled); chatPlan(t, s, teamKey, "kind=stall") }()
	id := waitActive(t, s)
	before := mustJSON(t, tenantSettings(t, s))
	if code, b := del("team"); code != http.StatusConflict || !strings.Contains(b, "tenant team cannot be deleted: 1 run is still active or queued") ||
		!strings.Contains(b, `"reason":"tenant_in_flight","params":{"runs":1,"tenant":"team"}`) {
		t.Fatalf("delete with a run in flight: %d %s", code, b)
	}
	do(t, "POST", s.URL()+"/admin/api/runs/"+string(id)+"/cancel", tok, "")
	<-stalled
	run := waitRun(t, s, teamKey, string(id))
	if code, b := del("team"); code != http.StatusConflict ||
		!strings.Contains(b, "units are held by 1 run; reconcile it on the Holds tab first") ||
		!strings.Contains(b, fmt.Sprintf(`"reason":"tenant_holds","params":{"runs":1,"tenant":"team","units":%d}`, run.HeldUnits)) {
		t.Fatalf("delete with a kept hold (%d units): %d %s", run.HeldUnits, code, b)
	}
	if after := mustJSON(t, tenantSettings(t, s)); after != before {
		t.Fatalf("a refused delete changed the settings:\n%s\n%s", before, after)
	}
	if code, b := post(t, s, "/admin/api/holds/"+string(id)+"/reconcile", `{"units":0,"evidence":"provider console: nothing billed"}`); code != 200 {
		t.Fatalf("reconcile: %d %s", code, b)
	}

	code, b := del("team")
	if code != 200 {
		t.Fatalf("delete team: %d %s", code, b)
	}
	st := settings(t, b)
	if len(st.Tenants) != 1 || st.Tenants[0].ID != "bot" || len(st.Overrides) != 2 ||
		st.Overrides[0].Tenant != "team" || st.Overrides[0].Field != "tenant" || st.Overrides[0].Now != "deleted on the dashboard" {
		t.Fatalf("after deleting team: %s", b)
	}
	if resp, b := do(t, "POST", s.URL()+"/v1/chat/completions", teamKey, smallChat); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("deleted team's key: %d %s, want 401", resp.StatusCode, b)
	}
	rows, err := s.Store().Audit(context.Background(), ledger.AuditFilter{TenantID: "team"})
	if err != nil {
		t.Fatal(err)
	}
	if last := rows[len(rows)-1]; last.Kind != ledger.AuditConfig || last.Actor != ledger.ActorAdmin || last.Reason != "tenant no longer configured" {
		t.Errorf("last audit row of team: %+v, want the operator's removal", last)
	}
	if code, b := del("team"); code != http.StatusBadRequest || !strings.Contains(b, `no tenant \"team\"`) ||
		!strings.Contains(b, `"reason":"tenant_unknown","params":{"tenant":"team"}`) {
		t.Errorf("delete twice: %d %s", code, b)
	}

	// Write back: team leaves the file, bot is written keyless.
	resp, wb := do(t, "POST", s.URL()+"/admin/api/tenants/write-back", tok, "")
	if resp.StatusCode != 200 || !strings.Contains(string(wb), "tenant team: removed from the file") {
		t.Fatalf("write-back: %d %s", resp.StatusCode, wb)
	}
	data, _ := os.ReadFile(path)
	if strings.Contains(string(data), "id: team") || !strings.Contains(string(data), "id: bot") || !strings.Contains(string(data), "# quotagate test config") {
		t.Fatalf("rewritten file:\n%s", data)
	}
	dir := s.DataDir()
	s.Close()
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatalf("rewritten file does not load: %v", err)
	}
	s2 := open(t, dir, func(o *server.Options) { o.Config = cfg; o.ConfigPath = path })
	if st := tenantSettings(t, s2); len(st.Tenants) != 1 || len(st.Overrides) != 0 {
		t.Fatalf("after restart: %s", mustJSON(t, st))
	}
	for k, want := range map[string]int{botKey: 200, teamKey: 401} {
		if resp, b := do(t, "POST", s2.URL()+"/v1/chat/completions", k, smallChat); resp.StatusCode != want {
			t.Errorf("after restart, key %.10s…: %d %s, want %d", k, resp.StatusCode, b, want)
		}
	}

	// A tenant added on the dashboard goes without an override and takes its key file along.
	if resp, b := do(t, "POST", s2.URL()+"/admin/api/tenants", s2.AdminToken(), `{"id":"tmp","budget_units":10,"max_concurrent":1}`); resp.StatusCode != 200 {
		t.Fatalf("create tmp: %d %s", resp.StatusCode, b)
	}
	resp, b2 := do(t, "POST", s2.URL()+"/admin/api/tenants/tmp/delete", s2.AdminToken(), "")
	if st := settings(t, string(b2)); resp.StatusCode != 200 || len(st.Overrides) != 0 || len(st.Tenants) != 1 {
		t.Fatalf("delete tmp: %d %s", resp.StatusCode, b2)
	}
	if _, err := os.Stat(filepath.Join(dir, "keys", "tmp.key")); !os.IsNotExist(err) {
		t.Errorf("tmp's key file after its deletion: %v", err)
	}
}

// The embedded default's keyless `local` tenant, deleted and then
// discarded, comes back with the same generated key.
func TestSettingsDeleteThenDiscardKeepsGeneratedKey(t *testing.T) {
	s := open(t, t.TempDir(), nil)
	key := s.GeneratedKeys()["local"]
	if code, b := post(t, s, "/admin/api/tenants/local/delete", ""); code != 200 || !strings.Contains(b, "deleted on the dashboard") {
		t.Fatalf("delete local: %d %s", code, b)
	}
	if resp := get(t, s, "/v1/balance", key); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("deleted local's key: %d, want 401", resp.StatusCode)
	}
	if code, b := post(t, s, "/admin/api/tenants/discard", ""); code != 200 || strings.Contains(b, "deleted") {
		t.Fatalf("discard: %d %s", code, b)
	}
	if resp := get(t, s, "/v1/balance", key); resp.StatusCode != 200 {
		t.Fatalf("local's key after discard: %d, want 200", resp.StatusCode)
	}
}

// The state's rate use is the limiter's own count: two calls admitted in
// the minute, the third refused with 429; a deleted tenant stays in the
// state as removed, with its history.
func TestStateRateUseAndRemoved(t *testing.T) {
	s, _ := openFile(t, strings.Replace(settingsYAML, "rate_limits: {per_minute: 0, per_hour: 0}", "rate_limits: {per_minute: 2, per_hour: 0}", 1))
	for i, want := range []int{200, 200, http.StatusTooManyRequests} {
		if resp, b := do(t, "POST", s.URL()+"/v1/chat/completions", teamKey, smallChat); resp.StatusCode != want {
			t.Fatalf("call %d: %d %s, want %d", i+1, resp.StatusCode, b, want)
		}
	}
	st, err := s.State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Tenants) != 1 || st.Tenants[0].Rate == nil || *st.Tenants[0].Rate != (admin.RateUse{LastMinute: 2, LastHour: 0, Refused: 1}) || st.Tenants[0].Removed {
		t.Fatalf("tenants in the state: %s", mustJSON(t, st.Tenants))
	}
	if code, b := post(t, s, "/admin/api/tenants/team/delete", ""); code != 200 {
		t.Fatalf("delete: %d %s", code, b)
	}
	st, _ = s.State(context.Background())
	if len(st.Tenants) != 1 || !st.Tenants[0].Removed || st.Tenants[0].Rate != nil || st.Tenants[0].SpentUnits == 0 {
		t.Fatalf("deleted team in the state: %s", mustJSON(t, st.Tenants))
	}
}
