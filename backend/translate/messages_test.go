package translate_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/anthropic"
	"github.com/quotagate/quotagate/backend/internal/golden"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/translate"
)

var translateOptions = map[string]translate.ChatOptions{
	"thinking_effort": {Reasoning: translate.ReasoningEffort},
	"thinking_object": {Reasoning: translate.ReasoningObject},
}

// TestGoldenRequests: Messages request → chat-completions body.
func TestGoldenRequests(t *testing.T) {
	files, _ := filepath.Glob("testdata/messages/requests/*.json")
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
			chat, err := translate.MessagesToChat(req, translateOptions[name])
			if err != nil {
				t.Fatalf("translate: %v", err)
			}
			golden.Check(t, strings.TrimSuffix(f, ".json")+".chat.json", golden.IndentJSON(t, chat))
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
	streams, _ := filepath.Glob("testdata/messages/answers/*.chat.sse")
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
			tr := translate.NewMessagesStream("msg_run_1", "demo-chat", name == "thinking")
			out := tr.Start()
			done := false
			for _, ev := range golden.SplitSSE(string(raw)) {
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
			golden.Check(t, strings.TrimSuffix(f, ".chat.sse")+".anthropic.sse", out)
			checkOrder(t, string(out), done)
		})
	}
	bodies, _ := filepath.Glob("testdata/messages/answers/*.chat.json")
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
			m, err := translate.MessageFromChat(raw, "msg_run_1", "demo-chat", name == "thinking")
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, strings.TrimSuffix(f, ".chat.json")+".message.json", golden.IndentJSON(t, m))
		})
	}
}

// checkOrder asserts Anthropic's event order on a translated stream.
func checkOrder(t *testing.T, s string, done bool) {
	t.Helper()
	evs := golden.SplitSSE(s)
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

// TestErrorBodies: every quotagate code has an Anthropic type, and the
// message carries the code so a person can act on it.
func TestErrorBodies(t *testing.T) {
	codes := []struct{ code, typ string }{
		{ledger.CodeInvalidRequest, "invalid_request_error"},
		{ledger.CodeInvalidAPIKey, "authentication_error"},
		{ledger.CodeInsufficientBudget, "billing_error"},
		{ledger.CodeForbidden, "permission_error"},
		{ledger.CodeModelNotFound, "not_found_error"},
		{ledger.CodeRunNotFound, "not_found_error"},
		{ledger.CodeRequestTooLarge, "request_too_large"},
		{ledger.CodeConcurrencyLimit, "rate_limit_error"},
		{ledger.CodeRateLimited, "rate_limit_error"},
		{ledger.CodeQuotaGuard, "rate_limit_error"},
		{ledger.CodeUpstreamBusy, "overloaded_error"},
		{ledger.CodeLedgerUnavailable, "overloaded_error"},
		{ledger.CodeUpstreamError, "api_error"},
		{ledger.CodeUpstreamTimeout, "timeout_error"},
		{ledger.CodeUpstreamInterrupt, "api_error"},
		{ledger.CodeRunEnded, "invalid_request_error"},
		{ledger.CodeInternal, "api_error"},
	}
	var all strings.Builder
	for _, c := range codes {
		err := error(ledger.Errorf(c.code, "a sentence about %s", c.code))
		if c.code == ledger.CodeInternal {
			err = errors.New("sqlite: disk I/O error at /secret/path")
		}
		b := translate.MessagesErrorBody(err)
		var e struct {
			Type  string `json:"type"`
			Error struct{ Type, Message string }
		}
		if json.Unmarshal(b, &e) != nil || e.Type != "error" || e.Error.Type != c.typ {
			t.Errorf("%s: body %s, want type %s", c.code, b, c.typ)
		}
		if !strings.Contains(e.Error.Message, "(quotagate: "+c.code+")") {
			t.Errorf("%s: message %q does not name the code", c.code, e.Error.Message)
		}
		if strings.Contains(e.Error.Message, "secret") {
			t.Errorf("%s: internal detail leaked: %q", c.code, e.Error.Message)
		}
		all.Write(b)
		all.WriteByte('\n')
	}
	golden.Check(t, "testdata/messages/errors/bodies.golden.jsonl", []byte(all.String()))
	ev := string(translate.MessagesErrorEvent(ledger.Errorf(ledger.CodeUpstreamInterrupt, "the upstream cut the stream")))
	if !strings.HasPrefix(ev, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\"") || !strings.HasSuffix(ev, "\n\n") {
		t.Errorf("error event %q", ev)
	}
}

// TestTranslatedBytesMatch: the chat body a translation sends carries
// exactly the bytes counted (no separators added), so a utf8-bytes-v1
// upstream's usage can agree with the gateway.
func TestTranslatedBytesMatch(t *testing.T) {
	body := `{"model":"m","max_tokens":5,"system":[{"type":"text","text":"a"},{"type":"text","text":"bc"}],
	 "messages":[{"role":"system","content":"d"},{"role":"user","content":[{"type":"text","text":"ef"},{"type":"text","text":"g"}]},
	 {"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":{}}]},
	 {"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"hij"}]}]}`
	r, err := anthropic.ParseRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	chat, err := translate.MessagesToChat(r, translate.ChatOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(chat, &c); err != nil {
		t.Fatal(err)
	}
	var total int
	for _, m := range c.Messages {
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			total += len(s)
			continue
		}
		var parts []struct{ Text string }
		_ = json.Unmarshal(m.Content, &parts)
		for _, p := range parts {
			total += len(p.Text)
		}
	}
	counted := 0
	for _, turn := range r.Turns() {
		counted += len(turn.Text)
	}
	if counted != total || total != 10 {
		t.Errorf("chat body carries %d bytes of text, the turns %d (want 10)", total, counted)
	}
}

// FuzzMessagesToChat: every body the Messages parser accepts translates
// into a chat body that is valid JSON.
func FuzzMessagesToChat(f *testing.F) {
	golden.Seed(f, "testdata/messages/requests/*.json", func(p string) bool { return !strings.HasSuffix(p, ".chat.json") })
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := anthropic.ParseRequest(body)
		if err != nil {
			return
		}
		chat, err := translate.MessagesToChat(r, translate.ChatOptions{Reasoning: translate.ReasoningEffort})
		if err != nil {
			t.Fatalf("translate an accepted body: %v", err)
		}
		if !json.Valid(chat) {
			t.Fatalf("translation is not JSON: %s", chat)
		}
	})
}

// FuzzChatStream: translating any chat stream never panics and never
// writes a message_stop of its own.
func FuzzChatStream(f *testing.F) {
	golden.Seed(f, "testdata/messages/answers/*.chat.sse", nil)
	f.Fuzz(func(t *testing.T, stream []byte) {
		tr := translate.NewMessagesStream("msg", "m", true)
		out := string(tr.Start())
		for _, ev := range golden.SplitSSE(string(stream)) {
			b, _ := tr.Chunk([]byte(ev.Data))
			out += string(b)
		}
		out += string(tr.End())
		if strings.Contains(out, "event: message_stop") {
			t.Fatal("the translator wrote message_stop itself")
		}
	})
}
