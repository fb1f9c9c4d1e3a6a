package gateway_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/upstream/demo"
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
