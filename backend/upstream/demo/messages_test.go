package demo_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/anthropic"
	"github.com/quotagate/quotagate/backend/upstream/demo"
)

func postMessages(t *testing.T, s *demo.Server, plan, body string, hdr map[string]string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(waitCtx(t), "POST", s.URL()+"/messages?beta=true", strings.NewReader(body))
	if plan != "" {
		req.Header.Set(demo.PlanHeader, plan)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// readTally feeds a Messages stream to the gateway's own reader, dropping a
// last event cut before its blank line as the gateway does.
func readTally(t *testing.T, r io.Reader) (*anthropic.Tally, []string) {
	t.Helper()
	var tl anthropic.Tally
	var names []string
	var name, data string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = strings.TrimPrefix(line, "data: ")
		case line == "" && data != "":
			if _, err := tl.Observe(name, []byte(data)); err != nil {
				t.Logf("event %s: %v", name, err)
			}
			names = append(names, name)
			name, data = "", ""
		}
	}
	return &tl, names
}

const msgBody = `{"model":"demo-chat","max_tokens":100,"stream":true,
 "system":[{"type":"text","text":"问题","cache_control":{"type":"ephemeral"}}],
 "messages":[{"role":"user","content":"hi"}]}`

// TestMessagesStreamUsageWithCache: the demo's native stream is in
// Anthropic's order, and its usage — split into input, cache creation and
// cache read — adds up to the UTF-8 bytes utf8-bytes-v1 counts.
func TestMessagesStreamUsageWithCache(t *testing.T) {
	s := start(t, demo.Options{Plan: demo.Plan{Text: "你好 AI"}, APIKey: "up-key"})
	resp := postMessages(t, s, "", msgBody, map[string]string{"x-api-key": "up-key"})
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	tl, names := readTally(t, resp.Body)
	want := "message_start content_block_start ping content_block_delta content_block_delta content_block_stop message_delta message_stop"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("events %s\nwant   %s", got, want)
	}
	u, ok := tl.Usage()
	if !ok || !tl.Stopped() || tl.Problem() != "" {
		t.Fatalf("usage %+v ok=%v stopped=%v problem=%q", u, ok, tl.Stopped(), tl.Problem())
	}
	// "问题" + "hi" = 8 bytes: 2 written to the cache, 4 read from it, 2 input.
	if u.PromptTokens() != 8 || u.CacheCreationInputTokens != 2 || u.CacheReadInputTokens != 4 || u.InputTokens != 2 || u.OutputTokens != 9 {
		t.Errorf("usage %+v, want 2+2+4 in, 9 out", u)
	}
	if tl.Output() != "你好 AI" {
		t.Errorf("output %q", tl.Output())
	}
}

// TestMessagesToolUse: a scripted call is a tool_use block; once the
// conversation ends with its tool_result, the demo acknowledges it in text.
func TestMessagesToolUse(t *testing.T) {
	s := start(t, demo.Options{})
	plan := "call=get_weather&args=" + url.QueryEscape(`{"city":"Paris"}`)
	first := `{"model":"demo-chat","max_tokens":9,"stream":true,"messages":[{"role":"user","content":"w?"}]}`
	tl, _ := readTally(t, postMessages(t, s, plan, first, nil).Body)
	u, ok := tl.Usage()
	if !ok || tl.StopReason != "tool_use" || tl.Output() != `get_weather{"city":"Paris"}` {
		t.Fatalf("usage %+v ok=%v stop=%q output=%q problem=%q", u, ok, tl.StopReason, tl.Output(), tl.Problem())
	}
	if u.OutputTokens != int64(len(tl.Output())) || u.PromptTokens() != 2 {
		t.Errorf("usage %+v for output %q", u, tl.Output())
	}
	// Not streaming: a whole message with the tool_use block.
	resp := postMessages(t, s, plan, strings.Replace(first, `"stream":true,`, "", 1), nil)
	b, _ := io.ReadAll(resp.Body)
	a, err := anthropic.ParseMessage(b)
	if err != nil || a.StopReason != "tool_use" || a.Text != tl.Output() || a.Usage == nil || a.Usage.OutputTokens != u.OutputTokens {
		t.Errorf("message %s: %+v %v", b, a, err)
	}
	// The round trip: the tool's result comes back, the demo says so.
	second := `{"model":"demo-chat","max_tokens":9,"stream":true,"messages":[{"role":"user","content":"w?"},
	 {"role":"assistant","content":[{"type":"tool_use","id":"toolu_demo_1","name":"get_weather","input":{"city":"Paris"}}]},
	 {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_demo_1","content":[{"type":"text","text":"18°C"}]}]}]}`
	tl, _ = readTally(t, postMessages(t, s, plan, second, nil).Body)
	if u, ok := tl.Usage(); !ok || tl.StopReason != "end_turn" || tl.Output() != demo.AckPrefix+"18°C" || u.PromptTokens() != 2+5 { // "w?" + "18°C"
		t.Errorf("second turn: %+v ok=%v stop=%q output=%q", u, ok, tl.StopReason, tl.Output())
	}
}

func TestMessagesFaults(t *testing.T) {
	s := start(t, demo.Options{})
	body := `{"model":"demo-chat","max_tokens":9,"stream":true,"messages":[{"role":"user","content":"x"}]}`
	t.Run("Cut", func(t *testing.T) {
		tl, names := readTally(t, postMessages(t, s, "kind=cut&after=1", body, nil).Body)
		if tl.Stopped() || strings.Contains(strings.Join(names, " "), "message_delta") {
			t.Errorf("a cut stream ended with %v", names)
		}
		if _, ok := tl.Usage(); ok {
			t.Error("a cut stream has complete usage")
		}
	})
	t.Run("NoUsage", func(t *testing.T) {
		tl, _ := readTally(t, postMessages(t, s, "kind=no-usage", body, nil).Body)
		if _, ok := tl.Usage(); ok || !tl.Stopped() {
			t.Errorf("no-usage: stopped=%v problem=%q", tl.Stopped(), tl.Problem())
		}
	})
	t.Run("Error", func(t *testing.T) {
		resp := postMessages(t, s, "kind=error&status=429&retry_after=2", body, nil)
		b, _ := io.ReadAll(resp.Body)
		var e struct {
			Type  string
			Error struct{ Type, Message string }
		}
		if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "2" || json.Unmarshal(b, &e) != nil ||
			e.Type != "error" || e.Error.Type != "rate_limit_error" {
			t.Errorf("%d %s", resp.StatusCode, b)
		}
	})
	t.Run("Directive", func(t *testing.T) {
		tl, _ := readTally(t, postMessages(t, s, "", `{"model":"demo-chat","max_tokens":9,"stream":true,"messages":[{"role":"user","content":[{"type":"text","text":"/demo kind=false-usage"}]}]}`, nil).Body)
		if u, ok := tl.Usage(); !ok || u.OutputTokens != 0 {
			t.Errorf("false-usage: %+v %v", u, ok)
		}
	})
	t.Run("WrongKey", func(t *testing.T) {
		k := start(t, demo.Options{APIKey: "k"})
		resp := postMessagesTo(t, k, body, map[string]string{"x-api-key": "nope"})
		if resp.StatusCode != 401 {
			t.Errorf("status %d", resp.StatusCode)
		}
	})
}

func postMessagesTo(t *testing.T, s *demo.Server, body string, hdr map[string]string) *http.Response {
	return postMessages(t, s, "", body, hdr)
}
