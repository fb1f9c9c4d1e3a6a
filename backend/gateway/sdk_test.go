package gateway_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/upstream/demo"
)

// The official OpenAI Go SDK streams a completion through quotagate exactly
// as it would from OpenAI: only the base URL and the key change.
func TestOpenAIGoSDKStreamsThroughGateway(t *testing.T) {
	e := newEnv(t, envOpts{tenants: []ledger.Tenant{tenant("a", 10_000, 2)}, plan: demo.Plan{Text: "你好 AI"}})
	var runIDs []string
	client := openai.NewClient(
		option.WithUnsafeAllowHTTP(), // loopback
		option.WithBaseURL(e.srv.URL+"/v1/"),
		option.WithAPIKey("key-a"),
		option.WithMaxRetries(0),
		option.WithMiddleware(func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
			resp, err := next(req)
			if resp != nil {
				runIDs = append(runIDs, resp.Header.Get("X-Run-Id"))
			}
			return resp, err
		}),
	)
	stream := client.Chat.Completions.NewStreaming(ctxT(t), openai.ChatCompletionNewParams{
		Model:         "demo-chat",
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("问题")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	})
	acc := openai.ChatCompletionAccumulator{}
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if got := acc.Choices[0].Message.Content; got != "你好 AI" {
		t.Errorf("content %q", got)
	}
	if acc.Usage.TotalTokens != 15 {
		t.Errorf("usage %+v, want 15 total (utf8-bytes demo)", acc.Usage)
	}
	if len(runIDs) != 1 || runIDs[0] == "" {
		t.Fatalf("run ids %q", runIDs)
	}
	if run := e.waitEnd(ledger.RunID(runIDs[0])); run.Usage != ledger.UsageTrusted || run.SpentUnits != 15 {
		t.Errorf("run %+v", run)
	}

	// And a non-streaming call.
	comp, err := client.Chat.Completions.New(ctxT(t), openai.ChatCompletionNewParams{
		Model:    "demo-chat",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("问题")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if comp.Choices[0].Message.Content != "你好 AI" || comp.Usage.TotalTokens != 15 {
		t.Errorf("completion %q usage %+v", comp.Choices[0].Message.Content, comp.Usage)
	}
	// SDK errors carry the OpenAI shape.
	wrong := openai.NewClient(option.WithUnsafeAllowHTTP(), option.WithBaseURL(e.srv.URL+"/v1/"),
		option.WithAPIKey("wrong"), option.WithMaxRetries(0))
	_, err = wrong.Chat.Completions.New(ctxT(t), openai.ChatCompletionNewParams{
		Model: "demo-chat", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 401 || apiErr.Code != "invalid_api_key" {
		t.Errorf("SDK error %v", err)
	}
}
