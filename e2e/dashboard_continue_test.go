package e2e_test

import (
	"fmt"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/server"
)

// continueModel is one model of Continue's config.yaml, as Continue reads it.
type continueModel struct {
	Name                         string   `yaml:"name"`
	Provider                     string   `yaml:"provider"`
	Model                        string   `yaml:"model"`
	APIBase                      string   `yaml:"apiBase"`
	APIKey                       string   `yaml:"apiKey"`
	Roles                        []string `yaml:"roles"`
	UseLegacyCompletionsEndpoint bool     `yaml:"useLegacyCompletionsEndpoint"`
}

// checkContinueSnippet reads the Connect panel's Continue config.yaml and
// makes, for each of its models, the call Continue makes in that model's
// role — chat completions for chat, a fill-in-the-middle on the legacy
// completions endpoint for autocomplete, embeddings for embed — at the
// snippet's apiBase with its apiKey. Each must settle trusted.
func checkContinueSnippet(t *testing.T, s *server.Server, snippet string) {
	t.Helper()
	var cfg struct {
		Name    string          `yaml:"name"`
		Version string          `yaml:"version"`
		Schema  string          `yaml:"schema"`
		Models  []continueModel `yaml:"models"`
	}
	if err := yaml.Unmarshal([]byte(snippet), &cfg); err != nil || cfg.Name == "" || cfg.Version == "" || cfg.Schema != "v1" {
		t.Fatalf("the Continue snippet is not a config.yaml Continue loads (%v):\n%s", err, snippet)
	}
	roles := map[string]continueModel{}
	for _, m := range cfg.Models {
		if m.Provider != "openai" || m.APIBase != s.URL()+"/v1" {
			t.Errorf("model %q does not point Continue's openai provider at this server: %+v", m.Name, m)
		}
		for _, r := range m.Roles {
			roles[r] = m
		}
	}
	calls := []struct{ role, path, body string }{
		{"chat", "/chat/completions", `{"model":%q,"stream":true,"messages":[{"role":"user","content":"hi"}]}`},
		{"autocomplete", "/completions", `{"model":%q,"prompt":"func main() {\n\t","suffix":"\n}\n","max_tokens":64,"stream":true}`},
		{"embed", "/embeddings", `{"model":%q,"input":["package main","func main() {}"]}`},
	}
	for _, c := range calls {
		m, ok := roles[c.role]
		if !ok {
			t.Errorf("the Continue snippet has no model for the %s role", c.role)
			continue
		}
		if c.role == "autocomplete" && !m.UseLegacyCompletionsEndpoint {
			t.Errorf("the autocomplete model does not use the legacy completions endpoint (quotagate's fill-in-the-middle door)")
		}
		got := doURL(t, m.APIBase, "POST", c.path, m.APIKey, fmt.Sprintf(c.body, m.Model))
		if got.status != 200 || got.runID() == "" {
			t.Fatalf("Continue's %s call: %d %s", c.role, got.status, got.body)
		}
		run := waitEnded(t, s, got.runID())
		if run.Usage != ledger.UsageTrusted {
			t.Errorf("Continue's %s call did not settle trusted: %+v", c.role, run)
		}
		t.Logf("Continue %s (%s): settled trusted, %d units", c.role, strings.TrimPrefix(c.path, "/"), run.SpentUnits)
	}
}
