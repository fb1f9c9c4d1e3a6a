package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/alert"
	"github.com/quotagate/quotagate/backend/config"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/server"
	"github.com/quotagate/quotagate/backend/upstream/demo"
)

// Environment of the child process of TestAlertsWebhookAcrossKill9.
const (
	alertsChildDir  = "QG_E2E_ALERTS_CHILD_DIR"
	alertsChildDemo = "QG_E2E_ALERTS_CHILD_DEMO"
	alertsChildHook = "QG_E2E_ALERTS_CHILD_HOOK"
)

const alertsSecret = alert.Secret("whsec-e2e-kill")

const alertsConfig = `
meter: utf8-bytes-v1
admin_token: %q
tenants: [{id: b, key: %q, budget_units: 1000, max_concurrent: 4}]
upstreams: [{name: up, kind: openai, base_url: %q, api_key: %q, models: [demo-chat]}]
alerts: {thresholds: [50, 80], webhook: {url: %q, secret: %q}}
`

// TestAlertsKill9Child is not a test on its own: run by
// TestAlertsWebhookAcrossKill9 as a child process, it serves quotagate
// with alerts to the parent's webhook until it is SIGKILLed.
func TestAlertsKill9Child(t *testing.T) {
	dir := os.Getenv(alertsChildDir)
	if dir == "" {
		t.Skip("child process of TestAlertsWebhookAcrossKill9")
	}
	yaml := fmt.Sprintf(alertsConfig, canaryAdmin, canaryKeyB, os.Getenv(alertsChildDemo), canaryUpstream,
		os.Getenv(alertsChildHook), string(alertsSecret))
	cfg, err := config.Parse([]byte(yaml), func(string) (string, bool) { return "", false })
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(2)
	}
	s, err := server.Open(context.Background(), server.Options{Config: cfg, DataDir: dir, Addr: "127.0.0.1:0",
		Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))})
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(2)
	}
	fmt.Println("URL", s.URL())
	select {} // until SIGKILL
}

// flakyHook is a webhook that answers 500 to its first three requests
// and 200 after.
type flakyHook struct {
	mu       sync.Mutex
	requests [][]byte
	failed   chan struct{} // one per 500
	ok       chan []byte   // each body answered 200
}

func (h *flakyHook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	signed := alert.Verify(alertsSecret, body, r.Header.Get(alert.SignatureHeader))
	h.mu.Lock()
	h.requests = append(h.requests, body)
	n := len(h.requests)
	h.mu.Unlock()
	if !signed {
		w.WriteHeader(http.StatusUnauthorized) // fails the test: it is never delivered
		return
	}
	if n <= 3 {
		w.WriteHeader(http.StatusInternalServerError)
		h.failed <- struct{}{}
		return
	}
	h.ok <- body
}

// TestAlertsWebhookAcrossKill9: a receiver that answers 500 three times
// then 200 gets every alert once, in order, signed, though the gateway is
// SIGKILLed between the failures and started again on its data dir.
func TestAlertsWebhookAcrossKill9(t *testing.T) {
	t.Parallel()
	if os.Getenv(alertsChildDir) != "" {
		t.Skip("in the child")
	}
	d, err := demo.Start(demo.Options{APIKey: canaryUpstream})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	h := &flakyHook{failed: make(chan struct{}, 10), ok: make(chan []byte, 10)}
	hook := httptest.NewServer(h)
	t.Cleanup(hook.Close)
	dir := t.TempDir()
	env := []string{alertsChildDir + "=" + dir, alertsChildDemo + "=" + d.URL(), alertsChildHook + "=" + hook.URL + "/hook"}

	c := startChild(t, "TestAlertsKill9Child", env...)
	spendPast(t, c.url, 800)
	for range 2 {
		waitFor(t, h.failed, "a failed delivery")
	}
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	c.cmd.Wait()

	startChild(t, "TestAlertsKill9Child", env...)
	waitFor(t, h.failed, "the third failed delivery")
	for _, want := range []float64{50, 80} {
		var got map[string]any
		if err := json.Unmarshal(waitFor(t, h.ok, "a delivery"), &got); err != nil {
			t.Fatal(err)
		}
		if got["kind"] != "threshold" || got["threshold"] != want || got["tenant"] != "b" {
			t.Fatalf("delivered %v, want the %v %% alert", got, want)
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.requests) != 5 {
		t.Fatalf("%d requests, want 3 failures and 2 deliveries", len(h.requests))
	}
	for i := 1; i < 4; i++ {
		if string(h.requests[i]) != string(h.requests[0]) {
			t.Fatalf("request %d is not the first alert again, byte for byte:\n%s\n%s", i, h.requests[i], h.requests[0])
		}
	}
}

// spendPast calls the child as tenant b until it has spent at least
// units: settled spend, which the alerts find whenever they look.
func spendPast(t *testing.T, base string, units ledger.Units) {
	t.Helper()
	for range 200 {
		var b ledger.Balance
		r := doURL(t, base, "GET", "/v1/balance", canaryKeyB, "")
		if err := json.Unmarshal(r.body, &b); err != nil || r.status != 200 {
			t.Fatalf("balance: %d %s", r.status, r.body)
		}
		if b.SpentUnits >= units {
			return
		}
		if r := doURL(t, base, "POST", "/v1/chat/completions", canaryKeyB, chatBody("hi", false, 20)); r.status != 200 {
			t.Fatalf("call: %d %s", r.status, r.body)
		}
	}
	t.Fatalf("200 calls did not spend %d units", units)
}

func waitFor[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatalf("no %s within 30s", what)
		var zero T
		return zero
	}
}
