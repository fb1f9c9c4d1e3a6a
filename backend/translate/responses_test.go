package translate_test

import (
	"bufio"
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

// chatEvent is one event of a test stream (the gateway frames real streams
// with the shared SSE reader; this is only for fixtures).
type chatEvent struct {
	name string
	data string
}

func readEvents(t *testing.T, b []byte) []chatEvent {
	t.Helper()
	var out []chatEvent
	var cur chatEvent
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.data != "" {
				out = append(out, cur)
			}
			cur = chatEvent{}
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data = strings.TrimPrefix(line, "data: ")
		}
	}
	if cur.data != "" {
		out = append(out, cur)
	}
	return out
}

func indentValue(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func cases(t *testing.T, dir, ext string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", dir, "*"+ext))
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata/%s/*%s: %v", dir, ext, err)
	}
	var out []string
	for _, f := range files {
		if !strings.Contains(f, ".golden.") {
			out = append(out, strings.TrimSuffix(f, ext))
		}
	}
	return out
}

// Request direction: a Responses request and the chat-completions body it
// becomes, with the notes of what was left out.
func TestGoldenToChat(t *testing.T) {
	for _, base := range cases(t, "responses/tochat", ".json") {
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
			golden.Check(t, base+".golden.json", indentValue(t, struct {
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
	for _, base := range cases(t, "responses/fromchat", ".sse") {
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
			for _, ev := range readEvents(t, in) {
				if ev.data == "[DONE]" {
					done = true
					break
				}
				evs, err := tr.Chunk([]byte(ev.data))
				if err != nil {
					t.Fatal(err)
				}
				chatText += chatDeltaText(t, ev.data)
				write(evs...)
			}
			if done {
				write(tr.Done()...)
			} else {
				write(tr.Cut("the upstream closed the stream before it finished"))
			}
			golden.Check(t, base+".golden.sse", out.Bytes())

			var r responses.Reader
			for _, ev := range readEvents(t, out.Bytes()) {
				if err := r.Observe(ev.name, []byte(ev.data)); err != nil {
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
	for _, base := range cases(t, "responses/fromchat", ".json") {
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
			golden.Check(t, base+".golden.json", indentValue(t, v))
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
		evs := readEvents(&testing.T{}, b)
		for i := 0; i+1 < len(evs); i++ {
			f.Add([]byte(evs[i].data), []byte(evs[i+1].data))
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
