package meter

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/openai"
	"github.com/quotagate/quotagate/backend/wire"
)

// The seed corpora live in testdata/fuzz/<Target>/; plain `go test` runs
// them. Longer runs: go test -run '^$' -fuzz FuzzSSE -fuzztime 60s ./backend/meter (parsers: ./backend/openai)

func FuzzChatRequest(f *testing.F) {
	f.Add([]byte(`{"model":"demo","messages":[{"role":"user","content":"hi"}],"max_tokens":100}`))
	f.Add([]byte(`{"model":"m","stream":true,"messages":[{"role":"user","content":[{"type":"text","text":"x"}]}]}`))
	utf8m := mustMeter(f, NameUTF8Bytes)
	policy := ReservePolicy{DefaultOutputUnits: 1000, ReasoningFloorUnits: 4096, ImageUnits: 85, ReasoningModels: []string{"r*"}}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := openai.ParseChatRequest(body)
		if err != nil {
			var le *wire.RequestError
			if !errors.As(err, &le) || le.Message == "" {
				t.Fatalf("error %v is not a *wire.RequestError (the door's invalid_request)", err)
			}
			return
		}
		if r.Model == "" || len(r.Messages) == 0 || r.N < 1 {
			t.Fatalf("accepted an incomplete request: %+v", r)
		}
		in, res := policy.Reserve(utf8m, chatRequest(r))
		if in < 0 || res < in || res > ledger.MaxUnits {
			t.Fatalf("Reserve = %d, %d", in, res)
		}
		up, err := r.UpstreamBody()
		if err != nil {
			t.Fatalf("UpstreamBody: %v", err)
		}
		if !r.Stream && !bytes.Equal(up, body) {
			t.Fatalf("non-streaming body changed")
		}
		r2, err := openai.ParseChatRequest(up)
		if err != nil {
			t.Fatalf("the upstream body does not parse: %v\n%s", err, up)
		}
		c1, ok1 := r.OutputCap()
		c2, ok2 := r2.OutputCap()
		if r2.Model != r.Model || len(r2.Messages) != len(r.Messages) || r2.Stream != r.Stream || c1 != c2 || ok1 != ok2 || r2.N != r.N {
			t.Fatalf("the upstream body says something else:\n%s\n%s", body, up)
		}
		if r.Stream && !r2.IncludeUsage {
			t.Fatalf("streaming upstream body does not ask for usage: %s", up)
		}
		if in2, res2 := policy.Reserve(utf8m, chatRequest(r2)); in2 != in || res2 != res {
			t.Fatalf("reserve changed through UpstreamBody: %d/%d vs %d/%d", in, res, in2, res2)
		}
	})
}

func FuzzUsage(f *testing.F) {
	f.Add([]byte(`{"prompt_tokens":6,"completion_tokens":9,"total_tokens":15}`))
	f.Add([]byte(`{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"completion_tokens_details":{"reasoning_tokens":1}}}`))
	utf8m := mustMeter(f, NameUTF8Bytes)
	tk := mustMeter(f, NameTiktoken)
	f.Fuzz(func(t *testing.T, data []byte) {
		// The chunk and completion parsers never panic on anything.
		if c, err := openai.ParseChunk(data); err == nil && c.Usage != nil {
			checkUsage(t, (*Usage)(c.Usage))
		}
		if c, err := openai.ParseCompletion(data); err == nil && c.Usage != nil {
			checkUsage(t, (*Usage)(c.Usage))
		}
		u, err := openai.ParseUsage(data)
		if err != nil {
			if !errors.Is(err, openai.ErrBadUsage) {
				t.Fatalf("error %v does not wrap ErrBadUsage", err)
			}
			return
		}
		if u == nil {
			return
		}
		checkUsage(t, (*Usage)(u))
		// Round trip through the wire form.
		wire := fmt.Sprintf(`{"prompt_tokens":%d,"completion_tokens":%d}`, u.PromptTokens, u.CompletionTokens)
		if u2, err := openai.ParseUsage([]byte(wire)); err != nil || u2.PromptTokens != u.PromptTokens || u2.CompletionTokens != u.CompletionTokens {
			t.Fatalf("round trip %s: %+v %v", wire, u2, err)
		}
		for _, m := range []Meter{utf8m, tk} {
			v := Judge(Judgement{Meter: m, Model: "gpt-4o", InputUnits: ledger.Units(u.PromptTokens), Output: "x",
				Usage: (*Usage)(u), Complete: true, Band: DefaultPromptBand})
			if v.SpendUnits < 0 || v.SpendUnits > ledger.MaxUnits || (!v.Trusted && v.SpendUnits != 0) {
				t.Fatalf("%s verdict %+v for %+v", m.Name(), v, u)
			}
		}
		_ = json.Valid(data)
	})
}

func checkUsage(t *testing.T, u *Usage) {
	t.Helper()
	for _, n := range []int64{u.PromptTokens, u.CompletionTokens, u.TotalTokens, u.ReasoningTokens} {
		if n < 0 || n > int64(ledger.MaxUnits) {
			t.Fatalf("usage out of range: %+v", u)
		}
	}
}
