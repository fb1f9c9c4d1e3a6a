package responses_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/responses"
)

// FuzzRequest: the parser never panics; an accepted request has segments
// with roles, and its chat translation (when it has one) is valid JSON.
func FuzzRequest(f *testing.F) {
	files, _ := filepath.Glob("testdata/tochat/*.json")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"model":"m","input":[{"type":"function_call_output","call_id":"c","output":{"stdout":"x"}}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := responses.ParseRequest(body)
		if err != nil {
			if ledger.ErrorCode(err) != ledger.CodeInvalidRequest {
				t.Fatalf("error %v is not invalid_request", err)
			}
			return
		}
		for _, s := range r.Segments() {
			if s.Role == "" || s.Images < 0 {
				t.Fatalf("segment %+v", s)
			}
		}
		chat, _, err := r.ChatBody()
		if err == nil && !json.Valid(chat) {
			t.Fatalf("chat body is not JSON: %s", chat)
		}
	})
}

// FuzzEvents: the native reader never panics on any event, and never trusts
// usage that is negative or inconsistent.
func FuzzEvents(f *testing.F) {
	files, _ := filepath.Glob("testdata/native/*.sse")
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		for _, ev := range readSSE(&testing.T{}, b) {
			f.Add(ev.name, []byte(ev.data), ev.name, []byte(ev.data))
		}
	}
	f.Fuzz(func(t *testing.T, name1 string, data1 []byte, name2 string, data2 []byte) {
		var r responses.Reader
		_ = r.Observe(name1, data1)
		_ = r.Observe(name2, data2)
		res := r.Result()
		if u := res.Usage; u != nil {
			if u.InputTokens < 0 || u.OutputTokens < 0 || u.TotalTokens != u.InputTokens+u.OutputTokens ||
				u.ReasoningTokens > u.OutputTokens || u.CachedTokens > u.InputTokens {
				t.Fatalf("trusted inconsistent usage %+v", u)
			}
			if res.Final != responses.FinalCompleted && res.Final != responses.FinalIncomplete {
				t.Fatalf("usage %+v without a final completed/incomplete event (%q)", u, res.Final)
			}
		}
		if _, err := responses.ParseResponse(data1); err == nil {
			return
		}
	})
}

// FuzzTranslate: any chat chunks translate without panicking into events
// whose data is JSON of their own type, and Done always ends with one final
// event.
func FuzzTranslate(f *testing.F) {
	files, _ := filepath.Glob("testdata/fromchat/*.sse")
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		evs := readSSE(&testing.T{}, b)
		for i := 0; i+1 < len(evs); i++ {
			f.Add([]byte(evs[i].data), []byte(evs[i+1].data))
		}
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		tr := responses.NewTranslator(responses.Meta{ResponseID: "resp_f", Model: "m"})
		all := tr.Start()
		for _, c := range [][]byte{a, b} {
			evs, err := tr.Chunk(c)
			if err == nil {
				all = append(all, evs...)
			}
		}
		done := tr.Done()
		all = append(all, done...)
		if last := done[len(done)-1].Type; last != "response.completed" && last != "response.incomplete" {
			t.Fatalf("Done ends with %s", last)
		}
		for _, e := range all {
			var v struct{ Type string }
			if err := json.Unmarshal(e.Data, &v); err != nil || v.Type != e.Type {
				t.Fatalf("event %s: %s (%v)", e.Type, e.Data, err)
			}
		}
	})
}
