package server_test

import (
	"context"
	"encoding/json"
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

func settingsOf(t *testing.T, s *server.Server) admin.SettingsState {
	t.Helper()
	resp, b := do(t, "GET", s.URL()+"/admin/api/settings", s.AdminToken(), "")
	if resp.StatusCode != 200 {
		t.Fatalf("settings: %d %s", resp.StatusCode, b)
	}
	var st admin.SettingsState
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

func newKey(t *testing.T, b []byte) string {
	t.Helper()
	var k admin.NewKey
	if err := json.Unmarshal(b, &k); err != nil || k.Key == "" {
		t.Fatalf("new key answer %s: %v", b, err)
	}
	return k.Key
}

// The admin API edits tenants at run time: each change is audited with the
// operator actor and applies to the very next call; bad input is refused
// in words and changes nothing.
func TestSettingsApplyAtOnceAndAudit(t *testing.T) {
	s, _ := openFile(t, settingsYAML)
	tok := s.AdminToken()
	chat := `{"model":"demo-chat","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`

	// max_concurrent 2 → 1: with one call stalled, the next is refused at once.
	if resp, b := do(t, "POST", s.URL()+"/admin/api/tenants/team", tok, `{"max_concurrent":1,"budget_units":90000}`); resp.StatusCode != 200 {
		t.Fatalf("edit: %d %s", resp.StatusCode, b)
	}
	stalled := make(chan struct{})
	go func() { defer close(stalled); chatPlan(t, s, teamKey, "kind=stall") }()
	id := waitActive(t, s)
	if resp, b := do(t, "POST", s.URL()+"/v1/chat/completions", teamKey, chat); resp.StatusCode != http.StatusTooManyRequests ||
		!strings.Contains(string(b), "concurrency_limit") {
		t.Fatalf("second call under max_concurrent 1: %d %s, want 429 concurrency_limit", resp.StatusCode, b)
	}
	do(t, "POST", s.URL()+"/admin/api/runs/"+string(id)+"/cancel", tok, "")
	<-stalled

	// A created tenant calls with the key answered once; rotating it
	// revokes that key at once.
	resp, b := do(t, "POST", s.URL()+"/admin/api/tenants", tok, `{"id":"bot","budget_units":5000,"max_concurrent":1,"per_minute":10,"allowed_models":["demo-chat"]}`)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create: %d %s", resp.StatusCode, b)
	}
	k1 := newKey(t, b)
	if resp, b := do(t, "POST", s.URL()+"/v1/chat/completions", k1, chat); resp.StatusCode != 200 {
		t.Fatalf("created tenant's call: %d %s", resp.StatusCode, b)
	}
	if resp, b := do(t, "POST", s.URL()+"/v1/chat/completions", k1, strings.Replace(chat, "demo-chat", "demo-reasoner", 1)); resp.StatusCode == 200 {
		t.Fatalf("a model outside allowed_models: %d %s, want a refusal", resp.StatusCode, b)
	}
	_, b = do(t, "POST", s.URL()+"/admin/api/tenants/bot/rotate", tok, "")
	k2 := newKey(t, b)
	if resp, _ := do(t, "POST", s.URL()+"/v1/chat/completions", k1, chat); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the rotated-out key: %d, want 401 at once", resp.StatusCode)
	}
	if resp, b := do(t, "POST", s.URL()+"/v1/chat/completions", k2, chat); resp.StatusCode != 200 {
		t.Fatalf("the new key: %d %s", resp.StatusCode, b)
	}
	for _, stored := range []string{k1, k2} {
		if raw, _ := os.ReadFile(filepath.Join(s.DataDir(), server.LedgerFile)); strings.Contains(string(raw), stored) {
			t.Fatal("a key made here is in the ledger file in clear")
		}
	}

	// Bad input: a human sentence, and nothing changed.
	before := settingsOf(t, s)
	for _, c := range []struct{ name, method, path, body, want string }{
		{"ZeroConcurrency", "POST", "/admin/api/tenants/team", `{"max_concurrent":0}`, "max_concurrent must be between 1 and 10000"},
		{"NegativeBudget", "POST", "/admin/api/tenants/team", `{"budget_units":-5}`, "budget"},
		{"UnknownModel", "POST", "/admin/api/tenants/team", `{"allowed_models":["gpt-9"]}`, "is not served by any upstream"},
		{"DuplicateKey", "POST", "/admin/api/tenants/team", `{"budget_units":1,"budget_units":900}`, "twice; send each field once"},
		{"BadID", "POST", "/admin/api/tenants", `{"id":"no spaces","budget_units":1}`, "letters, digits"},
		{"Exists", "POST", "/admin/api/tenants", `{"id":"team","budget_units":1}`, "exists already"},
		{"NoBudget", "POST", "/admin/api/tenants", `{"id":"x"}`, "budget_units is required"},
		{"UnknownField", "POST", "/admin/api/tenants/team", `{"budget":1}`, "unknown field"},
		{"NoSuchTenant", "POST", "/admin/api/tenants/ghost/rotate", ``, "no tenant"},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, b := do(t, c.method, s.URL()+c.path, tok, c.body)
			if resp.StatusCode < 400 || resp.StatusCode >= 500 || !strings.Contains(string(b), c.want) {
				t.Fatalf("%d %s, want a 4xx saying %q", resp.StatusCode, b, c.want)
			}
		})
	}
	after := settingsOf(t, s)
	if bj, _ := json.Marshal(before); string(bj) != mustJSON(t, after) {
		t.Fatalf("a refused change changed the settings:\n%s\n%s", bj, mustJSON(t, after))
	}

	// Every change is in the audit log as the operator's, with its tenant.
	rows, err := s.Store().Audit(context.Background(), ledger.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	byTenant := map[string]int{}
	for _, r := range rows {
		if r.Kind == ledger.AuditConfig && r.Actor == string(ledger.ActorAdmin) {
			byTenant[r.TenantID]++
		}
	}
	if byTenant["team"] < 1 || byTenant["bot"] < 2 { // team: the edit; bot: create, rotate
		t.Fatalf("operator:admin config rows by tenant %v, want team ≥ 1 and bot ≥ 2", byTenant)
	}

	// The overrides name what differs from the file; never a key.
	got := map[string]bool{}
	for _, o := range after.Overrides {
		got[o.Tenant+"."+o.Field] = true
		if o.Field == "key" && (o.File != nil || o.Now != nil) {
			t.Fatalf("override of a key shows a value: %+v", o)
		}
	}
	for _, want := range []string{"team.budget_units", "team.max_concurrent", "bot.tenant"} {
		if !got[want] {
			t.Errorf("overrides %v lack %s", got, want)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Write-back rewrites the file with what is applied: the edits, a created
// tenant and a rotated key as its hash only; ${ENV} references and comments
// stay; a restart on the file gives the same policy and the same keys.
func TestSettingsWriteBackRoundTrip(t *testing.T) {
	s, path := openFile(t, strings.Replace(settingsYAML, "upstreams:", "upstream_note: &x 1\nupstreams:", 0))
	tok := s.AdminToken()
	do(t, "POST", s.URL()+"/admin/api/tenants/team", tok, `{"budget_units":250000,"per_minute":30,"allowed_models":["demo-chat"]}`)
	_, b := do(t, "POST", s.URL()+"/admin/api/tenants", tok, `{"id":"bot","budget_units":5000,"max_concurrent":3}`)
	botKey := newKey(t, b)

	resp, b := do(t, "POST", s.URL()+"/admin/api/settings/write-back", tok, "")
	if resp.StatusCode != 200 {
		t.Fatalf("write-back: %d %s", resp.StatusCode, b)
	}
	var wb admin.WriteBack
	if err := json.Unmarshal(b, &wb); err != nil || wb.File != path || len(wb.Notes) != 1 || !strings.Contains(wb.Notes[0], "bot") {
		t.Fatalf("write-back answer %s (%v): want the file and one note about bot's key", b, err)
	}
	data, _ := os.ReadFile(path)
	text := string(data)
	for _, want := range []string{"key: ${QG_TEST_TEAM_KEY}", "# the team's tenant", "# a week of work", "# quotagate test config",
		"budget_units: 250000", "per_minute: 30", "id: bot", ledger.HashKey(botKey)} {
		if !strings.Contains(text, want) {
			t.Errorf("rewritten file lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, botKey) || strings.Contains(text, teamKey) {
		t.Fatalf("a key in clear in the file:\n%s", text)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %o, want the file's 640 kept", fi.Mode().Perm())
	}
	if st := settingsOf(t, s); len(st.Overrides) != 0 {
		t.Fatalf("overrides after write-back: %+v", st.Overrides)
	}

	// A restart on the rewritten file: the same policy, both keys work.
	dir := s.DataDir()
	s.Close()
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatalf("the rewritten file does not load: %v\n%s", err, text)
	}
	s2 := open(t, dir, func(o *server.Options) { o.Config = cfg; o.ConfigPath = path })
	st := settingsOf(t, s2)
	if len(st.Overrides) != 0 || mustJSON(t, st.Tenants) != `[{"id":"team","budget_units":250000,"max_concurrent":2,"per_minute":30,"per_hour":0,"allowed_models":["demo-chat"]},{"id":"bot","budget_units":5000,"max_concurrent":3,"per_minute":0,"per_hour":0,"allowed_models":[]}]` {
		t.Fatalf("after restart: %s overrides %+v", mustJSON(t, st.Tenants), st.Overrides)
	}
	chat := `{"model":"demo-chat","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`
	for _, k := range []string{teamKey, botKey} {
		if resp, b := do(t, "POST", s2.URL()+"/v1/chat/completions", k, chat); resp.StatusCode != 200 {
			t.Fatalf("after restart, key %.8s…: %d %s", k, resp.StatusCode, b)
		}
	}
}

// Discard re-applies the file: the edit is undone, a created tenant's key
// stops working, a rotated key is back to the file's — audited as the
// operator's. Without a config file, write-back says why it cannot.
func TestSettingsDiscard(t *testing.T) {
	s, _ := openFile(t, settingsYAML)
	tok := s.AdminToken()
	chat := `{"model":"demo-chat","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`
	do(t, "POST", s.URL()+"/admin/api/tenants/team", tok, `{"budget_units":7}`)
	_, b := do(t, "POST", s.URL()+"/admin/api/tenants/team/rotate", tok, "")
	rotated := newKey(t, b)
	_, b = do(t, "POST", s.URL()+"/admin/api/tenants", tok, `{"id":"bot","budget_units":5000}`)
	botKey := newKey(t, b)

	resp, b := do(t, "POST", s.URL()+"/admin/api/settings/discard", tok, "")
	if resp.StatusCode != 200 {
		t.Fatalf("discard: %d %s", resp.StatusCode, b)
	}
	var st admin.SettingsState
	_ = json.Unmarshal(b, &st)
	if len(st.Overrides) != 0 || st.Tenants[0].BudgetUnits != 100000 {
		t.Fatalf("after discard: %s", b)
	}
	for k, want := range map[string]int{teamKey: 200, rotated: 401, botKey: 401} {
		if resp, b := do(t, "POST", s.URL()+"/v1/chat/completions", k, chat); resp.StatusCode != want {
			t.Errorf("key %.8s… after discard: %d %s, want %d", k, resp.StatusCode, b, want)
		}
	}

	cfg, err := config.Parse([]byte(strings.Replace(settingsYAML, "${QG_TEST_TEAM_KEY}", teamKey, 1)), os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	d := open(t, filepath.Join(t.TempDir(), "data"), func(o *server.Options) { o.Config = cfg }) // no --config
	resp, b = do(t, "POST", d.URL()+"/admin/api/settings/write-back", d.AdminToken(), "")
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "without --config") {
		t.Fatalf("write-back without a file: %d %s", resp.StatusCode, b)
	}
}
