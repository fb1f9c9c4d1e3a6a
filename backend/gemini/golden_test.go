package gemini_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/gemini"
	"github.com/quotagate/quotagate/backend/internal/golden"
)

// TestGoldenNative: native Gemini streams → what the tally reads.
func TestGoldenNative(t *testing.T) {
	files, _ := filepath.Glob("testdata/native/*.sse")
	if len(files) < 6 {
		t.Fatalf("only %d native cases", len(files))
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".sse")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var tl gemini.Tally
			for _, ev := range golden.SplitSSE(string(raw)) {
				if ev.Incomplete {
					continue // a client drops it; so does the gateway
				}
				_, _, _ = tl.Observe([]byte(ev.Data))
			}
			u, ok := tl.Usage()
			got := map[string]any{"output": tl.Output(), "final": tl.Final(), "usage_complete": ok,
				"problem": tl.Problem(), "finish_reason": tl.FinishReason, "upstream_error": tl.UpstreamError}
			if ok {
				got["usage"] = u
				got["prompt_tokens"], got["output_tokens"] = u.PromptTokens(), u.OutputTokens()
			}
			b, _ := json.Marshal(got)
			golden.Check(t, strings.TrimSuffix(f, ".sse")+".golden.json", golden.IndentJSON(t, b))
		})
	}
}
