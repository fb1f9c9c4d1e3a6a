package gateway_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/quotagate/quotagate/backend/gateway"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/upstream"
	"github.com/quotagate/quotagate/backend/upstream/demo"
)

// doors: one request per front door, non-streaming, that the demo answers.
var doors = []struct {
	name, path, body string
	anthropic        bool
}{
	{"Chat", "/v1/chat/completions", `{"model":"demo-chat","messages":[{"role":"user","content":"hi"}]}`, false},
	{"Responses", "/v1/responses", `{"model":"demo-chat","input":"hi"}`, false},
	{"Messages", "/v1/messages", `{"model":"demo-chat","max_tokens":20,"messages":[{"role":"user","content":"hi"}]}`, true},
}

// TestDuplicateRequest is the Idempotency-Key rule at every door: a request carrying
// the Idempotency-Key of the tenant's earlier run is answered 409
// duplicate_request in the door's error shape, naming that run (also in
// X-Run-Id), with x-should-retry: false, nothing reserved and nothing sent
// upstream; another tenant's equal key is unrelated.
func TestDuplicateRequest(t *testing.T) {
	for _, d := range doors {
		t.Run(d.name, func(t *testing.T) {
			e := newEnv(t, envOpts{tenants: []ledger.Tenant{tenant("a", 10_000, 4), tenant("b", 10_000, 4)},
				upstream: upstream.Options{Protocols: []string{"chat", "responses", "messages"}}})
			hdr := map[string]string{"Idempotency-Key": "call-1", "X-Stainless-Retry-Count": "0"}
			first := e.do(ctxT(t), http.MethodPost, d.path, "key-a", d.body, hdr)
			io.Copy(io.Discard, first.Body)
			first.Body.Close()
			if first.StatusCode != 200 {
				t.Fatalf("first call: %d", first.StatusCode)
			}
			id := runID(t, first)
			run := e.waitEnd(id)
			if run.IdempotencyKey != "call-1" || run.Door != strings.ToLower(d.name) || run.UpstreamProtocol != run.Door || run.RetryCount != 0 {
				t.Fatalf("first run %+v", run)
			}
			sent, before := len(e.demo.Stats().Requests), e.balance("a")

			hdr["X-Stainless-Retry-Count"] = "1"
			dup := e.do(ctxT(t), http.MethodPost, d.path, "key-a", d.body, hdr)
			body, _ := io.ReadAll(dup.Body)
			dup.Body.Close()
			if dup.StatusCode != http.StatusConflict || dup.Header.Get("X-Run-Id") != string(id) ||
				dup.Header.Get("X-Should-Retry") != "false" {
				t.Fatalf("duplicate: %d X-Run-Id %q x-should-retry %q: %s", dup.StatusCode, dup.Header.Get("X-Run-Id"),
					dup.Header.Get("X-Should-Retry"), body)
			}
			msg := ""
			if d.anthropic {
				var eb struct {
					Type  string
					Error struct{ Type, Message string }
				}
				if err := json.Unmarshal(body, &eb); err != nil || eb.Type != "error" || eb.Error.Type != "invalid_request_error" {
					t.Fatalf("not Anthropic-shaped: %s", body)
				}
				msg = eb.Error.Message
			} else {
				var eb struct {
					Error struct{ Message, Type, Code string }
				}
				if err := json.Unmarshal(body, &eb); err != nil || eb.Error.Code != ledger.CodeDuplicateRequest || eb.Error.Type != "invalid_request_error" {
					t.Fatalf("not OpenAI-shaped: %s", body)
				}
				msg = eb.Error.Message
			}
			if !strings.Contains(msg, string(id)) || !strings.Contains(msg, "duplicate_request") && d.anthropic {
				t.Fatalf("the message %q does not name run %s (and the code)", msg, id)
			}
			if got := len(e.demo.Stats().Requests); got != sent {
				t.Fatalf("the duplicate reached the upstream (%d requests, was %d)", got, sent)
			}
			if b := e.balance("a"); b != before {
				t.Fatalf("the duplicate moved the balance: %+v → %+v", before, b)
			}
			runs, _ := e.store.Runs(ctxT(t), ledger.RunFilter{TenantID: "a"})
			if len(runs) != 1 {
				t.Fatalf("%d runs recorded, want only the first", len(runs))
			}

			other := e.do(ctxT(t), http.MethodPost, d.path, "key-b", d.body, hdr)
			io.Copy(io.Discard, other.Body)
			other.Body.Close()
			if other.StatusCode != 200 {
				t.Fatalf("tenant b with the same key: %d", other.StatusCode)
			}
			if r := e.waitEnd(runID(t, other)); r.RetryOf != "" || r.RetryCount != 1 {
				t.Fatalf("tenant b's run %+v", r)
			}
		})
	}
}

// TestIdempotencyKeyRefusedMalformed: a key that cannot be recorded is a 400
// before anything is read or reserved.
func TestIdempotencyKeyRefusedMalformed(t *testing.T) {
	e := newEnv(t, envOpts{tenants: []ledger.Tenant{tenant("a", 10_000, 4)}})
	for _, key := range []string{"two words", strings.Repeat("k", 256), "é"} {
		resp := e.do(ctxT(t), http.MethodPost, "/v1/chat/completions", "key-a", doors[0].body, map[string]string{"Idempotency-Key": key})
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(string(b), "Idempotency-Key") {
			t.Errorf("key %.20q: %d %s", key, resp.StatusCode, b)
		}
	}
	if n := len(e.demo.Stats().Requests); n != 0 {
		t.Fatalf("%d requests reached the upstream", n)
	}
}

// TestRetryOfReleasedRun: an upstream 500 before any output releases the
// hold (the provider did no work), so the key is not used up: the retry
// with the same key is admitted and names the run it retries.
func TestRetryOfReleasedRun(t *testing.T) {
	e := newEnv(t, envOpts{tenants: []ledger.Tenant{tenant("a", 10_000, 4)}})
	plan := demo.Plan{Kind: demo.KindError, Status: 500, Times: 1}.Encode()
	hdr := map[string]string{"Idempotency-Key": "k", demo.PlanHeader: plan}
	first := e.do(ctxT(t), http.MethodPost, "/v1/chat/completions", "key-a", doors[0].body, hdr)
	io.Copy(io.Discard, first.Body)
	first.Body.Close()
	if first.StatusCode != http.StatusBadGateway {
		t.Fatalf("first: %d", first.StatusCode)
	}
	firstID := runID(t, first)
	if r := e.waitEnd(firstID); r.Usage != ledger.UsageReleased {
		t.Fatalf("first run %+v", r)
	}
	hdr["X-Stainless-Retry-Count"] = "1"
	retry := e.do(ctxT(t), http.MethodPost, "/v1/chat/completions", "key-a", doors[0].body, hdr)
	io.Copy(io.Discard, retry.Body)
	retry.Body.Close()
	if retry.StatusCode != 200 {
		t.Fatalf("retry: %d", retry.StatusCode)
	}
	if r := e.waitEnd(runID(t, retry)); r.RetryOf != firstID || r.RetryCount != 1 || r.Usage != ledger.UsageTrusted {
		t.Fatalf("retry run %+v, want retry_of %s", r, firstID)
	}
}

// TestRetryOfBySDKAttempt: an SDK's attempts without a key (same body, same
// door, X-Stainless-Retry-Count 0, 1, 2) form one retry group; another body
// does not join it.
func TestRetryOfBySDKAttempt(t *testing.T) {
	e := newEnv(t, envOpts{tenants: []ledger.Tenant{tenant("a", 10_000, 4)}})
	var ids []ledger.RunID
	for i, body := range []string{doors[0].body, doors[0].body, doors[0].body,
		`{"model":"demo-chat","messages":[{"role":"user","content":"another"}]}`} {
		n := i
		if i == 3 {
			n = 1
		}
		resp := e.do(ctxT(t), http.MethodPost, "/v1/chat/completions", "key-a", body, map[string]string{"X-Stainless-Retry-Count": fmt.Sprint(n)})
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		ids = append(ids, runID(t, resp))
		e.waitEnd(ids[i])
	}
	for i, want := range []ledger.RunID{"", ids[0], ids[1], ""} {
		if r, _ := e.store.Run(ctxT(t), ids[i]); r.RetryOf != want {
			t.Errorf("attempt %d: retry_of %q, want %q", i, r.RetryOf, want)
		}
	}
}

// TestConcurrentDuplicates: many clients sending one key at once through
// the gateway: one run, every other answer a 409 naming it, one request upstream.
func TestConcurrentDuplicates(t *testing.T) {
	e := newEnv(t, envOpts{tenants: []ledger.Tenant{tenant("a", 1_000_000, 100)}})
	const n = 40
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses, named := map[int]int{}, map[string]int{}
	start := make(chan struct{})
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			req, _ := http.NewRequestWithContext(ctxT(t), http.MethodPost, e.srv.URL+"/v1/chat/completions", strings.NewReader(doors[0].body))
			req.Header.Set("Authorization", "Bearer key-a")
			req.Header.Set("Idempotency-Key", "same")
			resp, err := e.srv.Client().Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			mu.Lock()
			statuses[resp.StatusCode]++
			named[resp.Header.Get("X-Run-Id")]++
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	if statuses[200] != 1 || statuses[409] != n-1 || len(named) != 1 {
		t.Fatalf("statuses %v, X-Run-Id values %v; want one 200, %d × 409, all naming one run", statuses, named, n-1)
	}
	if got := len(e.demo.Stats().Requests); got != 1 {
		t.Fatalf("%d requests upstream, want 1", got)
	}
}

// TestCachedTokensPerDoor: the cached input tokens of trusted usage land
// on the run — OpenAI's prompt_tokens_details.cached_tokens (chat),
// Responses' input_tokens_details.cached_tokens, Anthropic's
// cache_read_input_tokens — from an upstream on a loopback socket that
// answers with them.
func TestCachedTokensPerDoor(t *testing.T) {
	for _, tc := range []struct {
		name, path, body, answer, protocol string
	}{
		{"Chat", "/v1/chat/completions", doors[0].body,
			`{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],` +
				`"usage":{"prompt_tokens":2,"completion_tokens":2,"total_tokens":4,"prompt_tokens_details":{"cached_tokens":1}}}`, "chat"},
		{"Responses", "/v1/responses", doors[1].body,
			`{"id":"resp_1","object":"response","status":"completed","output":[{"type":"message","id":"m","role":"assistant","status":"completed",` +
				`"content":[{"type":"output_text","text":"ok","annotations":[]}]}],` +
				`"usage":{"input_tokens":2,"input_tokens_details":{"cached_tokens":1},"output_tokens":2,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":4}}`, "responses"},
		{"Messages", "/v1/messages", doors[2].body,
			`{"id":"msg_1","type":"message","role":"assistant","model":"demo-chat","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn",` +
				`"usage":{"input_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":1,"output_tokens":2}}`, "messages"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, tc.answer)
			}))
			t.Cleanup(up.Close)
			e := newEnv(t, envOpts{tenants: []ledger.Tenant{tenant("a", 10_000, 4)}, modify: func(o *gateway.Options) {
				c, err := upstream.New(upstream.Options{Name: "fixed", BaseURL: up.URL, Models: []string{"demo-chat"},
					Protocols: []string{tc.protocol, "chat"}})
				if err != nil {
					t.Fatal(err)
				}
				o.Upstreams = []gateway.Upstream{c}
			}})
			resp := e.do(ctxT(t), http.MethodPost, tc.path, "key-a", tc.body, nil)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("%d %s", resp.StatusCode, b)
			}
			run := e.waitEnd(runID(t, resp))
			if run.Usage != ledger.UsageTrusted || run.CachedTokens != 1 || run.UpstreamProtocol != tc.protocol {
				t.Fatalf("run %+v, want trusted with 1 cached token relayed natively", run)
			}
		})
	}
}
