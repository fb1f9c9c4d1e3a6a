package responses_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/quotagate/quotagate/backend/internal/golden"
	"github.com/quotagate/quotagate/backend/responses"
	"github.com/quotagate/quotagate/backend/wire"
)

// FuzzRequest: the parser never panics, and an accepted request has
// segments with roles (translate's FuzzResponsesToChat translates it).
func FuzzRequest(f *testing.F) {
	golden.Seed(f, "../translate/testdata/responses/tochat/*.json", nil)
	f.Add([]byte(`{"model":"m","input":[{"type":"function_call_output","call_id":"c","output":{"stdout":"x"}}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := responses.ParseRequest(body)
		if err != nil {
			if !errors.As(err, new(*wire.RequestError)) {
				t.Fatalf("error %v is not invalid_request", err)
			}
			return
		}
		for _, s := range r.Segments() {
			if s.Role == "" || s.Images < 0 {
				t.Fatalf("segment %+v", s)
			}
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
		for _, ev := range golden.ReadSSE(&testing.T{}, b) {
			f.Add(ev.Name, []byte(ev.Data), ev.Name, []byte(ev.Data))
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
