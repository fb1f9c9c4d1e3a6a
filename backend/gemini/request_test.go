package gemini_test

import (
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/gemini"
)

func TestParseRequest(t *testing.T) {
	cases := []struct {
		name, body, err string
	}{
		{"text", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`, ""},
		{"no role is the user's", `{"contents":[{"parts":[{"text":"hi"}]}]}`, ""},
		{"body model names the URL's", `{"model":"models/m","contents":[{"parts":[{"text":"hi"}]}]}`, ""},
		{"other body model", `{"model":"x","contents":[{"parts":[{"text":"hi"}]}]}`, "the URL's model"},
		{"contents required", `{"systemInstruction":{"parts":[{"text":"s"}]}}`, "contents is required"},
		{"empty contents", `{"contents":[]}`, "must not be empty"},
		{"bad role", `{"contents":[{"role":"assistant","parts":[{"text":"hi"}]}]}`, `role must be "user" or "model"`},
		{"snake twin", `{"contents":[{"parts":[{"text":"hi"}]}],"system_instruction":{"parts":[{"text":"s"}]}}`, `must be spelled "systemInstruction"`},
		{"case twin", `{"Contents":[{"parts":[{"text":"hi"}]}]}`, `must be spelled "contents"`},
		{"accounting field", `{"contents":[{"parts":[{"text":"hi"}]}],"usage":{}}`, "not allowed"},
		{"cap", `{"contents":[{"parts":[{"text":"hi"}]}],"generationConfig":{"maxOutputTokens":0}}`, "maxOutputTokens must be a positive integer"},
		{"call needs name", `{"contents":[{"role":"model","parts":[{"functionCall":{"args":{}}}]}]}`, "functionCall needs a name"},
		{"args object", `{"contents":[{"role":"model","parts":[{"functionCall":{"name":"f","args":[1]}}]}]}`, "args must be an object"},
		{"budget", `{"contents":[{"parts":[{"text":"hi"}]}],"generationConfig":{"thinkingConfig":{"thinkingBudget":-2}}}`, "thinkingBudget"},
		{"mode", `{"contents":[{"parts":[{"text":"hi"}]}],"toolConfig":{"functionCallingConfig":{"mode":"SOMETIMES"}}}`, "mode must be"},
		{"unknown member kept", `{"contents":[{"parts":[{"text":"hi"}]}],"labels":{"a":"b"}}`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := gemini.ParseRequest("m", false, []byte(c.body))
			switch {
			case c.err == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
				t.Fatalf("error %v, want one saying %q", err, c.err)
			}
		})
	}
}

func TestTurns(t *testing.T) {
	body := `{"systemInstruction":{"parts":[{"text":"Be brief."}]},"contents":[
		{"role":"user","parts":[{"text":"Weather "},{"text":"in Paris?"},{"inlineData":{"mimeType":"image/png","data":"AAAA"}}]},
		{"role":"model","parts":[{"text":"hmm","thought":true},{"functionCall":{"name":"get_weather","args":{"city": "Paris"}}}]},
		{"role":"user","parts":[{"functionResponse":{"name":"get_weather","response":{"temp": 21}}},{"inlineData":{"mimeType":"audio/wav","data":"AAAA"}}]}],
		"tools":[{"functionDeclarations":[{"name":"get_weather","parametersJsonSchema":{"type":"object"}}]}],
		"generationConfig":{"maxOutputTokens":64,"thinkingConfig":{"includeThoughts":true,"thinkingBudget":1024}}}`
	r, err := gemini.ParseRequest("m", true, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := []gemini.Turn{
		{Role: "system", Text: "Be brief."},
		{Role: "user", Text: "Weather in Paris?", Images: 1},
		{Role: "assistant", Calls: `hmmget_weather{"city":"Paris"}`},
		{Role: "user", Text: `{"temp":21}`, OtherParts: 1},
	}
	got := r.Turns()
	if len(got) != len(want) {
		t.Fatalf("turns %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("turn %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if tj := string(r.ToolsJSON()); tj != `[{"functionDeclarations":[{"name":"get_weather","parametersJsonSchema":{"type":"object"}}]}]` {
		t.Errorf("tools %s", tj)
	}
	th := r.Generation.Thinking
	if r.Generation.MaxOutputTokens != 64 || th == nil || !th.On() || th.Budget != 1024 || !th.IncludeThoughts {
		t.Errorf("generation %+v %+v", r.Generation, th)
	}
}

func TestErrorShapes(t *testing.T) {
	if got := string(gemini.ErrorBody(429, gemini.StatusResourceExhausted, gemini.ErrorMessage("rate_limited", "slow down"))); got != `{"error":{"code":429,"message":"slow down (quotagate: rate_limited)","status":"RESOURCE_EXHAUSTED"}}` {
		t.Errorf("body %s", got)
	}
	if got := string(gemini.ErrorEvent(502, gemini.StatusInternal, "cut")); got != "data: {\"error\":{\"code\":502,\"message\":\"cut\",\"status\":\"INTERNAL\"}}\r\n\r\n" {
		t.Errorf("event %q", got)
	}
}
