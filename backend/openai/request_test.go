package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/wire"
)

func TestParseChatRequestAccepts(t *testing.T) {
	for _, tc := range []struct {
		name  string
		body  string
		check func(t *testing.T, r *ChatRequest)
	}{
		{"seed000 hi cap 100", `{"model":"demo","messages":[{"role":"user","content":"hi"}],"max_tokens":100}`,
			func(t *testing.T, r *ChatRequest) {
				if r.Model != "demo" || len(r.Messages) != 1 || r.Messages[0].Text != "hi" || r.Messages[0].Role != "user" {
					t.Errorf("got %+v", r)
				}
				if c, ok := r.OutputCap(); !ok || c != 100 {
					t.Errorf("OutputCap = %d, %v", c, ok)
				}
				if r.Stream || r.IncludeUsage || r.N != 1 {
					t.Errorf("stream %v include %v n %d", r.Stream, r.IncludeUsage, r.N)
				}
			}},
		{"content parts text and image", `{"model":"m","messages":[{"role":"user","content":[
			{"type":"text","text":"问"},{"type":"image_url","image_url":{"url":"https://example.invalid/a.png"}},
			{"type":"text","text":"题"},{"type":"input_audio","input_audio":{"data":"AAAA","format":"wav"}}]}]}`,
			func(t *testing.T, r *ChatRequest) {
				m := r.Messages[0]
				if m.Text != "问题" || m.Images != 1 || m.OtherParts != 1 {
					t.Errorf("got %+v", m)
				}
			}},
		{"both caps: the larger (max_completion_tokens)", `{"model":"m","messages":[{"role":"user","content":"x"}],"max_tokens":5,"max_completion_tokens":7}`,
			func(t *testing.T, r *ChatRequest) {
				if c, _ := r.OutputCap(); c != 7 {
					t.Errorf("cap %d", c)
				}
			}},
		{"both caps: the larger (max_tokens, which many providers obey)", `{"model":"m","messages":[{"role":"user","content":"x"}],"max_tokens":9,"max_completion_tokens":7}`,
			func(t *testing.T, r *ChatRequest) {
				if c, _ := r.OutputCap(); c != 9 {
					t.Errorf("cap %d", c)
				}
			}},
		{"only max_completion_tokens", `{"model":"m","messages":[{"role":"user","content":"x"}],"max_completion_tokens":3}`,
			func(t *testing.T, r *ChatRequest) {
				if c, ok := r.OutputCap(); c != 3 || !ok {
					t.Errorf("cap %d", c)
				}
			}},
		{"no cap", `{"model":"m","messages":[{"role":"user","content":"x"}]}`,
			func(t *testing.T, r *ChatRequest) {
				if _, ok := r.OutputCap(); ok {
					t.Error("cap reported")
				}
			}},
		{"null cap is no cap", `{"model":"m","messages":[{"role":"user","content":"x"}],"max_tokens":null}`,
			func(t *testing.T, r *ChatRequest) {
				if _, ok := r.OutputCap(); ok {
					t.Error("cap reported")
				}
			}},
		{"stream, client asked usage", `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"x"}]}`,
			func(t *testing.T, r *ChatRequest) {
				if !r.Stream || !r.IncludeUsage {
					t.Errorf("stream %v include %v", r.Stream, r.IncludeUsage)
				}
			}},
		{"stream, client did not ask usage", `{"model":"m","stream":true,"messages":[{"role":"user","content":"x"}]}`,
			func(t *testing.T, r *ChatRequest) {
				if !r.Stream || r.IncludeUsage {
					t.Errorf("stream %v include %v", r.Stream, r.IncludeUsage)
				}
			}},
		{"assistant tool calls, null content, n=2, tools", `{"model":"m","n":2,"tools":[{"type":"function","function":{"name":"f","parameters":{}}}],
			"messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},
			{"role":"tool","tool_call_id":"1","content":"ok","name":"f"}]}`,
			func(t *testing.T, r *ChatRequest) {
				if r.N != 2 || r.Messages[0].Calls != `f{"a":1}` || r.Messages[0].Text != "" || r.Messages[1].Name != "f" || len(r.ToolsJSON) == 0 {
					t.Errorf("got %+v", r)
				}
			}},
		{"unknown fields are kept, not refused", `{"model":"m","messages":[{"role":"user","content":"x"}],"temperature":0.2,"metadata":{"usage":"x"}}`,
			func(t *testing.T, r *ChatRequest) {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ParseChatRequest([]byte(tc.body))
			if err != nil {
				t.Fatalf("ParseChatRequest: %v", err)
			}
			if !bytes.Equal(r.Raw(), []byte(tc.body)) {
				t.Error("Raw() is not the body")
			}
			tc.check(t, r)
		})
	}
}

func TestParseChatRequestRefuses(t *testing.T) {
	const msgs = `"messages":[{"role":"user","content":"hi"}]`
	for _, tc := range []struct {
		name, body, wantInMessage string
	}{
		{"seed000 client usage field", `{"model":"m",` + msgs + `,"usage":{"prompt_tokens":0}}`, `"usage" is not allowed`},
		{"seed000 client tenant field", `{"model":"m",` + msgs + `,"tenant":"other"}`, `"tenant" is not allowed`},
		{"tenant_id", `{"model":"m",` + msgs + `,"tenant_id":"other"}`, `"tenant_id" is not allowed`},
		{"usage in other case", `{"model":"m",` + msgs + `,"Usage":null}`, `"Usage" is not allowed`},
		{"api_base (T29)", `{"model":"m",` + msgs + `,"api_base":"http://evil"}`, "not allowed"},
		{"malformed JSON", `{"model":"m",`, "not a JSON object"},
		{"max_tokens 0", `{"model":"m",` + msgs + `,"max_tokens":0}`, "max_tokens must be at least 1"},
		{"max_completion_tokens 0", `{"model":"m",` + msgs + `,"max_completion_tokens":0}`, "max_completion_tokens must be at least 1"},
		{"invalid UTF-8 in a string", "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"h\xffi\"}]}", "not valid UTF-8"},
		{"not an object", `["model"]`, "not a JSON object"},
		{"trailing data", `{"model":"m",` + msgs + `} {}`, "data after the object"},
		{"empty body", ``, "not a JSON object"},
		{"missing model", `{` + msgs + `}`, "model is required"},
		{"empty model", `{"model":"",` + msgs + `}`, "model must be a non-empty string"},
		{"model not a string", `{"model":7,` + msgs + `}`, "model must be"},
		{"missing messages", `{"model":"m"}`, "messages is required"},
		{"null messages", `{"model":"m","messages":null}`, "messages must be an array"},
		{"empty messages", `{"model":"m","messages":[]}`, "messages must not be empty"},
		{"message without role", `{"model":"m","messages":[{"content":"x"}]}`, "messages[0]: role is required"},
		{"content a number", `{"model":"m","messages":[{"role":"user","content":5}]}`, "content must be"},
		{"text part without text", `{"model":"m","messages":[{"role":"user","content":[{"type":"text"}]}]}`, "without text"},
		{"part without type", `{"model":"m","messages":[{"role":"user","content":[{"text":"x"}]}]}`, "has no type"},
		{"negative max_tokens", `{"model":"m",` + msgs + `,"max_tokens":-1}`, "max_tokens must be a non-negative integer"},
		{"fractional max_tokens", `{"model":"m",` + msgs + `,"max_tokens":10.5}`, "non-negative integer"},
		{"exponent max_completion_tokens", `{"model":"m",` + msgs + `,"max_completion_tokens":1e3}`, "non-negative integer"},
		{"string max_tokens", `{"model":"m",` + msgs + `,"max_tokens":"100"}`, "non-negative integer"},
		{"overflowing max_tokens", `{"model":"m",` + msgs + `,"max_tokens":99999999999999999999}`, "too large"},
		{"n zero", `{"model":"m",` + msgs + `,"n":0}`, "n must be at least 1"},
		{"stream not bool", `{"model":"m",` + msgs + `,"stream":"yes"}`, "stream must be true or false"},
		{"include_usage not bool", `{"model":"m",` + msgs + `,"stream":true,"stream_options":{"include_usage":1}}`, "include_usage must be"},
		{"stream_options not object", `{"model":"m",` + msgs + `,"stream_options":true}`, "stream_options must be an object"},
		// The gateway and a case-insensitive upstream must read the same cap.
		{"duplicate max_tokens", `{"model":"m",` + msgs + `,"max_tokens":1,"max_tokens":100000}`, "appears twice"},
		{"case twin of max_tokens", `{"model":"m",` + msgs + `,"max_tokens":1,"MAX_TOKENS":100000}`, "appears twice"},
		{"long s folds to s", `{"model":"m",` + msgs + `,"max_tokenſ":100000}`, `must be spelled "max_tokens"`},
		{"Kelvin sign folds to k", `{"model":"m",` + msgs + `,"max_toKens":100000}`, `must be spelled "max_tokens"`},
		{"usage with a long s", `{"model":"m",` + msgs + `,"uſage":{"prompt_tokens":0}}`, "is not allowed"},
		{"escaped usage", `{"model":"m",` + msgs + `,"\u0075sage":{"prompt_tokens":0}}`, "is not allowed"},
		{"known field in other case", `{"model":"m",` + msgs + `,"Max_Tokens":100000}`, `must be spelled "max_tokens"`},
		{"duplicate content in a message", `{"model":"m","messages":[{"role":"user","content":"a","content":"bbbb"}]}`, "appears twice"},
		{"tools not an array", `{"model":"m",` + msgs + `,"tools":{}}`, "tools must be an array"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ParseChatRequest([]byte(tc.body))
			if err == nil {
				t.Fatalf("accepted: %+v", r)
			}
			var le *wire.RequestError
			if !errors.As(err, &le) {
				t.Fatalf("error %v is not a *wire.RequestError (the door's invalid_request)", err)
			}
			if !strings.Contains(le.Message, tc.wantInMessage) {
				t.Errorf("message %q does not say %q", le.Message, tc.wantInMessage)
			}
		})
	}
}

// members decodes a JSON object into its members for comparison.
func members(t *testing.T, b []byte) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("upstream body is not JSON: %v\n%s", err, b)
	}
	return m
}

func TestUpstreamBody(t *testing.T) {
	for _, tc := range []struct {
		name, body  string
		unchanged   bool
		wantOptions string // stream_options after the rewrite, compacted
	}{
		{"non-streaming is byte-identical", `{"model":"m", "messages":[{"role":"user","content":"hi"}],"temperature":0.5}`, true, ""},
		{"streaming with include_usage true is byte-identical", `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`, true, ""},
		{"streaming without options gets them", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}],"x_extra":{"a":[1,2]}}`, false, `{"include_usage":true}`},
		{"include_usage false becomes true, other options kept", `{"stream_options":{"include_obfuscation":false,"include_usage":false},"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`, false, `{"include_obfuscation":false,"include_usage":true}`},
		{"null options", `{"model":"m","stream":true,"stream_options":null,"messages":[{"role":"user","content":"hi"}]}`, false, `{"include_usage":true}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ParseChatRequest([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			up, err := r.UpstreamBody()
			if err != nil {
				t.Fatal(err)
			}
			if tc.unchanged {
				if !bytes.Equal(up, []byte(tc.body)) {
					t.Fatalf("body changed:\n%s\n%s", tc.body, up)
				}
				return
			}
			before, after := members(t, []byte(tc.body)), members(t, up)
			var got bytes.Buffer
			if err := json.Compact(&got, after["stream_options"]); err != nil || got.String() != tc.wantOptions {
				t.Errorf("stream_options = %s, want %s", got.String(), tc.wantOptions)
			}
			delete(before, "stream_options")
			delete(after, "stream_options")
			if !reflect.DeepEqual(before, after) {
				t.Errorf("other members changed:\n%s\n%s", tc.body, up)
			}
			// The rewritten body parses, and the client's own wish is kept.
			r2, err := ParseChatRequest(up)
			if err != nil || !r2.IncludeUsage || r.IncludeUsage {
				t.Errorf("reparse: %v include_usage %v (client asked %v)", err, r2 != nil && r2.IncludeUsage, r.IncludeUsage)
			}
		})
	}
}
