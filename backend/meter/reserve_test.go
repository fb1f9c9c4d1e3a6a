package meter

import (
	"fmt"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/openai"
)

func mustRequest(t testing.TB, body string) Request {
	t.Helper()
	r, err := openai.ParseChatRequest([]byte(body))
	if err != nil {
		t.Fatalf("ParseChatRequest(%s): %v", body, err)
	}
	return chatRequest(r)
}

func userBody(model, text, extra string) string {
	return fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":%q}]%s}`, model, text, extra)
}

func TestReserveSeedFigures(t *testing.T) {
	utf8m := mustMeter(t, NameUTF8Bytes)
	policy := ReservePolicy{DefaultOutputUnits: 1000, ReasoningFloorUnits: 4096, ImageUnits: 85,
		ReasoningModels: []string{"deepseek-v4-flash", "o3*"}}
	eighteen := strings.Repeat("x", 18) // seed 002's 18 input units, as bytes
	for _, tc := range []struct {
		name                   string
		body                   string
		wantInput, wantReserve ledger.Units
	}{
		{"seed000 hi cap 100 reserves 102", userBody("demo", "hi", `,"max_tokens":100`), 2, 102},
		{"seed000 interrupted run cap 20 reserves 22", userBody("demo", "hi", `,"max_tokens":20,"stream":true`), 2, 22},
		{"seed000 cancel run reserves 1002", userBody("demo", "hi", `,"max_completion_tokens":1000`), 2, 1002},
		{"seed000 问题 is 6 input units", userBody("demo", "问题", `,"max_tokens":9`), 6, 15},
		{"seed002 reasoning model 18 + max(16, 4096) = 4,114", userBody("deepseek-v4-flash", eighteen, `,"max_tokens":16`), 18, 4114},
		{"seed002 before the floor: 18 + 16 = 34", userBody("deepseek-chat", eighteen, `,"max_tokens":16`), 18, 34},
		{"reasoning cap above the floor is kept", userBody("deepseek-v4-flash", eighteen, `,"max_tokens":5000`), 18, 5018},
		{"reasoning prefix entry", userBody("o3-mini", "hi", `,"max_tokens":1`), 2, 4098},
		{"no cap uses the default", userBody("demo", "hi", ``), 2, 1002},
		{"smallest cap", userBody("demo", "hi", `,"max_tokens":1`), 2, 3},
		{"n multiplies the output", userBody("demo", "hi", `,"max_tokens":10,"n":3`), 2, 32},
		{"images are units, never fetched", `{"model":"demo","max_tokens":10,"messages":[{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image_url","image_url":{"url":"http://127.0.0.1:1/never.png"}},{"type":"image_url","image_url":{"url":"data:,"}}]}]}`, 2 + 2*85, 2 + 2*85 + 10},
		{"roles and tool calls do not count under utf8", `{"model":"demo","max_tokens":1,"messages":[{"role":"system","content":"ab"},{"role":"assistant","content":null,"tool_calls":[{"function":{"name":"f","arguments":"{}"}}]},{"role":"user","name":"bob","content":"cd"}]}`, 4, 5},
		{"hostile cap saturates instead of wrapping", userBody("demo", "hi", `,"max_tokens":9007199254740991,"n":128`), 2, ledger.MaxUnits},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, res := policy.Reserve(utf8m, mustRequest(t, tc.body))
			if in != tc.wantInput || res != tc.wantReserve {
				t.Errorf("Reserve = (%d, %d), want (%d, %d)", in, res, tc.wantInput, tc.wantReserve)
			}
		})
	}
}

func TestReserveTiktokenCountsOverheadAndTools(t *testing.T) {
	m := mustMeter(t, NameTiktoken)
	p := ReservePolicy{DefaultOutputUnits: 100, ReasoningFloorUnits: 4096, ReasoningModels: []string{"o3"}}
	// OpenAI cookbook: 3 per message + role tokens, + 3 reply priming.
	// "user" is 1 token, "hello world" 2: 3+1+2 + 3 = 9.
	e := p.Estimate(m, mustRequest(t, userBody("gpt-4o", "hello world", `,"max_tokens":10`)))
	if e.InputUnits != 9 || e.TextUnits != 9 || e.ReserveUnits != 19 || e.UncertainUnits != 0 {
		t.Errorf("estimate %+v, want input 9, reserve 19", e)
	}
	// A name costs 1 + its tokens; tools and earlier tool calls are counted
	// and marked uncertain (providers render them their own way).
	body := `{"model":"gpt-4o","messages":[{"role":"user","name":"bob","content":"hello world"},
		{"role":"assistant","tool_calls":[{"function":{"name":"get","arguments":"{\"city\":\"Paris\"}"}}]}],
		"tools":[{"type":"function","function":{"name":"get","parameters":{"type":"object"}}}]}`
	e = p.Estimate(m, mustRequest(t, body))
	if e.ToolUnits == 0 || e.UncertainUnits != e.ToolUnits || e.InputUnits != e.TextUnits+e.ToolUnits {
		t.Errorf("tools not counted: %+v", e)
	}
	wantText := ledger.Units(3+1+2+1+1) + ledger.Units(3+1) + 3 // bob is 1 token, assistant 1
	if e.TextUnits != wantText {
		t.Errorf("text units %d, want %d", e.TextUnits, wantText)
	}
	// Seed 002 on tiktoken: whatever the input, the output side is ≥ 4096.
	_, res := p.Reserve(m, mustRequest(t, userBody("o3", "hello world", `,"max_tokens":16`)))
	if res != 9+4096 {
		t.Errorf("reasoning reserve %d, want %d", res, 9+4096)
	}
}

func TestIsReasoning(t *testing.T) {
	p := ReservePolicy{ReasoningModels: []string{"deepseek-v4-flash", "o3*", "*"}}
	q := ReservePolicy{ReasoningModels: []string{"deepseek-r1*"}}
	for _, tc := range []struct {
		p     ReservePolicy
		model string
		want  bool
	}{
		{q, "deepseek-r1", true}, {q, "deepseek-r1-distill", true}, {q, "deepseek-r", false},
		{q, "deepseek-v4-flash", false}, {p, "anything", true}, {ReservePolicy{}, "o3", false},
	} {
		if got := tc.p.IsReasoning(tc.model); got != tc.want {
			t.Errorf("%v.IsReasoning(%q) = %v", tc.p.ReasoningModels, tc.model, got)
		}
	}
}

// WithDefaults fills the figures left zero and keeps those given; the
// bound of each figure is the config's (TestParseRefuses there).
func TestReservePolicyWithDefaults(t *testing.T) {
	got := ReservePolicy{ImageUnits: 85, ReasoningModels: []string{"o3"}}.WithDefaults()
	want := ReservePolicy{DefaultOutputUnits: DefaultOutputUnits, ReasoningFloorUnits: DefaultReasoningFloorUnits, ImageUnits: 85}
	if got.DefaultOutputUnits != want.DefaultOutputUnits || got.ReasoningFloorUnits != want.ReasoningFloorUnits ||
		got.ImageUnits != want.ImageUnits || len(got.ReasoningModels) != 1 {
		t.Errorf("WithDefaults = %+v", got)
	}
}

// TestReservePlainCountsTextAsItIs: a completions prompt and suffix, or
// embedding inputs, carry none of chat's message framing under either
// meter; token ids count one unit each.
func TestReservePlainCountsTextAsItIs(t *testing.T) {
	tik, utf8m := mustMeter(t, NameTiktoken), mustMeter(t, NameUTF8Bytes)
	policy := ReservePolicy{DefaultOutputUnits: 1000, ReasoningFloorUnits: 4096, ReasoningModels: []string{"o3*"}}
	for _, tc := range []struct {
		name      string
		m         Meter
		req       Request
		wantInput ledger.Units
		wantRes   ledger.Units
	}{
		{"fim bytes", utf8m, Request{Model: "demo", Plain: true, Texts: []string{"def f(", "):\n"}, OutputCap: 16, HasOutputCap: true}, 9, 25},
		{"fim tokens, no overhead", tik, Request{Model: "gpt-4o", Plain: true, Texts: []string{"hello", " world"}, OutputCap: 16, HasOutputCap: true}, 2, 18},
		{"embeddings: texts and token ids, no output", tik, Request{Model: "text-embedding-3-small", Plain: true, Texts: []string{"hello"}, CountedUnits: 7, HasOutputCap: true}, 8, 8},
		{"no output, no reasoning floor", utf8m, Request{Model: "o3-embed", Plain: true, Texts: []string{"ab"}, HasOutputCap: true}, 2, 2},
		{"messages are not read", utf8m, Request{Model: "demo", Plain: true, Messages: []Message{{Role: "user", Text: "xx"}}, HasOutputCap: true}, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, res := policy.Reserve(tc.m, tc.req)
			if in != tc.wantInput || res != tc.wantRes {
				t.Errorf("Reserve = (%d, %d), want (%d, %d)", in, res, tc.wantInput, tc.wantRes)
			}
		})
	}
}

// TestReserveReasoningBudget: a client's own thinking budget raises a
// reasoning model's floor when it is larger, and nothing else's.
func TestReserveReasoningBudget(t *testing.T) {
	m := mustMeter(t, NameUTF8Bytes)
	p := ReservePolicy{DefaultOutputUnits: 100, ReasoningFloorUnits: 4096, ReasoningModels: []string{"gemini-2.5-pro"}}
	for _, tc := range []struct {
		model       string
		budget, cap int64
		want        ledger.Units
	}{
		{"gemini-2.5-pro", 8192, 1000, 8192},
		{"gemini-2.5-pro", 1024, 1000, 4096},
		{"gemini-2.5-pro", 1024, 6000, 6000},
		{"demo-chat", 8192, 1000, 1000},
	} {
		e := p.Estimate(m, Request{Model: tc.model, OutputCap: tc.cap, HasOutputCap: true, ReasoningBudget: tc.budget})
		if e.OutputUnits != tc.want {
			t.Errorf("%s budget %d cap %d: output %d, want %d", tc.model, tc.budget, tc.cap, e.OutputUnits, tc.want)
		}
	}
}
