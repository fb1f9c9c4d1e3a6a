package gateway_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/upstream/demo"
	"github.com/quotagate/quotagate/e2e/clients"
)

// sdkRetryCase is one failed (or retried) user call through a real SDK at
// its default retries (2): whether it sends an Idempotency-Key, whether it
// obeys x-should-retry (deaf: the header is removed before the SDK sees
// it, as for an SDK or framework that ignores it and retries every 5xx),
// and what the ledger must show after it.
type sdkRetryCase struct {
	name     string
	plan     demo.Plan
	key      bool
	deaf     bool
	statuses []int // of each HTTP attempt
	status   int   // the error the call raised; 0 when it succeeded
	runs     int   // admitted
	holds    int
	retryOf  bool // every run after the first names the one before it
}

// sdkRetryCases: with x-should-retry obeyed one attempt is made either way
// (without it the cut took 3 attempts and 3 holds);
// deaf, the key is what keeps a cut call to one hold (2 × 409 instead of 2
// more holds); a call the provider refused before any output (hold released)
// is retried with the same key and succeeds, in the first run's retry group;
// a 400 is the provider's answer: one attempt, no hold.
var sdkRetryCases = []sdkRetryCase{
	{"Cut502", demo.Plan{Kind: demo.KindCut, CutAfter: 1}, false, false, []int{502}, 502, 1, 1, false},
	{"Cut502Key", demo.Plan{Kind: demo.KindCut, CutAfter: 1}, true, false, []int{502}, 502, 1, 1, false},
	{"Cut502Deaf", demo.Plan{Kind: demo.KindCut, CutAfter: 1}, false, true, []int{502, 502, 502}, 502, 3, 3, true},
	{"Cut502DeafKey", demo.Plan{Kind: demo.KindCut, CutAfter: 1}, true, true, []int{502, 409, 409}, 409, 1, 1, false},
	{"Upstream500ThenOKKey", demo.Plan{Kind: demo.KindError, Status: 500, Times: 1}, true, false, []int{502, 200}, 0, 2, 0, true},
	{"Upstream400", demo.Plan{Kind: demo.KindError, Status: 400}, false, false, []int{400}, 400, 1, 0, false},
}

func (tc sdkRetryCase) check(t *testing.T, e *env, statuses []int, status int) {
	t.Helper()
	runs, err := e.store.Runs(context.Background(), ledger.RunFilter{TenantID: "a"})
	if err != nil {
		t.Fatal(err)
	}
	holds := 0
	for _, r := range runs {
		if r.Usage.Holding() {
			holds++
		}
	}
	t.Logf("%s: attempts %v, call error %d, %d runs, %d holds (%d units held)", tc.name, statuses, status, len(runs), holds, e.balance("a").HeldUnits)
	if !equalInts(statuses, tc.statuses) || status != tc.status || len(runs) != tc.runs || holds != tc.holds {
		t.Errorf("attempts %v, error %d, %d runs, %d holds; want %v, %d, %d, %d", statuses, status, len(runs), holds,
			tc.statuses, tc.status, tc.runs, tc.holds)
	}
	for i := 0; i+1 < len(runs); i++ { // newest first
		if got, want := runs[i].RetryOf, runs[i+1].ID; tc.retryOf && got != want {
			t.Errorf("run %s (retry %d) retry_of %q, want %s", runs[i].ID, runs[i].RetryCount, got, want)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestOpenAIGoSDKRetriesWithKey measures holds per failed user call with the
// real openai Go SDK: SDK retries must not multiply the holds a failure keeps.
func TestOpenAIGoSDKRetriesWithKey(t *testing.T) {
	for _, tc := range sdkRetryCases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, envOpts{tenants: []ledger.Tenant{tenant("a", 100_000, 4)}, plan: tc.plan})
			var mu sync.Mutex
			var statuses []int
			opts := []option.RequestOption{
				option.WithUnsafeAllowHTTP(),
				option.WithBaseURL(e.srv.URL + "/v1/"),
				option.WithAPIKey("key-a"),
				option.WithMiddleware(func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
					resp, err := next(req)
					if err == nil {
						mu.Lock()
						statuses = append(statuses, resp.StatusCode)
						mu.Unlock()
						if tc.deaf {
							resp.Header.Del("X-Should-Retry")
						}
					}
					return resp, err
				}),
			}
			if tc.key {
				opts = append(opts, option.WithHeader("Idempotency-Key", "user-call-"+tc.name))
			}
			client := openai.NewClient(opts...)
			_, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
				Model:    "demo-chat",
				Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hello")},
			})
			status := 0
			if err != nil {
				status = -1
				if ae, ok := err.(*openai.Error); ok {
					status = ae.StatusCode
				}
			}
			mu.Lock()
			defer mu.Unlock()
			tc.check(t, e, statuses, status)
		})
	}
}

// TestOpenAIJSRetriesWithKey is the same measure with the pinned openai JS
// SDK (e2e/clients).
func TestOpenAIJSRetriesWithKey(t *testing.T) {
	jsRetries(t, "testdata/clients/holds_idem_sdk.js", "/v1")
}

// TestAnthropicSDKRetriesWithKey is the same measure with the pinned
// @anthropic-ai/sdk at the Messages door (translated to the demo's chat).
func TestAnthropicSDKRetriesWithKey(t *testing.T) {
	jsRetries(t, "anthropic", "") // the SDK adds /v1 itself
}

func jsRetries(t *testing.T, sdk, basePath string) {
	node, nodePath := clients.Node(t)
	script, err := filepath.Abs("testdata/clients/holds_idem_sdk.js")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range sdkRetryCases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, envOpts{tenants: []ledger.Tenant{tenant("a", 100_000, 4)}})
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, script)
			cmd.Env = append(os.Environ(), "NODE_PATH="+nodePath, "SDK="+sdk, "BASE="+e.srv.URL+basePath, "KEY=key-a", "PLAN="+tc.plan.Encode())
			if tc.key {
				cmd.Env = append(cmd.Env, "IDEM=user-call-"+tc.name)
			}
			if tc.deaf {
				cmd.Env = append(cmd.Env, "DEAF=1")
			}
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("node: %v\n%s", err, out)
			}
			var got struct {
				Statuses []int
				Status   int
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			tc.check(t, e, got.Statuses, got.Status)
		})
	}
}
