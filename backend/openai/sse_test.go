package openai

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

type wantEvent struct {
	raw, data  string
	hasData    bool
	name       string
	comment    bool
	incomplete bool
}

func readAll(t testing.TB, r *SSEReader) ([]Event, error) {
	t.Helper()
	var evs []Event
	for {
		ev, err := r.Next()
		if err != nil {
			return evs, err
		}
		// Raw and Data are only valid until the next call.
		ev.Raw = append([]byte(nil), ev.Raw...)
		if ev.Data != nil {
			ev.Data = append([]byte{}, ev.Data...)
		}
		evs = append(evs, ev)
		if len(evs) > 10000 {
			t.Fatal("runaway reader")
		}
	}
}

func TestSSEReader(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want []wantEvent
	}{
		{"one LF event", "data: {\"a\":1}\n\n", []wantEvent{{raw: "data: {\"a\":1}\n\n", data: `{"a":1}`, hasData: true}}},
		{"CRLF", "data: x\r\n\r\ndata: y\r\n\r\n", []wantEvent{
			{raw: "data: x\r\n\r\n", data: "x", hasData: true}, {raw: "data: y\r\n\r\n", data: "y", hasData: true}}},
		{"CR only", "data: x\r\rdata: y\r\r", []wantEvent{
			{raw: "data: x\r\r", data: "x", hasData: true}, {raw: "data: y\r\r", data: "y", hasData: true}}},
		{"mixed endings", "data: a\r\ndata: b\rdata: c\n\r\n", []wantEvent{
			{raw: "data: a\r\ndata: b\rdata: c\n\r\n", data: "a\nb\nc", hasData: true}}},
		{"multi-line data joined by LF", "data: {\"a\":\ndata: 1}\n\n", []wantEvent{
			{raw: "data: {\"a\":\ndata: 1}\n\n", data: "{\"a\":\n1}", hasData: true}}},
		{"no space after colon, and only one space stripped", "data:x\ndata:  y\n\n", []wantEvent{
			{raw: "data:x\ndata:  y\n\n", data: "x\n y", hasData: true}}},
		{"empty data field", "data\n\n", []wantEvent{{raw: "data\n\n", data: "", hasData: true}}},
		{"keep-alive comment", ": ping\n\ndata: [DONE]\n\n", []wantEvent{
			{raw: ": ping\n\n", comment: true}, {raw: "data: [DONE]\n\n", data: "[DONE]", hasData: true}}},
		{"comment inside an event", ": note\ndata: x\n\n", []wantEvent{{raw: ": note\ndata: x\n\n", data: "x", hasData: true}}},
		{"event name and id", "event: error\nid: 7\ndata: {}\n\n", []wantEvent{
			{raw: "event: error\nid: 7\ndata: {}\n\n", data: "{}", hasData: true, name: "error"}}},
		{"event without data", "id: 1\n\n", []wantEvent{{raw: "id: 1\n\n"}}},
		{"leading blank lines stay in the next event's Raw", "\n\n: ka\n\n", []wantEvent{{raw: "\n\n: ka\n\n", comment: true}}},
		{"blank lines at the end are returned", "data: x\n\n\n\n", []wantEvent{
			{raw: "data: x\n\n", data: "x", hasData: true}, {raw: "\n\n"}}},
		{"missing final blank line", "data: a\n\ndata: [DONE]\n", []wantEvent{
			{raw: "data: a\n\n", data: "a", hasData: true}, {raw: "data: [DONE]\n", data: "[DONE]", hasData: true, incomplete: true}}},
		{"missing final newline", "data: [DONE]", []wantEvent{{raw: "data: [DONE]", data: "[DONE]", hasData: true, incomplete: true}}},
		{"data that looks like SSE inside JSON", "data: {\"t\":\"\\n\\ndata: [DONE]\"}\n\n", []wantEvent{
			{raw: "data: {\"t\":\"\\n\\ndata: [DONE]\"}\n\n", data: "{\"t\":\"\\n\\ndata: [DONE]\"}", hasData: true}}},
		{"empty stream", "", nil},
		{"leading BOM is ignored but relayed", "\ufeffdata: x\n\n", []wantEvent{{raw: "\ufeffdata: x\n\n", data: "x", hasData: true}}},
		{"BOM only at the start", "data: a\n\n\ufeffdata: x\n\n", []wantEvent{{raw: "data: a\n\n", data: "a", hasData: true}, {raw: "\ufeffdata: x\n\n"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Whole, one byte at a time (CR at a read boundary), and in halves.
			readers := map[string]io.Reader{
				"whole":    strings.NewReader(tc.in),
				"1 byte":   iotest.OneByteReader(strings.NewReader(tc.in)),
				"data+EOF": iotest.DataErrReader(strings.NewReader(tc.in)),
			}
			for rname, r := range readers {
				evs, err := readAll(t, NewSSEReader(r, 1<<10))
				if err != io.EOF {
					t.Fatalf("%s: err = %v, want io.EOF", rname, err)
				}
				var got []wantEvent
				var raw bytes.Buffer
				for _, e := range evs {
					raw.Write(e.Raw)
					// A CRLF split across reads: its LF begins the next Raw.
					if rname == "1 byte" && len(got) > 0 && strings.HasPrefix(string(e.Raw), "\n") && strings.HasSuffix(got[len(got)-1].raw, "\r") {
						got[len(got)-1].raw += "\n"
						e.Raw = e.Raw[1:]
						if len(e.Raw) == 0 {
							continue
						}
					}
					got = append(got, wantEvent{raw: string(e.Raw), data: string(e.Data), hasData: e.HasData(),
						name: e.Name, comment: e.Comment, incomplete: e.Incomplete})
				}
				if len(got) != len(tc.want) {
					t.Fatalf("%s: %d events %+v, want %d %+v", rname, len(got), got, len(tc.want), tc.want)
				}
				for i := range got {
					if got[i] != tc.want[i] {
						t.Errorf("%s: event %d = %+v, want %+v", rname, i, got[i], tc.want[i])
					}
				}
				if raw.String() != tc.in {
					t.Errorf("%s: Raw concatenation %q != input %q", rname, raw.String(), tc.in)
				}
			}
		})
	}
}

// TestSSEReaderCRAtReadBoundary: a CR that ends one read and the LF that
// starts the next are one line break, not two.
func TestSSEReaderCRAtReadBoundary(t *testing.T) {
	r := io.MultiReader(strings.NewReader("data: a\r"), strings.NewReader("\ndata: b\r\n\r"), strings.NewReader("\n"))
	evs, err := readAll(t, NewSSEReader(r, 0))
	if err != io.EOF {
		t.Fatal(err)
	}
	if len(evs) < 1 || string(evs[0].Data) != "a\nb" {
		t.Fatalf("events %+v", evs)
	}
	var raw []byte
	for i, e := range evs {
		raw = append(raw, e.Raw...)
		if e.HasData() && i > 0 {
			t.Errorf("the trailing LF made an event with data: %+v", e)
		}
	}
	if string(raw) != "data: a\r\ndata: b\r\n\r\n" {
		t.Errorf("raw %q", raw)
	}
}

func TestSSEReaderOversize(t *testing.T) {
	big := "data: " + strings.Repeat("x", 300) + "\n\n"
	for name, in := range map[string]string{
		"one long line":         big,
		"many short data lines": strings.Repeat("data: xx\n", 100) + "\n",
		"no terminator at all":  strings.Repeat("y", 1000),
	} {
		r := NewSSEReader(strings.NewReader("data: ok\n\n"+in+"data: after\n\n"), 256)
		ev, err := r.Next()
		if err != nil || string(ev.Data) != "ok" {
			t.Fatalf("%s: first event %q, %v", name, ev.Data, err)
		}
		_, err = r.Next()
		if !errors.Is(err, ErrEventTooLarge) {
			t.Fatalf("%s: err = %v, want ErrEventTooLarge", name, err)
		}
		if _, err2 := r.Next(); !errors.Is(err2, ErrEventTooLarge) {
			t.Errorf("%s: the error is not sticky: %v", name, err2)
		}
	}
	// Exactly at the limit is fine.
	exact := "data: " + strings.Repeat("z", 256-8) + "\n\n"
	if ev, err := NewSSEReader(strings.NewReader(exact), 256).Next(); err != nil || len(ev.Raw) != 256 {
		t.Errorf("event of exactly the limit: %d bytes, %v", len(ev.Raw), err)
	}
}

func TestSSEReaderPassesReadErrorsAfterEvents(t *testing.T) {
	boom := errors.New("connection reset")
	r := NewSSEReader(io.MultiReader(strings.NewReader("data: a\n\ndata: part"), iotest.ErrReader(boom)), 0)
	ev, err := r.Next()
	if err != nil || string(ev.Data) != "a" {
		t.Fatalf("first: %q %v", ev.Data, err)
	}
	ev, err = r.Next()
	if err != nil || !ev.Incomplete || string(ev.Raw) != "data: part" {
		t.Fatalf("cut event: %+v %v", ev, err)
	}
	if _, err = r.Next(); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the read error", err)
	}
}

// TestSSEReaderRelease: a released reader's buffer serves the next reader,
// and the released one reports an error instead of reading on.
func TestSSEReaderRelease(t *testing.T) {
	r := NewSSEReader(strings.NewReader("data: a\n\ndata: b\n\n"), 0)
	if ev, err := r.Next(); err != nil || string(ev.Data) != "a" {
		t.Fatalf("first event %q, %v", ev.Data, err)
	}
	r.Release()
	if _, err := r.Next(); err == nil || err == io.EOF {
		t.Fatalf("Next after Release: %v, want an error", err)
	}
	r2 := NewSSEReader(strings.NewReader("data: c\n\n"), 0)
	defer r2.Release()
	if ev, err := r2.Next(); err != nil || string(ev.Data) != "c" {
		t.Fatalf("next reader's event %q, %v", ev.Data, err)
	}
}
