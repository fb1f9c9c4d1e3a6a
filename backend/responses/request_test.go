package responses_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/responses"
	"github.com/quotagate/quotagate/backend/wire"
)

func TestParseRequestFields(t *testing.T) {
	body, err := os.ReadFile("../translate/testdata/responses/tochat/text.json")
	if err != nil {
		t.Fatal(err)
	}
	r, err := responses.ParseRequest(body)
	if err != nil {
		t.Fatal(err)
	}
	if r.Model != "demo-chat" || !r.Stream || r.Instructions != "Answer briefly." || *r.MaxOutputTokens != 64 ||
		r.Store == nil || *r.Store || r.PromptCacheKey != "k1" || r.ReasoningEffort != "low" ||
		len(r.Include) != 1 || string(r.Metadata) != `{"ticket":"42"}` || string(r.Raw()) != string(body) {
		t.Fatalf("parsed %+v", r)
	}
	roles := []string{}
	for _, it := range r.Input {
		roles = append(roles, it.Type+":"+it.Role)
	}
	if got := strings.Join(roles, " "); got != "message:developer message:system message:user reasoning: message:assistant message:user" {
		t.Errorf("items %s", got)
	}
	if r.Input[2].Text() != "问题: what is this?" || r.Input[2].Parts[1].ImageURL == "" || r.Input[3].Reasoning != "thinking" {
		t.Errorf("parts %+v / reasoning %q", r.Input[2].Parts, r.Input[3].Reasoning)
	}
}

func TestParseRequestRefuses(t *testing.T) {
	tests := []struct{ name, body, want string }{
		{"NotJSON", `{"model":`, "not a JSON object"},
		{"NotUTF8", "{\"model\":\"\xff\",\"input\":\"x\"}", "UTF-8"},
		{"NoModel", `{"input":"hi"}`, "model is required"},
		{"NoInput", `{"model":"m"}`, "input is required"},
		{"Usage", `{"model":"m","input":"hi","usage":{"input_tokens":0}}`, `"usage" is not allowed`},
		{"Tenant", `{"model":"m","input":"hi","tenant":"b"}`, "tenant comes from the API key"},
		{"BaseURL", `{"model":"m","input":"hi","base_url":"http://x"}`, "configured by the operator"},
		{"Twice", `{"model":"m","input":"hi","Input":"x"}`, "appears twice"},
		{"Case", `{"model":"m","Max_Output_Tokens":5,"input":"hi"}`, `must be spelled "max_output_tokens"`},
		{"ZeroCap", `{"model":"m","input":"hi","max_output_tokens":0}`, "at least 1"},
		{"FloatCap", `{"model":"m","input":"hi","max_output_tokens":1.5}`, "at least 1"},
		{"BadRole", `{"model":"m","input":[{"role":"robot","content":"x"}]}`, `input[0]: role "robot"`},
		{"NoContent", `{"model":"m","input":[{"type":"message","role":"user"}]}`, "needs content"},
		{"PartNoType", `{"model":"m","input":[{"role":"user","content":[{"text":"x"}]}]}`, "has no type"},
		{"CallNoID", `{"model":"m","input":[{"type":"function_call","name":"f","arguments":"{}"}]}`, "call_id and name"},
		{"OutputMissing", `{"model":"m","input":[{"type":"function_call_output","call_id":"c"}]}`, "needs output"},
		{"ToolNoType", `{"model":"m","input":"x","tools":[{"name":"f"}]}`, "tools[0]"},
		{"BadToolChoice", `{"model":"m","input":"x","tool_choice":"sometimes"}`, "tool_choice"},
		{"BadMetadata", `{"model":"m","input":"x","metadata":{"a":1}}`, "metadata"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := responses.ParseRequest([]byte(tt.body))
			var le *wire.RequestError
			if !errors.As(err, &le) || !strings.Contains(le.Message, tt.want) {
				t.Fatalf("err = %v; want invalid_request mentioning %q", err, tt.want)
			}
		})
	}
}

// The segments a meter counts: instructions, message text parts and every
// *_call_output as text; earlier calls as Calls (tiktoken only); reasoning
// not at all; media as counts.
func TestSegments(t *testing.T) {
	r, err := responses.ParseRequest([]byte(`{"model":"m","instructions":"ab","tools":[{"type":"function","name":"f"}],"input":[
		{"role":"user","content":[{"type":"input_text","text":"问题"},{"type":"input_image","image_url":"https://x/i.png"},{"type":"input_file","file_id":"f1"}]},
		{"type":"reasoning","summary":[{"type":"summary_text","text":"zzzz"}]},
		{"type":"function_call","call_id":"c","name":"f","arguments":"{\"q\":1}"},
		{"type":"function_call_output","call_id":"c","output":"efg"},
		{"type":"custom_tool_call","call_id":"d","name":"apply_patch","input":"*** patch"},
		{"type":"custom_tool_call_output","call_id":"d","output":[{"type":"input_text","text":"h"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []responses.Segment{
		{Role: "system", Text: "ab"},
		{Role: "user", Text: "问题", Images: 1, OtherParts: 1},
		{Role: "assistant", Calls: `f{"q":1}`},
		{Role: "tool", Text: "efg"},
		{Role: "assistant", Calls: "apply_patch*** patch"},
		{Role: "tool", Text: "h"},
	}
	got := r.Segments()
	if len(got) != len(want) {
		t.Fatalf("segments %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("segment %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestUsage(t *testing.T) {
	tests := []struct {
		name, raw string
		units     int64
		bad       string
	}{
		{"OK", `{"input_tokens":37,"input_tokens_details":{"cached_tokens":32},"output_tokens":11,"output_tokens_details":{"reasoning_tokens":6},"total_tokens":48}`, 48, ""},
		{"NoTotal", `{"input_tokens":1,"output_tokens":2}`, 3, ""},
		{"Missing", `{"input_tokens":1}`, 0, "no output_tokens"},
		{"Negative", `{"input_tokens":-1,"output_tokens":2}`, 0, "non-negative"},
		{"Fraction", `{"input_tokens":1.5,"output_tokens":2}`, 0, "non-negative"},
		{"BadTotal", `{"input_tokens":1,"output_tokens":2,"total_tokens":4}`, 0, "is not input_tokens"},
		{"ReasoningOverOutput", `{"input_tokens":1,"output_tokens":2,"output_tokens_details":{"reasoning_tokens":3}}`, 0, "exceed"},
		{"NotObject", `[1]`, 0, "not an object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := responses.ParseUsage([]byte(tt.raw))
			if tt.bad != "" {
				if err == nil || !strings.Contains(err.Error(), tt.bad) {
					t.Fatalf("err = %v; want %q", err, tt.bad)
				}
				return
			}
			if err != nil || u.Units() != tt.units {
				t.Fatalf("usage = %+v, %v; want %d units", u, err, tt.units)
			}
		})
	}
}
