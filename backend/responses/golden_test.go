package responses_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/internal/golden"
	"github.com/quotagate/quotagate/backend/responses"
)

// sseEvent is one event of a test stream (the gateway frames real streams
// with the shared SSE reader; this is only for fixtures).
type sseEvent struct {
	name string
	data string
}

func readSSE(t *testing.T, b []byte) []sseEvent {
	t.Helper()
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.data != "" {
				out = append(out, cur)
			}
			cur = sseEvent{}
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

func indent(t *testing.T, v any) []byte {
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

// Native streams: what the reader makes of each (text, function call, cut,
// failed, incomplete, no usage, usage-shaped text, contradictory usage, data
// after the final event).
func TestGoldenNative(t *testing.T) {
	for _, base := range cases(t, "native", ".sse") {
		t.Run(filepath.Base(base), func(t *testing.T) {
			in, err := os.ReadFile(base + ".sse")
			if err != nil {
				t.Fatal(err)
			}
			var r responses.Reader
			for _, ev := range readSSE(t, in) {
				if err := r.Observe(ev.name, []byte(ev.data)); err != nil {
					t.Fatal(err)
				}
			}
			golden.Check(t, base+".golden.json", indent(t, r.Result()))
		})
	}
}
