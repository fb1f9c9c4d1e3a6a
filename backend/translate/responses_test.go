package translate_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/internal/golden"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/responses"
	"github.com/quotagate/quotagate/backend/translate"
)

// Request direction: a Responses request and the chat-completions body it
// becomes, with the notes of what was left out.
func TestGoldenToChat(t *testing.T) {
	for _, base := range golden.Cases(t, "responses/tochat", ".json") {
		t.Run(filepath.Base(base), func(t *testing.T) {
			in, err := os.ReadFile(base + ".json")
			if err != nil {
				t.Fatal(err)
			}
			req, err := responses.ParseRequest(in)
			if err != nil {
				t.Fatalf("ParseRequest: %v", err)
			}
			body, notes, err := translate.ResponsesToChat(req)
			if err != nil {
				t.Fatalf("ResponsesToChat: %v", err)
			}
			if !json.Valid(body) {
				t.Fatalf("chat body is not JSON: %s", body)
			}
			golden.Check(t, base+".golden.json", golden.IndentValue(t, struct {
				Chat  json.RawMessage `json:"chat"`
				Notes []string        `json:"notes"`
			}{body, sortStrings(notes)}))
		})
	}
}

func sortStrings(s []string) []string {
	out := append([]string{}, s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

var meta = responses.Meta{ResponseID: "resp_r1", CreatedAt: 1764547200, Model: "demo-chat"}

// Answer direction: a chat stream and the Responses events it becomes. A
// stream without [DONE] is a cut: it ends with one error event. Each output
// is then read back with the native reader (the round trip must give the
// chat's text and usage).
func TestGoldenFromChat(t *testing.T) {
	for _, base := range golden.Cases(t, "responses/fromchat", ".sse") {
		t.Run(filepath.Base(base), func(t *testing.T) {
			in, err := os.ReadFile(base + ".sse")
			if err != nil {
				t.Fatal(err)
			}
			tr := translate.NewResponsesStream(meta)
			var out bytes.Buffer
			write := func(evs ...responses.Event) {
				for _, e := range evs {
					out.Write(e.SSE())
				}
			}
			write(tr.Start()...)
			done := false
			var chatText string
			for _, ev := range golden.ReadSSE(t, in) {
				if ev.Data == "[DONE]" {
					done = true
					break
				}
				evs, err := tr.Chunk([]byte(ev.Data))
				if err != nil {
					t.Fatal(err)
				}
				chatText += chatDeltaText(t, ev.Data)
				write(evs...)
			}
			if done {
				write(tr.Done()...)
			} else {
				write(tr.Cut("the upstream closed the stream before it finished"))
			}
			golden.Check(t, base+".golden.sse", out.Bytes())

			var r responses.Reader
			for _, ev := range golden.ReadSSE(t, out.Bytes()) {
				if err := r.Observe(ev.Name, []byte(ev.Data)); err != nil {
					t.Fatalf("the translation does not read back: %v", err)
				}
			}
			res := r.Result()
			if res.Output != chatText {
				t.Errorf("read back output %q, chat sent %q", res.Output, chatText)
			}
			if !done && (res.Final != responses.FinalError || res.ErrorCode != "upstream_interrupted" || res.Usage != nil) {
				t.Errorf("a cut reads back as %+v; want one error event upstream_interrupted and no usage", res)
			}
			if done && res.Usage == nil {
				t.Errorf("a finished stream reads back without usage: %+v", res)
			}
		})
	}
}

func chatDeltaText(t *testing.T, data string) string {
	var c struct {
		Choices []struct {
			Delta struct {
				Content   string `json:"content"`
				ToolCalls []struct {
					Function struct{ Arguments string } `json:"function"`
				} `json:"tool_calls"`
			} `json:"delta"`
		} `json:"choices"`
	}
	if err := json.Unmarshal([]byte(data), &c); err != nil {
		t.Fatal(err)
	}
	var s string
	for _, ch := range c.Choices {
		s += ch.Delta.Content
		for _, tc := range ch.Delta.ToolCalls {
			s += tc.Function.Arguments
		}
	}
	return s
}

// A whole chat completion becomes a Response object.
func TestGoldenFromChatCompletion(t *testing.T) {
	for _, base := range golden.Cases(t, "responses/fromchat", ".json") {
		t.Run(filepath.Base(base), func(t *testing.T) {
			in, err := os.ReadFile(base + ".json")
			if err != nil {
				t.Fatal(err)
			}
			out, err := translate.ResponseFromChat(meta, in)
			if err != nil {
				t.Fatal(err)
			}
			var v any
			if err := json.Unmarshal(out, &v); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, base+".golden.json", golden.IndentValue(t, v))
			res, err := responses.ParseResponse(out)
			if err != nil || res.Final != responses.FinalCompleted || res.Usage == nil {
				t.Errorf("ParseResponse of the translation = %+v, %v", res, err)
			}
		})
	}
}

// Translating refuses previous_response_id (only the provider has that
// state); a native relay would pass it through, so parsing accepts it.
func TestChatBodyRefusesPreviousResponseID(t *testing.T) {
	r, err := responses.ParseRequest([]byte(`{"model":"m","previous_response_id":"resp_1","input":"and then?"}`))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = translate.ResponsesToChat(r)
	if ledger.ErrorCode(err) != ledger.CodeInvalidRequest || !strings.Contains(ledger.ErrorMessage(err), "previous_response_id") {
		t.Fatalf("err = %v", err)
	}
}

// FuzzResponsesToChat: the chat body of every request the parser accepts
// (when it has one) is valid JSON.
func FuzzResponsesToChat(f *testing.F) {
	golden.Seed(f, "testdata/responses/tochat/*.json", nil)
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := responses.ParseRequest(body)
		if err != nil {
			return
		}
		chat, _, err := translate.ResponsesToChat(r)
		if err == nil && !json.Valid(chat) {
			t.Fatalf("chat body is not JSON: %s", chat)
		}
	})
}

// FuzzTranslate: any chat chunks translate without panicking into events
// whose data is JSON of their own type, and Done always ends with one final
// event.
func FuzzTranslate(f *testing.F) {
	files, _ := filepath.Glob("testdata/responses/fromchat/*.sse")
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		evs := golden.ReadSSE(&testing.T{}, b)
		for i := 0; i+1 < len(evs); i++ {
			f.Add([]byte(evs[i].Data), []byte(evs[i+1].Data))
		}
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		tr := translate.NewResponsesStream(responses.Meta{ResponseID: "resp_f", Model: "m"})
		all := tr.Start()
		for _, c := range [][]byte{a, b} {
			evs, err := tr.Chunk(c)
			if err == nil {
				all = append(all, evs...)
			}
		}
		done := tr.Done()
		all = append(all, done...)
		if last := done[len(done)-1].Type; last != "response.completed" && last != "response.incomplete" {
			t.Fatalf("Done ends with %s", last)
		}
		for _, e := range all {
			var v struct{ Type string }
			if err := json.Unmarshal(e.Data, &v); err != nil || v.Type != e.Type {
				t.Fatalf("event %s: %s (%v)", e.Type, e.Data, err)
			}
		}
	})
}
