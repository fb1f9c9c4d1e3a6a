package translate_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/gemini"
	"github.com/quotagate/quotagate/backend/internal/golden"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/translate"
)

// TestGoldenGeminiRequests: Gemini request → chat-completions body.
func TestGoldenGeminiRequests(t *testing.T) {
	files, _ := filepath.Glob("testdata/gemini/requests/*.json")
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
			req, err := gemini.ParseRequest("demo-chat", name != "text", body)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			chat, err := translate.GeminiToChat(req, translateOptions[name])
			if err != nil {
				t.Fatalf("translate: %v", err)
			}
			golden.Check(t, strings.TrimSuffix(f, ".json")+".chat.json", golden.IndentJSON(t, chat))
		})
	}
	if n < 3 {
		t.Fatalf("only %d request cases", n)
	}
}

// TestGoldenGeminiAnswers: chat answers (stream and not) → Gemini chunks
// and responses. A stream without [DONE] is a cut: the translation's
// chunks so far, then the one error event the door writes, and no chunk
// with a finishReason.
func TestGoldenGeminiAnswers(t *testing.T) {
	for _, base := range golden.Cases(t, "gemini/answers", ".chat.sse") {
		name := filepath.Base(base)
		t.Run("stream/"+name, func(t *testing.T) {
			raw, err := os.ReadFile(base + ".chat.sse")
			if err != nil {
				t.Fatal(err)
			}
			tr := translate.NewGeminiStream("demo-chat", "run_1", name == "thinking")
			var out []byte
			done := false
			for _, ev := range golden.SplitSSE(string(raw)) {
				if ev.Incomplete {
					continue
				}
				done = done || ev.Data == "[DONE]"
				b, err := tr.Chunk([]byte(ev.Data))
				if err != nil {
					t.Fatalf("chunk %q: %v", ev.Data, err)
				}
				out = append(out, b...)
			}
			if done {
				out = append(out, tr.End()...)
			} else {
				out = append(out, translate.GeminiErrorEvent(ledger.Errorf(ledger.CodeUpstreamInterrupt, "the upstream cut the stream"))...)
			}
			golden.Check(t, base+".gemini.sse", out)
			checkGeminiStream(t, out, done)
		})
	}
	for _, base := range golden.Cases(t, "gemini/answers", ".chat.json") {
		name := filepath.Base(base)
		t.Run("response/"+name, func(t *testing.T) {
			raw, err := os.ReadFile(base + ".chat.json")
			if err != nil {
				t.Fatal(err)
			}
			b, err := translate.GeminiFromChat(raw, "demo-chat", "run_1", name == "thinking")
			if err != nil {
				t.Fatal(err)
			}
			a, err := gemini.ParseResponse(b)
			if err != nil || a.Usage == nil || a.FinishReason == "" {
				t.Fatalf("the translation does not read back as evidence: %+v %v", a, err)
			}
			golden.Check(t, base+".gemini.json", golden.IndentJSON(t, b))
		})
	}
}

// checkGeminiStream reads a translated stream back as the native tally
// does: a whole one is trusted evidence, a cut one ends in its error
// event with no finishReason anywhere.
func checkGeminiStream(t *testing.T, out []byte, done bool) {
	t.Helper()
	var tl gemini.Tally
	for _, ev := range golden.SplitSSE(strings.ReplaceAll(string(out), "\r\n", "\n")) {
		_, _, _ = tl.Observe([]byte(ev.Data))
	}
	_, ok := tl.Usage()
	switch {
	case done && (!ok || tl.Problem() != ""):
		t.Errorf("a whole stream reads back as %q, usage %v", tl.Problem(), ok)
	case !done && (tl.Final() || tl.UpstreamError == ""):
		t.Errorf("a cut stream: final %v, error %q", tl.Final(), tl.UpstreamError)
	}
}

// TestGeminiErrorBodies: each status Google answers with, and quotagate's
// code in the message.
func TestGeminiErrorBodies(t *testing.T) {
	codes := []struct {
		code   string
		status string
	}{
		{ledger.CodeInvalidRequest, "INVALID_ARGUMENT"},
		{ledger.CodeInvalidAPIKey, "UNAUTHENTICATED"},
		{ledger.CodeInsufficientBudget, "RESOURCE_EXHAUSTED"},
		{ledger.CodeForbidden, "PERMISSION_DENIED"},
		{ledger.CodeModelNotFound, "NOT_FOUND"},
		{ledger.CodeRateLimited, "RESOURCE_EXHAUSTED"},
		{ledger.CodeQuotaGuard, "RESOURCE_EXHAUSTED"},
		{ledger.CodeUpstreamBusy, "RESOURCE_EXHAUSTED"},
		{ledger.CodeLedgerUnavailable, "UNAVAILABLE"},
		{ledger.CodeUpstreamTimeout, "DEADLINE_EXCEEDED"},
		{ledger.CodeUpstreamInterrupt, "UNAVAILABLE"},
		{ledger.CodeInternal, "INTERNAL"},
	}
	for _, c := range codes {
		err := ledger.Errorf(c.code, "a sentence about %s", c.code)
		status := ledger.HTTPStatus(c.code)
		var e gemini.ErrorJSON
		if b := translate.GeminiErrorBody(status, err); json.Unmarshal(b, &e) != nil || e.Error.Status != c.status || e.Error.Code != status {
			t.Errorf("%s: body %s, want status %s", c.code, b, c.status)
		}
		if !strings.Contains(e.Error.Message, "(quotagate: "+c.code+")") {
			t.Errorf("%s: message %q does not name the code", c.code, e.Error.Message)
		}
	}
}

// FuzzGeminiToChat: whatever the Gemini parser accepts (one candidate)
// translates to a JSON chat body.
func FuzzGeminiToChat(f *testing.F) {
	golden.Seed(f, "testdata/gemini/requests/*.json", func(p string) bool { return !strings.HasSuffix(p, ".chat.json") })
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := gemini.ParseRequest("m", true, body)
		if err != nil || r.Generation.CandidateCount > 1 {
			return
		}
		chat, err := translate.GeminiToChat(r, translate.ChatOptions{Reasoning: translate.ReasoningObject})
		if err != nil {
			t.Fatalf("translate an accepted body: %v", err)
		}
		if !json.Valid(chat) {
			t.Fatalf("translation is not JSON: %s", chat)
		}
	})
}

// FuzzChatToGeminiStream: translating any chat stream never panics and
// writes a finishReason only in End's final chunk.
func FuzzChatToGeminiStream(f *testing.F) {
	golden.Seed(f, "testdata/gemini/answers/*.chat.sse", nil)
	f.Fuzz(func(t *testing.T, stream []byte) {
		tr := translate.NewGeminiStream("m", "r", true)
		var out strings.Builder
		for _, ev := range golden.SplitSSE(string(stream)) {
			b, _ := tr.Chunk([]byte(ev.Data))
			out.Write(b)
		}
		if strings.Contains(out.String(), `"finishReason":`) {
			t.Fatal("a chunk before End carries a finishReason")
		}
		if end := tr.End(); !json.Valid(bytes.TrimSpace(bytes.TrimPrefix(end, []byte("data: ")))) {
			t.Fatalf("final chunk %q", end)
		}
	})
}
