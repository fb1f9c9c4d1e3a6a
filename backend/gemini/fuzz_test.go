package gemini_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/gemini"
	"github.com/quotagate/quotagate/backend/internal/golden"
	"github.com/quotagate/quotagate/backend/wire"
)

// FuzzGeminiRequest: the parser never panics; what it accepts keeps its
// raw body, has a turn for every content, and valid tools JSON.
func FuzzGeminiRequest(f *testing.F) {
	golden.Seed(f, "../translate/testdata/gemini/requests/*.json", notChat)
	f.Add([]byte(`{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := gemini.ParseRequest("m", true, body)
		if err != nil {
			if !errors.As(err, new(*wire.RequestError)) {
				t.Fatalf("error without invalid_request: %v", err)
			}
			return
		}
		if turns := r.Turns(); len(turns) < len(r.Contents) {
			t.Fatalf("%d turns for %d contents", len(turns), len(r.Contents))
		}
		if tj := r.ToolsJSON(); tj != nil && !json.Valid(tj) {
			t.Fatalf("tools JSON %s", tj)
		}
		if string(r.Raw()) != string(body) {
			t.Fatal("raw body changed")
		}
	})
}

// FuzzGeminiStream: the stream reader never panics, usage is never
// negative, and once it has a problem it never loses it.
func FuzzGeminiStream(f *testing.F) {
	golden.Seed(f, "testdata/native/*.sse", nil)
	f.Fuzz(func(t *testing.T, stream []byte) {
		var tl gemini.Tally
		problem := ""
		for _, ev := range golden.SplitSSE(string(stream)) {
			_, _, _ = tl.Observe([]byte(ev.Data))
			if problem != "" && tl.Problem() != problem {
				t.Fatalf("problem %q replaced by %q", problem, tl.Problem())
			}
			problem = tl.Problem()
		}
		if u, ok := tl.Usage(); ok && (u.PromptTokens() < 0 || u.OutputTokens() < 0 || u.CachedContentTokenCount > u.PromptTokenCount) {
			t.Fatalf("bad usage %+v", u)
		}
	})
}

// notChat leaves out the translation goldens beside the requests.
func notChat(path string) bool { return !strings.HasSuffix(path, ".chat.json") }
