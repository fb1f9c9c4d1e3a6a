package openai

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestSSEReaderDispatchesWithoutReadAhead streams over a real loopback
// HTTP connection. The server writes one fragment, flushes, and writes the
// next only after the client has received the event the fragment
// completed: if the reader waited for more bytes than an event needs, the
// test would stall until its deadline. A CR at the very end of what has
// arrived must dispatch at once, and the LF that may follow must not make
// an event of its own.
func TestSSEReaderDispatchesWithoutReadAhead(t *testing.T) {
	fragments := []struct {
		write string
		want  string // data of the event this fragment completes ("" none)
	}{
		{"data: one\n\n", "one"},
		{"data: two\r\n\r", "two"}, // the LF of the CRLF comes later
		{"\n: ping\n\n", ""},       // a comment event; its own
		{"data: thr", ""},
		{"ee\r\r", "three"}, // CR-only line endings
		{"data: {\"a\":\ndata: 1}\n\n", "{\"a\":\n1}"},
		{"data: [DONE]\n\n", "[DONE]"},
	}
	next := make(chan struct{})
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(done)
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		for _, f := range fragments {
			if _, err := fmt.Fprint(w, f.write); err != nil {
				return
			}
			if err := rc.Flush(); err != nil {
				return
			}
			select {
			case <-next:
			case <-r.Context().Done():
				return
			}
		}
	}))
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sr := NewSSEReader(resp.Body, 0)
	var raw []byte
	for i, f := range fragments {
		if f.want == "" && f.write != "\n: ping\n\n" {
			next <- struct{}{} // nothing completes here; let the server go on
			continue
		}
		ev, err := sr.Next()
		if err != nil {
			t.Fatalf("fragment %d: %v (the reader waited for bytes it did not need?)", i, err)
		}
		raw = append(raw, ev.Raw...)
		if f.want == "" {
			if !ev.Comment || ev.HasData() {
				t.Errorf("fragment %d: want a comment event, got %+v", i, ev)
			}
		} else if string(ev.Data) != f.want {
			t.Errorf("fragment %d: data %q, want %q", i, ev.Data, f.want)
		}
		next <- struct{}{}
	}
	if ev, err := sr.Next(); err == nil {
		t.Errorf("an event after [DONE]: %+v", ev)
	}
	<-done
	var all string
	for _, f := range fragments {
		all += f.write
	}
	if string(raw) != all {
		t.Errorf("relayed %q, stream was %q", raw, all)
	}
}
