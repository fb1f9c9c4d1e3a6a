package e2e_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/config"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/server"
	"github.com/quotagate/quotagate/backend/upstream/demo"
)

// Environment of the child of TestKilledStreamSettledByProvider.
const (
	lookupChildDir  = "QG_E2E_LOOKUP_CHILD_DIR"
	lookupChildDemo = "QG_E2E_LOOKUP_CHILD_DEMO"
	lookupAdmin     = "e2e-lookup-admin-token-0123456789"
)

// lookupKillConfig is a gateway in front of an upstream (the parent's
// demo) whose usage can be looked up, figures applied at once.
func lookupKillConfig(demoURL string) (*config.Config, error) {
	return config.Parse([]byte(fmt.Sprintf(`
meter: tiktoken
admin_token: %s
tenants: [{id: a, key: %s, budget_units: 100000, max_concurrent: 4}]
upstreams:
  - name: up
    kind: openai
    base_url: %q
    api_key: %s
    models: [demo-chat]
    usage_lookup: {kind: openrouter, delay: 100ms, window: 1m}
    auto_reconcile: true
`, lookupAdmin, evidenceKey, demoURL, canaryUpstream)), func(string) (string, bool) { return "", false })
}

// TestKilledStreamLookupChild is not a test on its own: run by
// TestKilledStreamSettledByProvider, it serves the config until SIGKILL.
func TestKilledStreamLookupChild(t *testing.T) {
	dir, demoURL := os.Getenv(lookupChildDir), os.Getenv(lookupChildDemo)
	if dir == "" {
		t.Skip("child process of TestKilledStreamSettledByProvider")
	}
	cfg, err := lookupKillConfig(demoURL)
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(2)
	}
	s, err := server.Open(context.Background(), server.Options{Config: cfg, DataDir: dir, Addr: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(2)
	}
	fmt.Println("URL", s.URL())
	select {} // until SIGKILL
}

// TestKilledStreamSettledByProvider: a gateway is SIGKILLed while a stream
// on an upstream with a usage_lookup is still running, after it kept the
// provider's id on the run (a "named" row). Restarted on the same data
// dir, it finds the run held, asks the provider by that id and settles the
// hold from the provider's figure — no operator needed.
func TestKilledStreamSettledByProvider(t *testing.T) {
	t.Parallel()
	if os.Getenv(lookupChildDir) != "" {
		t.Skip("in the child")
	}
	d, err := demo.Start(demo.Options{APIKey: canaryUpstream})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	release := d.Hold() // the stream pauses after its first part: it is running when the gateway dies
	defer release()
	dir := t.TempDir()
	c := startChild(t, "TestKilledStreamLookupChild", lookupChildDir+"="+dir, lookupChildDemo+"="+d.URL())

	req, _ := http.NewRequest("POST", c.url+"/v1/chat/completions",
		strings.NewReader(`{"model":"demo-chat","stream":true,"max_tokens":50,"messages":[{"role":"user","content":"hello"}]}`))
	req.Header.Set("Authorization", "Bearer "+evidenceKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	id := ledger.RunID(resp.Header.Get("X-Run-Id"))
	if line, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil || !strings.HasPrefix(line, "data: ") {
		t.Fatalf("first line of the stream: %q, %v", line, err)
	}
	waitNamed(t, c.url, id)
	c.cmd.Process.Kill()
	c.cmd.Wait()
	release() // the provider finishes the call it was making, and can be asked about it

	cfg, err := lookupKillConfig(d.URL())
	if err != nil {
		t.Fatal(err)
	}
	s, err := server.Open(context.Background(), server.Options{Config: cfg, DataDir: dir, Addr: "127.0.0.1:0", Version: "e2e"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	sub := s.Hub().Subscribe()
	defer sub.Close()
	waitReconciled(t, s, sub, id)
	rows, err := s.Store().Audit(context.Background(), ledger.AuditFilter{RunID: id})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, r := range rows {
		kinds = append(kinds, string(r.Kind)+" "+r.Actor.String())
	}
	if got := strings.Join(kinds, ", "); got != "admit tenant:a, named tenant:a, recover system:recovery, lookup provider:up, reconcile provider:up" {
		t.Fatalf("run %s's audit rows: %s", id, got)
	}
	if diffs, err := s.Store().Verify(context.Background()); err != nil || len(diffs) > 0 {
		t.Fatalf("verify: %v %v", diffs, err)
	}
}

// waitNamed polls the gateway at url until run id's provider id is kept
// (its "named" audit row): the gateway is another process.
func waitNamed(t *testing.T, url string, id ledger.RunID) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		req, _ := http.NewRequest("GET", fmt.Sprintf("%s/admin/api/audit?run=%s&kind=named", url, id), nil)
		req.Header.Set("Authorization", "Bearer "+lookupAdmin)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var page struct {
			Rows []ledger.AuditEntry `json:"rows"`
		}
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if err == nil && len(page.Rows) == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s never kept its provider id (%v)", id, err)
		}
		time.Sleep(20 * time.Millisecond) // another process: nothing here to wait on
	}
}
