package demo_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/upstream/demo"
)

func start(t *testing.T, opts demo.Options) *demo.Server {
	t.Helper()
	s, err := demo.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func post(t *testing.T, ctx context.Context, s *demo.Server, plan, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "POST", s.URL()+"/chat/completions", strings.NewReader(body))
	if plan != "" {
		req.Header.Set(demo.PlanHeader, plan)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func waitCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

const streamBody = `{"model":"demo-chat","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"问题"}]}`

func events(t *testing.T, r io.Reader) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, d)
		}
	}
	return out, sc.Err()
}

func TestStreamReportsByteUsageLikeOpenAI(t *testing.T) {
	s := start(t, demo.Options{Plan: demo.Plan{Text: "你好 AI"}})
	resp := post(t, waitCtx(t), s, "", streamBody)
	defer resp.Body.Close()
	if resp.Header.Get("X-Demo") != "simulated" {
		t.Errorf("X-Demo = %q, want simulated", resp.Header.Get("X-Demo"))
	}
	ev, err := events(t, resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if ev[len(ev)-1] != "[DONE]" {
		t.Fatalf("last event %q, want [DONE]", ev[len(ev)-1])
	}
	var last struct {
		Choices []any
		Usage   struct{ PromptTokens, CompletionTokens, TotalTokens int64 } `json:"usage"`
	}
	raw := ev[len(ev)-2]
	if err := json.Unmarshal([]byte(strings.NewReplacer("prompt_tokens", "PromptTokens", "completion_tokens", "CompletionTokens", "total_tokens", "TotalTokens").Replace(raw)), &last); err != nil {
		t.Fatal(err)
	}
	if len(last.Choices) != 0 || last.Usage.PromptTokens != 6 || last.Usage.CompletionTokens != 9 || last.Usage.TotalTokens != 15 {
		t.Errorf("usage chunk %s, want empty choices and 6+9=15", raw)
	}
	var text strings.Builder
	for _, e := range ev[:len(ev)-2] {
		if !strings.Contains(e, `"usage":null`) {
			t.Errorf("chunk %s lacks usage:null", e)
		}
		var c struct {
			Choices []struct{ Delta struct{ Content string } } `json:"choices"`
		}
		json.Unmarshal([]byte(e), &c)
		if len(c.Choices) > 0 {
			text.WriteString(c.Choices[0].Delta.Content)
		}
	}
	if text.String() != "你好 AI" {
		t.Errorf("text %q", text.String())
	}
}

func TestPlans(t *testing.T) {
	tests := []struct {
		name      string
		plan      string
		wantDone  bool
		wantUsage bool
		wantErr   bool
		contains  string
	}{
		{name: "NoUsage", plan: "kind=no-usage", wantDone: true},
		{name: "FalseUsage", plan: "kind=false-usage&text=abc", wantDone: true, wantUsage: true, contains: `"completion_tokens":0`},
		{name: "UsageText", plan: "kind=usage-text", wantDone: true, wantUsage: true, contains: `\"usage\"`},
		{name: "Cut", plan: "kind=cut&after=1&parts=part,more,rest", wantErr: true, contains: `"content":"part"`},
		{name: "Slow", plan: "kind=slow&delay=1ms&chunks=3", wantDone: true, wantUsage: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := start(t, demo.Options{})
			resp := post(t, waitCtx(t), s, tt.plan, streamBody)
			defer resp.Body.Close()
			ev, err := events(t, resp.Body)
			if (err != nil) != tt.wantErr {
				t.Fatalf("read error %v, want error %v", err, tt.wantErr)
			}
			all := strings.Join(ev, "\n")
			if got := len(ev) > 0 && ev[len(ev)-1] == "[DONE]"; got != tt.wantDone {
				t.Errorf("[DONE] %v, want %v:\n%s", got, tt.wantDone, all)
			}
			if got := strings.Contains(all, `"prompt_tokens"`); got != tt.wantUsage {
				t.Errorf("usage %v, want %v:\n%s", got, tt.wantUsage, all)
			}
			if !strings.Contains(all, tt.contains) {
				t.Errorf("events lack %q:\n%s", tt.contains, all)
			}
			if tt.name == "Cut" && strings.Contains(all, "more") {
				t.Errorf("cut after 1 part sent more:\n%s", all)
			}
		})
	}
}

func TestErrorPlan(t *testing.T) {
	s := start(t, demo.Options{})
	resp := post(t, waitCtx(t), s, "kind=error&status=429&retry_after=3", streamBody)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "3" || !strings.Contains(string(b), `"error"`) {
		t.Errorf("got %d Retry-After=%q %s", resp.StatusCode, resp.Header.Get("Retry-After"), b)
	}
}

func TestStallObservesDisconnect(t *testing.T) {
	s := start(t, demo.Options{Plan: demo.Plan{Kind: demo.KindStall}})
	ctx, cancel := context.WithCancel(context.Background())
	resp := post(t, ctx, s, "", streamBody)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	cancel()
	resp.Body.Close()
	if err := s.WaitDisconnects(waitCtx(t), 1); err != nil {
		t.Fatal(err)
	}
	st := s.Stats()
	if !st.Requests[0].Disconnected || st.Requests[0].Plan.Kind != demo.KindStall {
		t.Errorf("request record %+v", st.Requests[0])
	}
	if err := s.Wait(waitCtx(t), func(st demo.Stats) bool { return st.InFlight == 0 }); err != nil {
		t.Fatal(err)
	}
}

func TestNonStreaming(t *testing.T) {
	s := start(t, demo.Options{Plan: demo.Plan{Text: "你好 AI"}})
	resp := post(t, waitCtx(t), s, "", `{"model":"demo-chat","messages":[{"role":"user","content":"问题"}]}`)
	defer resp.Body.Close()
	var c struct {
		Object  string `json:"object"`
		Choices []struct {
			Message struct{ Content string } `json:"message"`
		} `json:"choices"`
		Usage struct {
			Total int64 `json:"total_tokens"`
		} `json:"usage"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil {
		t.Fatal(err)
	}
	if c.Object != "chat.completion" || c.Choices[0].Message.Content != "你好 AI" || c.Usage.Total != 15 {
		t.Errorf("got %+v", c)
	}
}

func TestUnknownModel404(t *testing.T) {
	s := start(t, demo.Options{})
	resp := post(t, waitCtx(t), s, "", `{"model":"gpt-x","messages":[]}`)
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("status %d", resp.StatusCode)
	}
}

func TestParsePlanRoundTrip(t *testing.T) {
	p := demo.Plan{Kind: demo.KindCut, Text: "你好 AI", CutAfter: 2, Chunks: 3, ChunkDelay: time.Millisecond,
		LatencyMin: 2 * time.Second, LatencyMax: 5 * time.Second, Status: 502, RetryAfter: "1"}
	got, err := demo.ParsePlan(p.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if got.Kind != p.Kind || got.Text != p.Text || got.CutAfter != 2 || got.Chunks != 3 || got.ChunkDelay != p.ChunkDelay ||
		got.LatencyMin != p.LatencyMin || got.LatencyMax != p.LatencyMax || got.Status != 502 || got.RetryAfter != "1" {
		t.Errorf("round trip %+v → %+v", p, got)
	}
	if _, err := demo.ParsePlan("kind=explode"); err == nil {
		t.Error("unknown kind accepted")
	}
}

func TestDirectiveChoosesPlan(t *testing.T) {
	s := start(t, demo.Options{})
	resp := post(t, waitCtx(t), s, "", `{"model":"demo-chat","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"/demo kind=no-usage&text=ok"}]}`)
	defer resp.Body.Close()
	ev, err := events(t, resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(ev, "\n")
	if strings.Contains(all, "prompt_tokens") || !strings.Contains(all, `"content":"ok"`) {
		t.Errorf("directive not followed:\n%s", all)
	}
	if got := s.Stats().Requests[0].Plan.Kind; got != demo.KindNoUsage {
		t.Errorf("recorded plan %q", got)
	}
}

func TestKeepsOnlyNewestRecords(t *testing.T) {
	s := start(t, demo.Options{KeepRequests: 2, Plan: demo.Plan{Text: "ok"}})
	for range 3 {
		resp := post(t, waitCtx(t), s, "", `{"model":"demo-chat","messages":[{"role":"user","content":"hi"}]}`)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	st := s.Stats()
	if st.Received != 3 || len(st.Requests) != 2 || st.Requests[0].Seq != 2 || st.Requests[1].Seq != 3 {
		t.Errorf("received %d, records %+v", st.Received, st.Requests)
	}
}

// times=N scripts "N errors, then success" for a caller that retries with
// the same plan; another plan string has its own count.
func TestErrorTimesThenNormal(t *testing.T) {
	s := start(t, demo.Options{})
	const plan = "kind=error&status=429&retry_after=0&times=2"
	for i, want := range []int{429, 429, 200, 200} {
		resp := post(t, waitCtx(t), s, plan, streamBody)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("request %d: status %d, want %d", i+1, resp.StatusCode, want)
		}
	}
	resp := post(t, waitCtx(t), s, plan+"&text=other", streamBody)
	resp.Body.Close()
	if resp.StatusCode != 429 {
		t.Fatalf("a different plan string: status %d, want its own first 429", resp.StatusCode)
	}
}
