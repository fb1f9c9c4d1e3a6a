package anthropic_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/anthropic"
	"github.com/quotagate/quotagate/backend/wire"
)

func TestParseRequestErrors(t *testing.T) {
	cases := []struct{ name, body, want string }{
		{"NotJSON", `{`, "not a JSON object"},
		{"NotUTF8", "{\"model\":\"m\xff\"}", "UTF-8"},
		{"NoModel", `{"max_tokens":1,"messages":[{"role":"user","content":"x"}]}`, "model is required"},
		{"NoMessages", `{"model":"m","max_tokens":1}`, "messages is required"},
		{"EmptyMessages", `{"model":"m","max_tokens":1,"messages":[]}`, "must not be empty"},
		{"NoMaxTokens", `{"model":"m","messages":[{"role":"user","content":"x"}]}`, "max_tokens is required"},
		{"ZeroMaxTokens", `{"model":"m","max_tokens":0,"messages":[{"role":"user","content":"x"}]}`, "at least 1"},
		{"FractionMaxTokens", `{"model":"m","max_tokens":1.5,"messages":[{"role":"user","content":"x"}]}`, "integer"},
		{"Usage", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"x"}],"usage":{}}`, "report its own usage"},
		{"Tenant", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"x"}],"tenant":"b"}`, "not allowed"},
		{"CaseTwin", `{"model":"m","Max_tokens":1,"messages":[{"role":"user","content":"x"}]}`, "must be spelled"},
		{"Duplicate", `{"model":"m","model":"n","max_tokens":1,"messages":[{"role":"user","content":"x"}]}`, "appears twice"},
		{"BadRole", `{"model":"m","max_tokens":1,"messages":[{"role":"tool","content":"x"}]}`, "role must be"},
		{"NoContent", `{"model":"m","max_tokens":1,"messages":[{"role":"user"}]}`, "content is required"},
		{"BlockNoType", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"text":"x"}]}]}`, "needs a type"},
		{"TextNoText", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"text"}]}]}`, "needs text"},
		{"ToolUseNoID", `{"model":"m","max_tokens":1,"messages":[{"role":"assistant","content":[{"type":"tool_use","name":"f","input":{}}]}]}`, "id and a name"},
		{"ToolUseInputNotObject", `{"model":"m","max_tokens":1,"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":"x"}]}]}`, "must be an object"},
		{"ToolResultNoID", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"tool_result","content":"x"}]}]}`, "tool_use_id"},
		{"ImageNoSource", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"image"}]}]}`, "source"},
		{"SystemImage", `{"model":"m","max_tokens":1,"system":[{"type":"image","source":{"type":"url","url":"u"}}],"messages":[{"role":"user","content":"x"}]}`, "text block"},
		{"ToolNoSchema", `{"model":"m","max_tokens":1,"tools":[{"name":"f"}],"messages":[{"role":"user","content":"x"}]}`, "input_schema"},
		{"ToolChoiceNoName", `{"model":"m","max_tokens":1,"tool_choice":{"type":"tool"},"messages":[{"role":"user","content":"x"}]}`, "needs a name"},
		{"ThinkingNoBudget", `{"model":"m","max_tokens":1,"thinking":{"type":"enabled"},"messages":[{"role":"user","content":"x"}]}`, "budget_tokens"},
		{"ThinkingBadType", `{"model":"m","max_tokens":1,"thinking":{"type":"on"},"messages":[{"role":"user","content":"x"}]}`, "thinking.type"},
		{"MetadataNotObject", `{"model":"m","max_tokens":1,"metadata":"x","messages":[{"role":"user","content":"x"}]}`, "metadata must be an object"},
		{"TemperatureString", `{"model":"m","max_tokens":1,"temperature":"hot","messages":[{"role":"user","content":"x"}]}`, "temperature must be a number"},
		{"Trailing", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"x"}]} {}`, "after the object"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := anthropic.ParseRequest([]byte(c.body))
			if err == nil {
				t.Fatal("accepted")
			}
			if !errors.As(err, new(*wire.RequestError)) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want invalid_request with %q", err, c.want)
			}
		})
	}
}

// TestParseRequestClaudeCode: the shape Claude Code 2.1 sends — system
// blocks with cache_control, a role-system turn, metadata, thinking, tools
// with defer_loading, context_management — is accepted whole and kept raw.
func TestParseRequestClaudeCode(t *testing.T) {
	body := `{"model":"demo-chat","max_tokens":32000,"stream":true,
	 "system":[{"type":"text","text":"You are Claude Code.","cache_control":{"type":"ephemeral"}}],
	 "messages":[{"role":"system","content":"ctx"},{"role":"user","content":[{"type":"text","text":"say hi"}]}],
	 "tools":[{"name":"Bash","description":"run","input_schema":{"type":"object"},"defer_loading":true}],
	 "metadata":{"user_id":"u"},"thinking":{"type":"adaptive"},"context_management":{"edits":[]},
	 "output_config":{"effort":"medium"}}`
	r, err := anthropic.ParseRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if r.Model != "demo-chat" || r.MaxTokens != 32000 || !r.Stream || len(r.System) != 2 || len(r.Messages) != 1 ||
		len(r.Tools) != 1 || !r.Tools[0].Custom() || !r.Thinking.On() || string(r.Raw()) != body {
		t.Errorf("parsed %+v", r)
	}
	if r.System[1].Text != "ctx" {
		t.Errorf("the role-system turn is not in System: %+v", r.System)
	}
	if !strings.Contains(string(r.Tools[0].Raw), "defer_loading") {
		t.Error("unknown tool keys were not kept")
	}
	cnt, err := anthropic.ParseCountTokens([]byte(`{"model":"demo-chat","messages":[{"role":"user","content":"hi"}]}`))
	if err != nil || cnt.MaxTokens != 0 {
		t.Errorf("count_tokens body: %+v %v", cnt, err)
	}
}

// TestTurns: under utf8-bytes-v1 the input is the bytes of system text,
// text blocks and tool_result text (Turn.Text); tools and thinking are not
// counted (they are Calls and ToolsJSON, for the token rules).
func TestTurns(t *testing.T) {
	body := `{"model":"m","max_tokens":5,
	 "system":"问题","tools":[{"name":"f","input_schema":{"type":"object"},"defer_loading":true}],
	 "messages":[{"role":"system","content":"ab"},
	  {"role":"user","content":"hi"},
	  {"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"s"},{"type":"text","text":"ok"},{"type":"tool_use","id":"t","name":"f","input":{"q": 1}}]},
	  {"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"res"},{"type":"image","source":{"type":"url","url":"u"}}]},{"type":"image","source":{"type":"url","url":"u"}},{"type":"document","source":{}}]}]}`
	r, err := anthropic.ParseRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	got := r.Turns()
	want := []anthropic.Turn{
		{Role: "system", Text: "问题ab"},
		{Role: "user", Text: "hi"},
		{Role: "assistant", Text: "ok", Calls: `hmmf{"q":1}`},
		{Role: "user", Text: "res", Images: 2, OtherParts: 1},
	}
	if len(got) != len(want) {
		t.Fatalf("turns %+v", got)
	}
	bytes := 0
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("turn %d: %+v, want %+v", i, got[i], want[i])
		}
		bytes += len(got[i].Text)
	}
	if bytes != 15 { // 问题 6 + ab 2 + hi 2 + ok 2 + res 3
		t.Errorf("text bytes %d, want 15", bytes)
	}
	if tj := string(r.ToolsJSON()); tj != `[{"name":"f","input_schema":{"type":"object"},"defer_loading":true}]` {
		t.Errorf("tools %s", tj)
	}
}
