package golden

import (
	"bufio"
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// Event is one event of a test stream (the gateway frames real streams with
// the shared SSE reader; this is only for fixtures). Incomplete is set by
// SplitSSE on the last frame when the stream ended before its blank line (a
// cut).
type Event struct {
	Name, Data string
	Incomplete bool
}

// ReadSSE returns the events of b that carry data.
func ReadSSE(t *testing.T, b []byte) []Event {
	t.Helper()
	var out []Event
	var cur Event
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.Data != "" {
				out = append(out, cur)
			}
			cur = Event{}
		case strings.HasPrefix(line, "event: "):
			cur.Name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.Data = strings.TrimPrefix(line, "data: ")
		}
	}
	if cur.Data != "" {
		out = append(out, cur)
	}
	return out
}

// SplitSSE returns every non-blank frame of s, the last one marked
// Incomplete.
func SplitSSE(s string) []Event {
	var out []Event
	frames := strings.Split(s, "\n\n")
	for i, f := range frames {
		if strings.TrimSpace(f) == "" {
			continue
		}
		var ev Event
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

// IndentJSON is b indented two spaces, with a final newline.
func IndentJSON(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		t.Fatalf("indent %s: %v", b, err)
	}
	out.WriteByte('\n')
	return out.Bytes()
}

// IndentValue is v encoded indented two spaces, HTML unescaped.
func IndentValue(t *testing.T, v any) []byte {
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

// Cases lists testdata/dir/*ext without their extension, leaving out the
// golden files.
func Cases(t *testing.T, dir, ext string) []string {
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
