package gateway_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/gate"
	"github.com/quotagate/quotagate/backend/gateway"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/upstream/demo"
)

func withRetry(o *gateway.Options) { o.Retry = gate.DefaultRetryPolicy }

// Seed 003: an upstream 429 before any output is retried (Retry-After
// honoured), and the call then succeeds and settles as usual.
func TestUpstream429ThenSuccessIsRetried(t *testing.T) {
	e := newEnv(t, envOpts{plan: demo.Plan{Text: "ok"}, modify: withRetry})
	resp := e.chat(ctxT(t), "key-a", hiBody, "kind=error&status=429&retry_after=0&times=1")
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("got %d %s, want the retried call to succeed", resp.StatusCode, b)
	}
	run := e.waitEnd(runID(t, resp))
	if run.Status != ledger.RunCompleted || run.Usage != ledger.UsageTrusted {
		t.Errorf("run %+v, want completed and trusted", run)
	}
	if n := e.demo.Stats().Received; n != 2 {
		t.Errorf("upstream received %d requests, want 2 (one 429, one retry)", n)
	}
}

// Three 429s: the policy's two retries are spent, the client gets the 429
// with the upstream's Retry-After, and the hold is released with every
// refusal as evidence.
func TestUpstreamThree429sReleaseHold(t *testing.T) {
	e := newEnv(t, envOpts{modify: withRetry})
	resp := e.chat(ctxT(t), "key-a", hiBody, "kind=error&status=429&retry_after=0&times=3")
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(b), `"code":"upstream_busy"`) {
		t.Fatalf("got %d %s, want 429 upstream_busy", resp.StatusCode, b)
	}
	run := e.waitEnd(runID(t, resp))
	if run.Status != ledger.RunFailed || run.Usage != ledger.UsageReleased || run.HeldUnits != 0 ||
		strings.Count(run.Evidence, "429") != 3 {
		t.Errorf("run %+v, want failed/released with the three 429s as evidence", run)
	}
	if bal := e.balance("a"); bal.AvailableUnits != 110 {
		t.Errorf("balance %+v, want everything available again", bal)
	}
	if n := e.demo.Stats().Received; n != 3 {
		t.Errorf("upstream received %d requests, want 3", n)
	}
}

// A Retry-After beyond the 15 s budget is not waited for: the 429 goes to
// the client at once.
func TestUpstreamRetryAfterBeyondBudgetIsNotRetried(t *testing.T) {
	e := newEnv(t, envOpts{modify: withRetry})
	start := time.Now()
	resp := e.chat(ctxT(t), "key-a", hiBody, "kind=error&status=503&retry_after=60")
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway {
		t.Fatalf("got %d, want 502 for a 503 that cannot be retried in time", resp.StatusCode)
	}
	if n := e.demo.Stats().Received; n != 1 {
		t.Errorf("upstream received %d requests, want 1", n)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %v: the gateway waited for a Retry-After it could not honour", d)
	}
}

// Output already relayed is never retried: a stream cut after its first part
// ends interrupted with one upstream request.
func TestNoRetryOnceOutputStarted(t *testing.T) {
	e := newEnv(t, envOpts{modify: withRetry})
	resp := e.chat(ctxT(t), "key-a", `{"model":"demo-chat","stream":true,"max_tokens":20,"messages":[{"role":"user","content":"hi"}]}`, "kind=cut&after=1&parts=part,more")
	s := readSSE(resp.Body)
	resp.Body.Close()
	if s.done() || s.errorCode() != ledger.CodeUpstreamInterrupt {
		t.Fatalf("stream %+v, want upstream_interrupted without [DONE]", s)
	}
	if n := e.demo.Stats().Received; n != 1 {
		t.Errorf("upstream received %d requests, want 1", n)
	}
}
