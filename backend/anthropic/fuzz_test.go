package anthropic_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/anthropic"
	"github.com/quotagate/quotagate/backend/internal/golden"
	"github.com/quotagate/quotagate/backend/wire"
)

// FuzzMessagesRequest: the parser never panics; what it accepts counts
// the same for the reserve and for count_tokens, never negative
// (translate's FuzzMessagesToChat translates what it accepts).
func FuzzMessagesRequest(f *testing.F) {
	golden.Seed(f, "../translate/testdata/messages/requests/*.json", notChat)
	f.Add([]byte(`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"hi"}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := anthropic.ParseRequest(body)
		if err != nil {
			if !errors.As(err, new(*wire.RequestError)) {
				t.Fatalf("error without invalid_request: %v", err)
			}
			return
		}
		turns := r.Turns()
		if len(turns) < len(r.Messages) {
			t.Fatalf("%d turns for %d messages", len(turns), len(r.Messages))
		}
		if tj := r.ToolsJSON(); tj != nil && !json.Valid(tj) {
			t.Fatalf("tools JSON %s", tj)
		}
		if string(r.Raw()) != string(body) {
			t.Fatal("raw body changed")
		}
	})
}

// FuzzMessagesEvents: the event reader never panics, usage is never
// negative, and once it has a problem it never loses it.
func FuzzMessagesEvents(f *testing.F) {
	golden.Seed(f, "testdata/native/*.sse", nil)
	f.Fuzz(func(t *testing.T, stream []byte) {
		var tl anthropic.Tally
		problem := ""
		for _, ev := range golden.SplitSSE(string(stream)) {
			_, _ = tl.Observe(ev.Name, []byte(ev.Data))
			if problem != "" && tl.Problem() != problem {
				t.Fatalf("problem %q replaced by %q", problem, tl.Problem())
			}
			problem = tl.Problem()
		}
		if u, ok := tl.Usage(); ok && (u.InputTokens < 0 || u.CacheCreationInputTokens < 0 || u.CacheReadInputTokens < 0 || u.OutputTokens < 0) {
			t.Fatalf("negative usage %+v", u)
		}
	})
}

// notChat leaves out the translation goldens beside the requests.
func notChat(path string) bool { return !strings.HasSuffix(path, ".chat.json") }
