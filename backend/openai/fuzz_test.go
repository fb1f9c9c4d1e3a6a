package openai

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
	"testing/iotest"
)

// The seed corpora live in testdata/fuzz/<Target>/; plain `go test` runs
// them. Longer runs: go test -run '^$' -fuzz FuzzSSE -fuzztime 60s ./backend/openai

type sseSummary struct {
	data                     string
	hasData, comment, incomp bool
	name                     string
}

func summarize(t *testing.T, r io.Reader, max int) ([]sseSummary, []byte, error) {
	sr := NewSSEReader(r, max)
	var out []sseSummary
	var raw []byte
	for i := 0; ; i++ {
		ev, err := sr.Next()
		if err != nil {
			return out, raw, err
		}
		if i > 1<<20 {
			t.Fatal("reader does not terminate")
		}
		if len(ev.Raw) == 0 {
			t.Fatal("event with empty Raw")
		}
		if bytes.ContainsAny(ev.Data, "\r") {
			t.Fatalf("data holds a CR: %q", ev.Data)
		}
		raw = append(raw, ev.Raw...)
		if ev.HasData() || ev.Comment || ev.Name != "" {
			out = append(out, sseSummary{string(ev.Data), ev.HasData(), ev.Comment, ev.Incomplete, ev.Name})
		}
	}
}

func FuzzSSE(f *testing.F) {
	f.Add([]byte("data: a\r\n\r\n: ping\n\ndata: b\rdata: c\r\r"), uint16(64))
	f.Add([]byte("data: [DONE]"), uint16(8))
	f.Fuzz(func(t *testing.T, in []byte, limit uint16) {
		max := 16 + int(limit%2048)
		evs, raw, err := summarize(t, bytes.NewReader(in), max)
		if err != io.EOF {
			if !errors.Is(err, ErrEventTooLarge) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if !bytes.Equal(raw, in) {
			t.Fatalf("Raw concatenation %q != input %q", raw, in)
		}
		// Where reads split the input must not change what the events say.
		slow, _, err := summarize(t, iotest.OneByteReader(bytes.NewReader(in)), max+1)
		if err != io.EOF {
			return // a CRLF split across reads may move one LF into the next event
		}
		if fmt.Sprint(slow) != fmt.Sprint(evs) {
			t.Fatalf("one-byte reads: %+v\nwhole: %+v", slow, evs)
		}
	})
}
