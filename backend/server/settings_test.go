package server_test

import (
	"context"
	"encoding/json"
	"maps"
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

const settingsYAML = `# quotagate test config
meter: utf8-bytes-v1
tenants:
  # the team's tenant; its key comes from the environment
  - id: team
    key: ${QG_TEST_TEAM_KEY}
    budget_units: 100000 # a week of work
    max_concurrent: 2
    rate_limits: {per_minute: 0, per_hour: 0}
upstreams: [{name: demo, kind: demo, models: [demo-chat, demo-reasoner]}]
`

const teamKey = "sk-team-from-env-1234"

const smallChat = `{"model":"demo-chat","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`

// openFile starts a server on a config file, as `quotagate serve --config` does.
func openFile(t *testing.T, yml string) (*server.Server, string) {
	t.Helper()
	t.Setenv("QG_TEST_TEAM_KEY", teamKey)
	path := filepath.Join(t.TempDir(), "quotagate.yaml")
	if err := os.WriteFile(path, []byte(yml), 0o640); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	s := open(t, filepath.Join(t.TempDir(), "data"), func(o *server.Options) { o.Config = cfg; o.ConfigPath = path })
	return s, path
}

func tenantSettings(t *testing.T, s *server.Server) admin.TenantSettings {
	t.Helper()
	resp, b := do(t, "GET", s.URL()+"/admin/api/tenants", s.AdminToken(), "")
	if resp.StatusCode != 200 {
		t.Fatalf("settings: %d %s", resp.StatusCode, b)
	}
	var st admin.TenantSettings
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

func rotatedKey(t *testing.T, b []byte) string {
	t.Helper()
	var k struct{ Key string }
	if err := json.Unmarshal(b, &k); err != nil || k.Key == "" {
		t.Fatalf("rotate answer %s: %v", b, err)
	}
	return k.Key
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A lowered max_concurrent refuses the very next call (one call stalled at
// the demo upstream holds the only slot), the edit is the operator's in the
// audit log; bad input — a duplicate JSON key, a model no upstream serves —
// is refused in words and changes nothing.
// TestTenantSaveRefusalsNameTheirReason: a tenant the form sends that
// config validation refuses is a 400 that changes nothing, with the reason
// and parameters the dashboard says it from in the operator's language.
func TestTenantSaveRefusalsNameTheirReason(t *testing.T) {
	s, _ := openFile(t, settingsYAML)
	tok := s.AdminToken()
	_, before := do(t, "GET", s.URL()+"/admin/api/tenants", tok, "")
	for _, tc := range []struct {
		body, reason string
		params       map[string]any
	}{
		{`{"id":"no spaces","budget_units":1,"max_concurrent":1}`, ledger.ReasonTenantIDInvalid, map[string]any{"tenant": "no spaces"}},
		{`{"id":"team","budget_units":1,"max_concurrent":0}`, ledger.ReasonMaxConcurrentRange, map[string]any{"tenant": "team", "got": 0.0, "min": 1.0, "max": 10000.0}},
		{`{"id":"team","budget_units":1,"max_concurrent":1,"per_hour":-1}`, ledger.ReasonRateLimitsNegative, map[string]any{"tenant": "team"}},
		{`{"id":"team","budget_units":-5,"max_concurrent":1}`, ledger.ReasonUnitsNegative, map[string]any{"got": -5.0}},
	} {
		resp, b := do(t, "POST", s.URL()+"/admin/api/tenants", tok, tc.body)
		var e struct {
			Error struct {
				Code, Reason string
				Params       map[string]any
			}
		}
		if err := json.Unmarshal(b, &e); err != nil || resp.StatusCode != http.StatusBadRequest || e.Error.Code != ledger.CodeInvalidRequest ||
			e.Error.Reason != tc.reason || !maps.Equal(e.Error.Params, tc.params) {
			t.Errorf("%s: %d %s, want 400 invalid_request, reason %s, params %v", tc.body, resp.StatusCode, b, tc.reason, tc.params)
		}
	}
	if _, after := do(t, "GET", s.URL()+"/admin/api/tenants", tok, ""); string(after) != string(before) {
		t.Errorf("refused saves changed the tenants:\n%s\nto\n%s", before, after)
	}
}

func TestSettingsApplyAtOnce(t *testing.T) {
	s, _ := openFile(t, settingsYAML)
	tok := s.AdminToken()
	if resp, b := do(t, "POST", s.URL()+"/admin/api/tenants", tok, `{"id":"team","budget_units":90000,"max_concurrent":1}`); resp.StatusCode != 200 {
		t.Fatalf("edit: %d %s", resp.StatusCode, b)
	}
	stalled := make(chan struct{})
	go func() { defer close(stalled); chatPlan(t, s, teamKey, "kind=stall") }()
	id := waitActive(t, s)
	if resp, b := do(t, "POST", s.URL()+"/v1/chat/completions", teamKey, smallChat); resp.StatusCode != http.StatusTooManyRequests ||
		!strings.Contains(string(b), "concurrency_limit") {
		t.Fatalf("second call under max_concurrent 1: %d %s, want 429 concurrency_limit", resp.StatusCode, b)
	}
	do(t, "POST", s.URL()+"/admin/api/runs/"+string(id)+"/cancel", tok, "")
	<-stalled

	rows, err := s.Store().Audit(context.Background(), ledger.AuditFilter{TenantID: "team"})
	if err != nil {
		t.Fatal(err)
	}
	var admins int
	for _, r := range rows {
		if r.Kind == ledger.AuditConfig && r.Actor == ledger.ActorAdmin {
			admins++
		}
	}
	if admins != 1 {
		t.Fatalf("config rows by operator:admin for team: %d, want the one edit", admins)
	}

	before := mustJSON(t, tenantSettings(t, s))
	for _, c := range []struct{ name, body, want string }{
		{"DuplicateKey", `{"id":"team","budget_units":1,"budget_units":900,"max_concurrent":1}`, "twice; send each field once"},
		{"DuplicateNestedKey", `{"id":"team","budget_units":1,"max_concurrent":1,"allowed_models":[],"id":"bot"}`, "twice"},
		{"ZeroConcurrency", `{"id":"team","budget_units":1,"max_concurrent":0}`, "max_concurrent must be between 1 and 10000"},
		{"UnknownField", `{"id":"team","budgets":1,"max_concurrent":1}`, "unknown field"},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, b := do(t, "POST", s.URL()+"/admin/api/tenants", tok, c.body)
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), c.want) {
				t.Fatalf("%d %s, want 400 saying %q", resp.StatusCode, b, c.want)
			}
		})
	}
	if after := mustJSON(t, tenantSettings(t, s)); after != before {
		t.Fatalf("a refused change changed the settings:\n%s\n%s", before, after)
	}
}

// Write-back rewrites the file with what is applied: the edits, a created
// tenant (keyless: its generated key stays in the data dir) and a rotated
// key as its hash only; ${ENV} references and comments stay; a restart on
// the file gives the same policy, no override, and every key works.
func TestSettingsWriteBackRoundTrip(t *testing.T) {
	s, path := openFile(t, settingsYAML)
	tok := s.AdminToken()
	do(t, "POST", s.URL()+"/admin/api/tenants", tok, `{"id":"team","budget_units":250000,"max_concurrent":2,"per_minute":30,"allowed_models":["demo-chat"]}`)
	do(t, "POST", s.URL()+"/admin/api/tenants", tok, `{"id":"bot","budget_units":5000,"max_concurrent":3}`)
	botKey := s.GeneratedKeys()["bot"]
	_, b := do(t, "POST", s.URL()+"/admin/api/tenants/team/rotate", tok, "")
	newTeamKey := rotatedKey(t, b)

	resp, b := do(t, "POST", s.URL()+"/admin/api/tenants/write-back", tok, "")
	if resp.StatusCode != 200 {
		t.Fatalf("write-back: %d %s", resp.StatusCode, b)
	}
	var wb admin.WriteBack
	if err := json.Unmarshal(b, &wb); err != nil || wb.File != path || len(wb.Notes) != 2 || len(wb.Settings.Overrides) != 0 {
		t.Fatalf("write-back answer %s (%v): want the file, a note each for bot and team, no override left", b, err)
	}
	// Each note names its kind and tenant, for the dashboard's sentence.
	kinds := map[string]string{}
	for _, n := range wb.Notes {
		kinds[n.Tenant] = n.Kind
		if !strings.Contains(n.Text, "tenant "+n.Tenant) {
			t.Errorf("note %+v: its text does not name its tenant", n)
		}
	}
	if want := map[string]string{"bot": admin.NoteKeyInDataDir, "team": admin.NoteKeyReplaced}; !maps.Equal(kinds, want) {
		t.Errorf("note kinds %v, want %v", kinds, want)
	}
	data, _ := os.ReadFile(path)
	text := string(data)
	for _, want := range []string{"# the team's tenant", "# a week of work", "# quotagate test config",
		"budget_units: 250000", "per_minute: 30", "id: bot", "allowed_models: [demo-chat]", ledger.HashKey(newTeamKey)} {
		if !strings.Contains(text, want) {
			t.Errorf("rewritten file lacks %q:\n%s", want, text)
		}
	}
	for _, k := range []string{botKey, newTeamKey, teamKey} {
		if strings.Contains(text, k) {
			t.Fatalf("a key in clear in the file:\n%s", text)
		}
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %o, want the file's 640 kept", fi.Mode().Perm())
	}

	dir := s.DataDir()
	s.Close()
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatalf("the rewritten file does not load: %v\n%s", err, text)
	}
	s2 := open(t, dir, func(o *server.Options) { o.Config = cfg; o.ConfigPath = path })
	st := tenantSettings(t, s2)
	if len(st.Overrides) != 0 || len(st.Tenants) != 2 || st.Tenants[0].BudgetUnits != 250000 || st.Tenants[0].PerMinute != 30 ||
		st.Tenants[1].ID != "bot" || st.Tenants[1].MaxConcurrent != 3 {
		t.Fatalf("after restart: %s", mustJSON(t, st))
	}
	for k, want := range map[string]int{newTeamKey: 200, botKey: 200, teamKey: 401} {
		if resp, b := do(t, "POST", s2.URL()+"/v1/chat/completions", k, smallChat); resp.StatusCode != want {
			t.Errorf("after restart, key %.10s…: %d %s, want %d", k, resp.StatusCode, b, want)
		}
	}
}

// The ${ENV} references survive a rewrite even inside a flow mapping, where
// `${X}` is not a plain YAML scalar.
func TestRewriteTenantsKeepsEnvReferences(t *testing.T) {
	in := "tenants: [{id: a, key: ${A_KEY}, budget_units: 10}]\nupstreams:\n  - {name: ark, base_url: \"https://x\", api_key: ${ARK_KEY}, models: [m]}\n"
	file := []config.Tenant{{ID: "a", KeyHashes: []string{ledger.HashKey("whatever")}, BudgetUnits: 10, MaxConcurrent: 1}}
	now := []config.Tenant{{ID: "a", KeyHashes: []string{ledger.HashKey("whatever")}, BudgetUnits: 20, MaxConcurrent: 1}}
	out, notes, err := server.RewriteTenants([]byte(in), file, now)
	if err != nil || len(notes) != 0 {
		t.Fatal(err, notes)
	}
	for _, want := range []string{"key: ${A_KEY}", "api_key: ${ARK_KEY}", "budget_units: 20"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
}

// Discard puts a rotated configured key back to the file's; without a
// config file, write-back says why it cannot and writes nothing.
func TestSettingsDiscardAndNoFile(t *testing.T) {
	s, _ := openFile(t, settingsYAML)
	tok := s.AdminToken()
	_, b := do(t, "POST", s.URL()+"/admin/api/tenants/team/rotate", tok, "")
	rotated := rotatedKey(t, b)
	if resp, b := do(t, "POST", s.URL()+"/admin/api/tenants/discard", tok, ""); resp.StatusCode != 200 {
		t.Fatalf("discard: %d %s", resp.StatusCode, b)
	}
	for k, want := range map[string]int{teamKey: 200, rotated: 401} {
		if resp, b := do(t, "POST", s.URL()+"/v1/chat/completions", k, smallChat); resp.StatusCode != want {
			t.Errorf("key %.10s… after discard: %d %s, want %d", k, resp.StatusCode, b, want)
		}
	}

	cfg, err := config.Parse([]byte(strings.Replace(settingsYAML, "${QG_TEST_TEAM_KEY}", teamKey, 1)), os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	d := open(t, filepath.Join(t.TempDir(), "data"), func(o *server.Options) { o.Config = cfg }) // no --config
	resp, b := do(t, "POST", d.URL()+"/admin/api/tenants/write-back", d.AdminToken(), "")
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "without --config") {
		t.Fatalf("write-back without a file: %d %s", resp.StatusCode, b)
	}
}

// With the nightly top-up on, its own tenant is quotagate's: not listed,
// not an override of the file, and a discard leaves its key in place.
func TestSettingsLeaveTheTopUpTenant(t *testing.T) {
	s, _ := openFile(t, strings.Replace(settingsYAML, "upstreams: [{name: demo, kind: demo, models: [demo-chat, demo-reasoner]}]",
		"upstreams: [{name: demo, kind: demo, models: [demo-chat], quota: {top_up: {enabled: true}}}]", 1))
	st := tenantSettings(t, s)
	if len(st.Tenants) != 1 || len(st.Overrides) != 0 {
		t.Fatalf("settings with the top-up on: %s", mustJSON(t, st))
	}
	if resp, b := do(t, "POST", s.URL()+"/admin/api/tenants/discard", s.AdminToken(), ""); resp.StatusCode != 200 {
		t.Fatalf("discard: %d %s", resp.StatusCode, b)
	}
	ts, err := s.Store().Tenants(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range ts {
		if x.ID != "team" && len(x.KeyHashes) == 0 {
			t.Fatalf("after discard tenant %s has no key", x.ID)
		}
	}
	if len(ts) != 2 {
		t.Fatalf("tenants in the ledger: %d, want team and the top-up's", len(ts))
	}
}
