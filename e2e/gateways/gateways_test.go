// Package gateways_test runs several quotagate processes on one PostgreSQL
// ledger, as an operator does to share budgets and holds: each gateway is this test binary run again in child
// mode, which does what `quotagate serve` does — config.Parse, server.Open —
// with `ledger: {driver: postgres}` pointing at the test cluster. The demo
// upstream runs in the parent, so the test sees what the provider saw.
package gateways_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/config"
	"github.com/quotagate/quotagate/backend/postgres/pgtest"
	"github.com/quotagate/quotagate/backend/server"
)

// Child mode: the environment names the gateway.
const (
	envChild = "QUOTAGATE_GW_CHILD" // instance name
	envDSN   = "QUOTAGATE_GW_DSN"
	envDemo  = "QUOTAGATE_GW_DEMO"
	envData  = "QUOTAGATE_GW_DATA"
	// envLease overrides the gateways' 2 s lease expiry: a test that does
	// not kill a gateway takes a long one, since a gateway starved of CPU
	// past its lease (a loaded 2-core machine) is rightly judged dead.
	envLease = "QUOTAGATE_GW_LEASE"
	// envConfig "lookup" picks lookupConfig over gatewayConfig.
	envConfig = "QUOTAGATE_GW_CONFIG"
)

const (
	adminToken = "gateways-admin-token-0123456789"
	keyB       = "sk-gateways-tenant-b-0123456789"
	keyC       = "sk-gateways-tenant-c-0123456789"
	keyA       = "sk-gateways-tenant-a-0123456789"
)

// gatewayConfig is every gateway's config: the same tenants and upstreams
// (the shared definitions), its own instance name.
const gatewayConfig = `
meter: utf8-bytes-v1
admin_token: %[1]q
tenants:
  - {id: a, key: %[2]q, budget_units: 100000000, max_concurrent: 200}
  - {id: b, key: %[3]q, budget_units: 1000, max_concurrent: 200}
  - {id: c, key: %[4]q, budget_units: 100000000, max_concurrent: 1}
upstreams:
  - {name: up, kind: openai, base_url: %[5]q, api_key: sk-provider, models: [demo-chat], max_concurrent: 200, queue: {max_waiters: 200, max_wait: 8s}}
  - name: gup
    kind: openai
    base_url: %[5]q
    api_key: sk-provider
    models: [demo-guarded]
    max_concurrent: 200
    queue: {max_waiters: 200, max_wait: 8s}
    quota: {daily_cap: 1000, small_buffer: 1, usage_wall: 1000000, balance_wall: 1, timezone: UTC, balance: {kind: manual}}
ledger: {driver: postgres, dsn: ${QUOTAGATE_GW_DSN}, instance: %[6]s, version: 1, heartbeat: 300ms, lease_expiry: %[7]s}
`

// lookupConfig is the gateways' config for a test of usage lookups, which
// count tokens (envConfig "lookup"): one tenant, one upstream with a
// usage_lookup.
const lookupConfig = `
meter: tiktoken
admin_token: %[1]q
tenants:
  - {id: a, key: %[2]q, budget_units: 100000000, max_concurrent: 200}
upstreams:
  - name: lup
    kind: openai
    base_url: %[5]q
    api_key: sk-provider
    models: [demo-lookup]
    usage_lookup: {kind: openrouter, delay: 100ms, window: 1m}
ledger: {driver: postgres, dsn: ${QUOTAGATE_GW_DSN}, instance: %[6]s, version: 1, heartbeat: 300ms, lease_expiry: %[7]s}
`

func TestMain(m *testing.M) {
	if name := os.Getenv(envChild); name != "" {
		os.Exit(serveChild(name))
	}
	os.Exit(pgtest.Main(m))
}

// serveChild is `quotagate serve` with the gateways' config: it prints
// "URL <base>" once serving, and serves until killed.
func serveChild(name string) int {
	lease := os.Getenv(envLease)
	if lease == "" {
		lease = "2s"
	}
	conf := gatewayConfig
	if os.Getenv(envConfig) == "lookup" {
		conf = lookupConfig
	}
	yaml := fmt.Sprintf(conf, adminToken, keyA, keyB, keyC, os.Getenv(envDemo), name, lease)
	cfg, err := config.Parse([]byte(yaml), os.LookupEnv)
	if err != nil {
		fmt.Println("ERROR", err)
		return 2
	}
	s, err := server.Open(context.Background(), server.Options{Config: cfg, DataDir: os.Getenv(envData), Addr: "127.0.0.1:0"})
	if err != nil {
		fmt.Println("ERROR", strings.ReplaceAll(err.Error(), "\n", " "))
		return 2
	}
	fmt.Println("URL", s.URL())
	select {}
}

// gateway is a running child, seen from the parent.
type gateway struct {
	name string
	cmd  *exec.Cmd
	url  string
}

// startGateways starts n gateways named gw-0… on dsn in parallel, in front
// of the upstream at demoURL.
func startGateways(t *testing.T, n int, dsn, demoURL string) []*gateway {
	t.Helper()
	gws := make([]*gateway, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			gws[i], errs[i] = startGateway(t, fmt.Sprintf("gw-%d", i), dsn, demoURL)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return gws
}

func startGateway(t *testing.T, name, dsn, demoURL string) (*gateway, error) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), envChild+"="+name, envDSN+"="+dsn, envDemo+"="+demoURL, envData+"="+t.TempDir())
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr := &strings.Builder{}
	var mu sync.Mutex
	cmd.Stderr = writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return stderr.Write(p) })
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			mu.Lock()
			t.Logf("%s stderr:\n%s", name, stderr.String())
			mu.Unlock()
		}
	})
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	select {
	case l, ok := <-lines:
		if u, found := strings.CutPrefix(l, "URL "); ok && found {
			go func() {
				for range lines {
				}
			}()
			return &gateway{name: name, cmd: cmd, url: u}, nil
		}
		return nil, fmt.Errorf("%s: %q", name, l)
	case <-time.After(60 * time.Second):
		return nil, fmt.Errorf("%s: no URL line in 60 s", name)
	}
}

type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// chatBody is a streaming chat request; "/demo kind=stall" (16 bytes) with
// max_tokens 86 reserves 102 units under utf8-bytes-v1.
func chatBody(content string, maxTokens int) string {
	return chatBodyFor("demo-chat", content, maxTokens)
}

func chatBodyFor(model, content string, maxTokens int) string {
	c, _ := json.Marshal(content)
	return fmt.Sprintf(`{"model":%q,"stream":true,"max_tokens":%d,"messages":[{"role":"user","content":%s}]}`, model, maxTokens, c)
}

// answer is what a client saw.
type answer struct {
	gw     *gateway
	status int
	code   string
	runID  string
	resp   *http.Response // open body of an admitted stream
}

// post sends a chat request to gw and returns once the status is known; an
// admitted stream's body stays open in the answer.
func post(ctx context.Context, gw *gateway, key, body string) answer {
	req, _ := http.NewRequestWithContext(ctx, "POST", gw.url+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return answer{gw: gw, status: -1, code: err.Error()}
	}
	a := answer{gw: gw, status: resp.StatusCode, runID: resp.Header.Get("X-Run-Id"), resp: resp}
	if resp.StatusCode != http.StatusOK {
		var e struct{ Error struct{ Code string } }
		json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		a.code, a.resp = e.Error.Code, nil
	}
	return a
}

// race sends n requests spread round-robin over gws, released together.
func race(ctx context.Context, gws []*gateway, n int, key, body string) []answer {
	out := make([]answer, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			out[i] = post(ctx, gws[i%len(gws)], key, body)
		}()
	}
	close(start)
	wg.Wait()
	return out
}

// do sends one request with key (and a JSON body, if any) and returns
// status and body.
func do(t *testing.T, method, url, key string, body ...string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(strings.Join(body, "")))
	if len(body) > 0 {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
