package anthropic_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/anthropic"
	"github.com/quotagate/quotagate/backend/internal/golden"
)

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
			golden.Check(t, strings.TrimSuffix(f, ".sse")+".golden.json", indent(t, b))
		})
	}
}
