package gateway_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/upstream/demo"
	"github.com/quotagate/quotagate/e2e/clients"
)

// TestOpenAIGoSDKHoldsPerFailedCall measures issue 12 item 8 with the real
// openai Go SDK at its default retries (2): a non-streaming call that the
// upstream cuts (502 upstream_interrupted, hold kept) or that the upstream
// refuses with a 400 is one user call, and must leave at most one hold —
// the SDK obeys x-should-retry: false. (Before: 3 holds for the cut.)
func TestOpenAIGoSDKHoldsPerFailedCall(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plan  demo.Plan
		holds int
	}{
		{"Cut502", demo.Plan{Kind: demo.KindCut, CutAfter: 1}, 1},
		{"Upstream400", demo.Plan{Kind: demo.KindError, Status: 400}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, envOpts{tenants: []ledger.Tenant{tenant("a", 100_000, 4)}, plan: tc.plan})
			var attempts atomic.Int64
			client := openai.NewClient(
				option.WithUnsafeAllowHTTP(),
				option.WithBaseURL(e.srv.URL+"/v1/"),
				option.WithAPIKey("key-a"),
				option.WithMiddleware(func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
					attempts.Add(1)
					return next(req)
				}),
			)
			_, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
				Model:    "demo-chat",
				Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hello")},
			})
			if err == nil {
				t.Fatal("the failed call succeeded")
			}
			runs, rerr := e.store.Runs(context.Background(), ledger.RunFilter{TenantID: "a"})
			if rerr != nil {
				t.Fatal(rerr)
			}
			holds := 0
			for _, r := range runs {
				if r.Usage.Holding() {
					holds++
				}
			}
			t.Logf("%s: %d HTTP attempts, %d runs, %d holds (%d units held)", tc.name, attempts.Load(), len(runs), holds, e.balance("a").HeldUnits)
			if holds != tc.holds || attempts.Load() != 1 {
				t.Errorf("%d attempts left %d holds; want 1 attempt and %d", attempts.Load(), holds, tc.holds)
			}
		})
	}
}

// TestOpenAIJSHoldsPerFailedCall is the same measure with the pinned
// openai JS SDK (e2e/clients), at its default retries.
func TestOpenAIJSHoldsPerFailedCall(t *testing.T) {
	node, nodePath := clients.Node(t)
	script, err := filepath.Abs("testdata/clients/holds_sdk.js")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		plan   demo.Plan
		status int
		holds  int
	}{
		{"Cut502", demo.Plan{Kind: demo.KindCut, CutAfter: 1}, 502, 1},
		{"Upstream400", demo.Plan{Kind: demo.KindError, Status: 400}, 400, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, envOpts{tenants: []ledger.Tenant{tenant("a", 100_000, 4)}})
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, script)
			cmd.Env = append(os.Environ(), "NODE_PATH="+nodePath, "BASE="+e.srv.URL+"/v1", "KEY=key-a", "PLAN="+tc.plan.Encode())
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("node: %v\n%s", err, out)
			}
			var got struct{ Attempts, Status int }
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
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
			t.Logf("%s: %d HTTP attempts, %d runs, %d holds, error status %d", tc.name, got.Attempts, len(runs), holds, got.Status)
			if got.Status != tc.status || got.Attempts != 1 || holds != tc.holds {
				t.Errorf("got %+v and %d holds; want status %d, 1 attempt, %d holds", got, holds, tc.status, tc.holds)
			}
		})
	}
}
