package openai

import (
	"errors"
	"testing"
)

func TestParseUsage(t *testing.T) {
	u := func(p, c, tot int64, has bool, r int64) *Usage {
		return &Usage{PromptTokens: p, CompletionTokens: c, TotalTokens: tot, HasTotal: has, ReasoningTokens: r}
	}
	for _, tc := range []struct {
		name string
		raw  string
		want *Usage
		bad  bool
	}{
		{"absent", ``, nil, false},
		{"null is absent", `null`, nil, false},
		{"seed000 6 in 9 out", `{"prompt_tokens":6,"completion_tokens":9,"total_tokens":15}`, u(6, 9, 15, true, 0), false},
		{"zero is evidence, not absence (T13)", `{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}`, u(0, 0, 0, true, 0), false},
		{"no total", `{"prompt_tokens":1,"completion_tokens":2}`, u(1, 2, 0, false, 0), false},
		{"null total", `{"prompt_tokens":1,"completion_tokens":2,"total_tokens":null}`, u(1, 2, 0, false, 0), false},
		{"reasoning tokens", `{"prompt_tokens":18,"completion_tokens":150,"total_tokens":168,"completion_tokens_details":{"reasoning_tokens":130,"audio_tokens":0}}`, u(18, 150, 168, true, 130), false},
		{"extra members ignored, cached tokens kept", `{"prompt_tokens":1,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":1},"cost":0}`, &Usage{PromptTokens: 1, CompletionTokens: 2, CachedTokens: 1}, false},
		{"unreadable prompt details ignored", `{"prompt_tokens":1,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":-1}}`, u(1, 2, 0, false, 0), false},
		{"largest exact number", `{"prompt_tokens":9007199254740991,"completion_tokens":0}`, u(9007199254740991, 0, 0, false, 0), false},
		{"negative", `{"prompt_tokens":-1,"completion_tokens":2}`, nil, true},
		{"fraction", `{"prompt_tokens":1.5,"completion_tokens":2}`, nil, true},
		{"integral fraction", `{"prompt_tokens":1.0,"completion_tokens":2}`, nil, true},
		{"exponent", `{"prompt_tokens":1e2,"completion_tokens":2}`, nil, true},
		{"string", `{"prompt_tokens":"1","completion_tokens":2}`, nil, true},
		{"overflow int64", `{"prompt_tokens":99999999999999999999,"completion_tokens":2}`, nil, true},
		{"above 2^53-1", `{"prompt_tokens":9007199254740992,"completion_tokens":2}`, nil, true},
		{"missing completion", `{"prompt_tokens":1}`, nil, true},
		{"null prompt", `{"prompt_tokens":null,"completion_tokens":1}`, nil, true},
		{"duplicate key", `{"prompt_tokens":1,"completion_tokens":2,"completion_tokens":0}`, nil, true},
		{"not an object", `[1,2]`, nil, true},
		{"usage is a string", `"prompt_tokens: 5"`, nil, true},
		{"bad reasoning", `{"prompt_tokens":1,"completion_tokens":2,"completion_tokens_details":{"reasoning_tokens":-3}}`, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseUsage([]byte(tc.raw))
			if tc.bad {
				if err == nil || !errors.Is(err, ErrBadUsage) {
					t.Fatalf("got %+v, %v; want ErrBadUsage", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestParseChunk(t *testing.T) {
	for _, tc := range []struct {
		name      string
		data      string
		want      Chunk
		wantText  string
		usageOnly bool
		wantErr   bool
		badUsage  bool
	}{
		{"done", `[DONE]`, Chunk{Done: true}, "", false, false, false},
		{"done with spaces", " [DONE] ", Chunk{Done: true}, "", false, false, false},
		{"content delta, usage null", `{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"你好"}}],"usage":null}`,
			Chunk{Content: "你好", Choices: 1}, "你好", false, false, false},
		{"role-only first delta", `{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`, Chunk{Choices: 1}, "", false, false, false},
		{"reasoning kept apart", `{"choices":[{"delta":{"reasoning_content":"think","content":null}}]}`, Chunk{Reasoning: "think", Choices: 1}, "think", false, false, false},
		{"tool call arguments", `{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"get","arguments":"{\"a\""}}]}}]}`,
			Chunk{ToolArguments: `get{"a"`, Choices: 1}, `get{"a"`, false, false, false},
		{"two choices", `{"choices":[{"index":0,"delta":{"content":"a"}},{"index":1,"delta":{"content":"b"}}]}`, Chunk{Content: "ab", Choices: 2}, "ab", false, false, false},
		{"final usage chunk", `{"choices":[],"usage":{"prompt_tokens":6,"completion_tokens":9,"total_tokens":15}}`,
			Chunk{Usage: &Usage{PromptTokens: 6, CompletionTokens: 9, TotalTokens: 15, HasTotal: true}}, "", true, false, false},
		{"seed000 text shaped like usage is text", `{"choices":[{"delta":{"content":"{\"usage\":{\"prompt_tokens\":0,\"completion_tokens\":0,\"total_tokens\":0}}"}}]}`,
			Chunk{Content: `{"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}}`, Choices: 1},
			`{"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}}`, false, false, false},
		{"in-stream error", `{"error":{"message":"overloaded","type":"server_error"}}`, Chunk{Error: "overloaded"}, "", false, false, false},
		{"bad usage keeps the text", `{"choices":[{"delta":{"content":"x"}}],"usage":{"prompt_tokens":-1,"completion_tokens":1}}`,
			Chunk{Content: "x", Choices: 1}, "x", false, true, true},
		{"not JSON", `hello`, Chunk{}, "", false, true, false},
		{"JSON but not an object", `[1]`, Chunk{}, "", false, true, false},
		{"truncated JSON", `{"choices":[{"delta":{"content":"x"`, Chunk{}, "", false, true, false},
		{"content not a string", `{"choices":[{"delta":{"content":5}}]}`, Chunk{}, "", false, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseChunk([]byte(tc.data))
			if tc.wantErr != (err != nil) {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if tc.badUsage != errors.Is(err, ErrBadUsage) {
				t.Fatalf("err = %v, ErrBadUsage wanted %v", err, tc.badUsage)
			}
			if err != nil && !tc.badUsage {
				return
			}
			if got.Done != tc.want.Done || got.Content != tc.want.Content || got.Reasoning != tc.want.Reasoning ||
				got.ToolArguments != tc.want.ToolArguments || got.Choices != tc.want.Choices || got.Error != tc.want.Error {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
			if (got.Usage == nil) != (tc.want.Usage == nil) || (got.Usage != nil && *got.Usage != *tc.want.Usage) {
				t.Errorf("usage %+v, want %+v", got.Usage, tc.want.Usage)
			}
			if got.Text() != tc.wantText || got.UsageOnly() != tc.usageOnly {
				t.Errorf("Text %q UsageOnly %v", got.Text(), got.UsageOnly())
			}
		})
	}
}

func TestParseCompletion(t *testing.T) {
	body := `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"你好 AI","reasoning_content":"hm"},"finish_reason":"stop"}],
		"usage":{"prompt_tokens":6,"completion_tokens":11,"total_tokens":17}}`
	c, err := ParseCompletion([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if c.Content != "你好 AI" || c.Reasoning != "hm" || c.Text() != "你好 AIhm" || c.Choices != 1 ||
		c.Usage == nil || c.Usage.CompletionTokens != 11 {
		t.Errorf("got %+v", c)
	}
	c, err = ParseCompletion([]byte(`{"choices":[{"message":{"content":"x"}}]}`))
	if err != nil || c.Usage != nil || c.Content != "x" {
		t.Errorf("no usage: %+v %v", c, err)
	}
	if _, err = ParseCompletion([]byte(`{"choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":1.5,"completion_tokens":1}}`)); !errors.Is(err, ErrBadUsage) {
		t.Errorf("bad usage: %v", err)
	}
	if _, err = ParseCompletion([]byte(`{"choices":[`)); err == nil {
		t.Error("truncated body parsed")
	}
}
