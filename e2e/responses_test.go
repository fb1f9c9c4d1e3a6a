package e2e_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/quotagate/quotagate/backend/config"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/server"
	"github.com/quotagate/quotagate/backend/upstream/demo"
	"github.com/quotagate/quotagate/e2e/clients"
)

// TestCodexThroughAssembledServer runs the real Codex CLI against the
// assembled server on its embedded default (meter tiktoken, the demo
// speaking every protocol: native) and on a config whose demo speaks only
// chat (translated): the answer arrives and every run settles trusted,
// the balance moving by exactly what the runs spent.
func TestCodexThroughAssembledServer(t *testing.T) {
	bin := clients.Bin(t, "codex")
	for _, tc := range []struct {
		name      string
		protocols []string
	}{{"Native", nil}, {"Translated", []string{config.ProtocolChat}}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config.Default()
			if tc.protocols != nil {
				cfg.Upstreams[0].Protocols = tc.protocols
			}
			s, err := server.Open(context.Background(), server.Options{Config: cfg, DataDir: t.TempDir(), Addr: "127.0.0.1:0",
				Version: "e2e", Frontend: fstest.MapFS{"index.html": {Data: []byte("<title>q</title>")}}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			home := t.TempDir()
			conf := fmt.Sprintf("model = \"demo-chat\"\nmodel_provider = \"quotagate\"\n\n[model_providers.quotagate]\nname = \"quotagate\"\n"+
				"base_url = \"%s/v1\"\nenv_key = \"QUOTAGATE_API_KEY\"\nwire_api = \"responses\"\nsupports_websockets = false\n\n"+
				"[analytics]\nenabled = false\n\n[features]\nplugins = false\n", s.URL())
			if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(conf), 0o600); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "exec", "--skip-git-repo-check", "say hi")
			cmd.Dir = t.TempDir()
			cmd.Env = append(os.Environ(), "CODEX_HOME="+home, "HOME="+home, "QUOTAGATE_API_KEY="+s.GeneratedKeys()["local"])
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), demo.DefaultText) {
				t.Fatalf("codex exec: %v\n%s", err, out)
			}
			runs, err := s.Store().Runs(context.Background(), ledger.RunFilter{TenantID: "local"})
			if err != nil || len(runs) == 0 {
				t.Fatalf("runs %v, %v", runs, err)
			}
			var spent ledger.Units
			for _, r := range runs {
				if r.Usage != ledger.UsageTrusted || r.Status != ledger.RunCompleted {
					t.Errorf("run %+v, want completed/trusted", r)
				}
				spent += r.SpentUnits
			}
			b, err := s.Store().Balance(context.Background(), "local")
			if err != nil || b.SpentUnits != spent || spent == 0 || b.HeldUnits != 0 || b.Active != 0 {
				t.Errorf("balance %+v (%v), want spent %d and nothing held", b, err, spent)
			}
		})
	}
}

// The assembled server answers Codex's WebSocket try with 426 too (its
// middleware — host check, metrics — lets the upgrade request through).
func TestResponsesWebSocket426AssembledServer(t *testing.T) {
	s := openServer(t, fstest.MapFS{"index.html": {Data: []byte("<title>q</title>")}})
	req, _ := http.NewRequest(http.MethodGet, s.URL()+"/v1/responses", nil)
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Sec-WebSocket-Version", "13")
	req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUpgradeRequired {
		t.Fatalf("status %d, want 426", resp.StatusCode)
	}
	t.Logf("426 in %v", time.Since(start))
}
