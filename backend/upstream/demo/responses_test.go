package demo_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/responses"
	"github.com/quotagate/quotagate/backend/upstream/demo"
)

func postResponses(t *testing.T, ctx context.Context, s *demo.Server, plan, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "POST", s.URL()+"/responses", strings.NewReader(body))
	if plan != "" {
		req.Header.Set(demo.PlanHeader, plan)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// readEvents returns the event names in order and what the reader made of
// the stream; cut is true when the body ended in a read error.
func readEvents(t *testing.T, r io.Reader) (names []string, res responses.Result, cut bool) {
	t.Helper()
	var rd responses.Reader
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	var name string
	for sc.Scan() {
		line := sc.Text()
		if n, ok := strings.CutPrefix(line, "event: "); ok {
			name = n
		}
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			names = append(names, name)
			if err := rd.Observe(name, []byte(d)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return names, rd.Result(), sc.Err() != nil
}

const respBody = `{"model":"demo-chat","stream":true,"instructions":"ab","input":[{"role":"user","content":[{"type":"input_text","text":"问题"}]}]}`

func TestResponsesStreamText(t *testing.T) {
	s := start(t, demo.Options{})
	resp := postResponses(t, waitCtx(t), s, "text=你好 AI&chunks=2", respBody)
	defer resp.Body.Close()
	names, res, cut := readEvents(t, resp.Body)
	want := "response.created response.in_progress response.output_item.added response.content_part.added " +
		"response.output_text.delta response.output_text.delta response.output_text.done response.content_part.done " +
		"response.output_item.done response.completed"
	if got := strings.Join(names, " "); got != want || cut {
		t.Fatalf("events %s (cut %v)\nwant %s", got, cut, want)
	}
	// Seed 000 in Responses form: "ab" + "问题" = 8 bytes in, "你好 AI" = 9 out.
	if res.Final != responses.FinalCompleted || res.Output != "你好 AI" || res.Usage == nil ||
		res.Usage.InputTokens != 8 || res.Usage.OutputTokens != 9 || res.Problem != "" {
		t.Fatalf("result %+v usage %+v", res, res.Usage)
	}
}

func TestResponsesFunctionCallRoundTrip(t *testing.T) {
	s := start(t, demo.Options{})
	plan := `call=get_weather&args={"city":"Paris"}`
	resp := postResponses(t, waitCtx(t), s, plan, respBody)
	names, res, _ := readEvents(t, resp.Body)
	resp.Body.Close()
	if got := strings.Join(names, " "); !strings.Contains(got, "response.output_item.added response.function_call_arguments.delta response.function_call_arguments.delta response.function_call_arguments.done response.output_item.done response.completed") {
		t.Fatalf("events %s", got)
	}
	if res.Output != `{"city":"Paris"}` || res.Usage == nil || res.Usage.OutputTokens != int64(len(`{"city":"Paris"}`)) {
		t.Fatalf("result %+v", res)
	}
	// The same plan with the function's output appended answers in text.
	second := `{"model":"demo-chat","stream":false,"input":[{"role":"user","content":"问题"},` +
		`{"type":"function_call","call_id":"call_demo_1","name":"get_weather","arguments":"{}"},` +
		`{"type":"function_call_output","call_id":"call_demo_1","output":"21C"}]}`
	resp = postResponses(t, waitCtx(t), s, plan, second)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	r, err := responses.ParseResponse(body)
	if err != nil || r.Final != responses.FinalCompleted || r.Output != demo.AckPrefix+"21C" ||
		r.Usage == nil || r.Usage.InputTokens != int64(len("问题21C")) {
		t.Fatalf("second answer %s → %+v, %v", body, r, err)
	}
}

func TestResponsesFaults(t *testing.T) {
	tests := []struct {
		plan  string
		final responses.Final
		usage bool
		cut   bool
	}{
		{"kind=cut&after=1", responses.FinalNone, false, true},
		{"kind=no-usage", responses.FinalCompleted, false, false},
		{"kind=cut&after=1&call=f", responses.FinalNone, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.plan, func(t *testing.T) {
			s := start(t, demo.Options{})
			resp := postResponses(t, waitCtx(t), s, tt.plan, respBody)
			defer resp.Body.Close()
			_, res, cut := readEvents(t, resp.Body)
			if res.Final != tt.final || (res.Usage != nil) != tt.usage || cut != tt.cut {
				t.Fatalf("result %+v cut %v", res, cut)
			}
		})
	}
	s := start(t, demo.Options{})
	resp := postResponses(t, waitCtx(t), s, "kind=error&status=429", respBody)
	resp.Body.Close()
	if resp.StatusCode != 429 {
		t.Fatalf("error plan answered %d", resp.StatusCode)
	}
}

// Chat completions carry the scripted call too (the translated path of the
// Responses door relies on it).
func TestChatFunctionCall(t *testing.T) {
	s := start(t, demo.Options{})
	resp := post(t, waitCtx(t), s, `call=get_weather&args={"city":"Paris"}`, streamBody)
	defer resp.Body.Close()
	data, err := events(t, resp.Body)
	if err != nil || data[len(data)-1] != "[DONE]" {
		t.Fatalf("stream %v, %v", data, err)
	}
	var args, name, finish string
	var usage struct {
		CompletionTokens int64 `json:"completion_tokens"`
	}
	for _, d := range data[:len(data)-1] {
		var c struct {
			Choices []struct {
				Delta struct {
					ToolCalls []struct {
						Function struct{ Name, Arguments string } `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Usage json.RawMessage `json:"usage"`
		}
		if err := json.Unmarshal([]byte(d), &c); err != nil {
			t.Fatal(err)
		}
		for _, ch := range c.Choices {
			for _, tc := range ch.Delta.ToolCalls {
				name += tc.Function.Name
				args += tc.Function.Arguments
			}
			if ch.FinishReason != nil {
				finish = *ch.FinishReason
			}
		}
		if len(c.Usage) > 0 && string(c.Usage) != "null" {
			_ = json.Unmarshal(c.Usage, &usage)
		}
	}
	if name != "get_weather" || args != `{"city":"Paris"}` || finish != "tool_calls" || usage.CompletionTokens != int64(len(name+args)) {
		t.Fatalf("name %q args %q finish %q usage %+v", name, args, finish, usage)
	}
}
