package anthropic_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/anthropic"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// golden compares got with the file, or rewrites it under -update.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test -update rewrites it)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func indent(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		t.Fatalf("indent %s: %v", b, err)
	}
	out.WriteByte('\n')
	return out.Bytes()
}

// sseEvent is one framed event of a test stream; Incomplete when the
// stream ended before its blank line (a cut).
type sseEvent struct {
	Name, Data string
	Incomplete bool
}

func splitSSE(s string) []sseEvent {
	var out []sseEvent
	frames := strings.Split(s, "\n\n")
	for i, f := range frames {
		if strings.TrimSpace(f) == "" {
			continue
		}
		var ev sseEvent
		for _, line := range strings.Split(f, "\n") {
			if v, ok := strings.CutPrefix(line, "event: "); ok {
				ev.Name = v
			} else if v, ok := strings.CutPrefix(line, "data: "); ok {
				ev.Data = v
			}
		}
		ev.Incomplete = i == len(frames)-1
		out = append(out, ev)
	}
	return out
}

var translateOptions = map[string]anthropic.ChatOptions{
	"thinking_effort": {Reasoning: anthropic.ReasoningEffort},
	"thinking_object": {Reasoning: anthropic.ReasoningObject},
}

// TestGoldenRequests: Messages request → chat-completions body.
func TestGoldenRequests(t *testing.T) {
	files, _ := filepath.Glob("testdata/requests/*.json")
	var n int
	for _, f := range files {
		if strings.HasSuffix(f, ".chat.json") {
			continue
		}
		n++
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			body, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			req, err := anthropic.ParseRequest(body)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			chat, err := req.ChatBody(translateOptions[name])
			if err != nil {
				t.Fatalf("translate: %v", err)
			}
			golden(t, strings.TrimSuffix(f, ".json")+".chat.json", indent(t, chat))
		})
	}
	if n < 4 {
		t.Fatalf("only %d request cases", n)
	}
}

// TestGoldenAnswers: chat answers (stream and not) → Anthropic events and
// messages. A stream without [DONE] is a cut: the translation's events so
// far, then the one error event the door writes, and no message_stop.
func TestGoldenAnswers(t *testing.T) {
	streams, _ := filepath.Glob("testdata/answers/*.chat.sse")
	if len(streams) < 4 {
		t.Fatalf("only %d stream cases", len(streams))
	}
	for _, f := range streams {
		name := strings.TrimSuffix(filepath.Base(f), ".chat.sse")
		t.Run("stream/"+name, func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			tr := anthropic.NewStreamTranslator("msg_run_1", "demo-chat", name == "thinking")
			out := tr.Start()
			done := false
			for _, ev := range splitSSE(string(raw)) {
				if ev.Incomplete {
					continue
				}
				if ev.Data == "[DONE]" {
					done = true
				}
				b, err := tr.Chunk([]byte(ev.Data))
				if err != nil {
					t.Fatalf("chunk %q: %v", ev.Data, err)
				}
				out = append(out, b...)
			}
			if done {
				out = append(out, tr.End()...)
				out = append(out, anthropic.StopEvent()...)
			} else {
				out = append(out, anthropic.ErrorEvent(anthropic.ErrAPI,
					anthropic.ErrorMessage("upstream_interrupted", "the upstream cut the stream"))...)
			}
			golden(t, strings.TrimSuffix(f, ".chat.sse")+".anthropic.sse", out)
			checkOrder(t, string(out), done)
		})
	}
	bodies, _ := filepath.Glob("testdata/answers/*.chat.json")
	if len(bodies) < 3 {
		t.Fatalf("only %d body cases", len(bodies))
	}
	for _, f := range bodies {
		name := strings.TrimSuffix(filepath.Base(f), ".chat.json")
		t.Run("message/"+name, func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			m, err := anthropic.MessageFromChat(raw, "msg_run_1", "demo-chat", name == "thinking")
			if err != nil {
				t.Fatal(err)
			}
			golden(t, strings.TrimSuffix(f, ".chat.json")+".message.json", indent(t, m))
		})
	}
}

// checkOrder asserts Anthropic's event order on a translated stream.
func checkOrder(t *testing.T, s string, done bool) {
	t.Helper()
	evs := splitSSE(s)
	if evs[0].Name != "message_start" {
		t.Errorf("first event %q, want message_start", evs[0].Name)
	}
	open := map[string]bool{}
	var last string
	for _, ev := range evs {
		var d struct {
			Type  string `json:"type"`
			Index *int   `json:"index"`
		}
		if err := json.Unmarshal([]byte(ev.Data), &d); err != nil || d.Type != ev.Name {
			t.Fatalf("event %q: data %q", ev.Name, ev.Data)
		}
		key := ""
		if d.Index != nil {
			key = string(rune('0' + *d.Index))
		}
		switch ev.Name {
		case "content_block_start":
			open[key] = true
		case "content_block_delta":
			if !open[key] {
				t.Errorf("delta for block %s that is not open", key)
			}
		case "content_block_stop":
			delete(open, key)
		case "message_delta":
			if len(open) > 0 {
				t.Errorf("message_delta with blocks open: %v", open)
			}
		}
		last = ev.Name
	}
	switch {
	case done && last != "message_stop":
		t.Errorf("last event %q, want message_stop", last)
	case !done && last != "error":
		t.Errorf("a cut ends with %q, want error", last)
	case !done && strings.Contains(s, "message_stop"):
		t.Error("a cut stream has a message_stop")
	}
}

// TestGoldenNative: native Messages streams → what the tally reads.
func TestGoldenNative(t *testing.T) {
	files, _ := filepath.Glob("testdata/native/*.sse")
	if len(files) < 4 {
		t.Fatalf("only %d native cases", len(files))
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".sse")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var tl anthropic.Tally
			for _, ev := range splitSSE(string(raw)) {
				if ev.Incomplete {
					continue // a client drops it; so does the gateway
				}
				_, _ = tl.Observe(ev.Name, []byte(ev.Data))
			}
			u, ok := tl.Usage()
			got := map[string]any{"output": tl.Output(), "stopped": tl.Stopped(), "usage_complete": ok,
				"problem": tl.Problem(), "stop_reason": tl.StopReason}
			if ok {
				got["usage"] = u
				got["prompt_tokens"] = u.PromptTokens()
			}
			b, _ := json.Marshal(got)
			golden(t, strings.TrimSuffix(f, ".sse")+".golden.json", indent(t, b))
		})
	}
}
