package openai_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/internal/golden"
	"github.com/quotagate/quotagate/backend/openai"
	"github.com/quotagate/quotagate/backend/wire"
)

// The legacy completions and embeddings formats against golden files:
// testdata/{completions,embeddings}/*.json are request bodies (answer*.json
// answers), completions/answer*.sse streams; each case's .golden.json is
// what the gateway reads of it (go test -update rewrites them).

func requestCases(t *testing.T, dir string) []string {
	var out []string
	for _, c := range golden.Cases(t, dir, ".json") {
		if !strings.HasPrefix(filepath.Base(c), "answer") {
			out = append(out, c)
		}
	}
	return out
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// refusal is a golden file's record of a refused body.
func refusal(t *testing.T, err error) map[string]any {
	if !errors.As(err, new(*wire.RequestError)) {
		t.Fatalf("error %v is not a *wire.RequestError", err)
	}
	return map[string]any{"refused": wire.Reason(err)}
}

func TestGoldenCompletionsRequests(t *testing.T) {
	for _, c := range requestCases(t, "completions") {
		t.Run(filepath.Base(c), func(t *testing.T) {
			r, err := openai.ParseCompletionsRequest(read(t, c+".json"))
			got := map[string]any{}
			if err != nil {
				got = refusal(t, err)
			} else {
				up, err := r.UpstreamBody()
				if err != nil {
					t.Fatal(err)
				}
				got = map[string]any{"model": r.Model, "prompt": r.Prompt, "suffix": r.Suffix, "stream": r.Stream,
					"include_usage": r.IncludeUsage, "max_tokens": r.MaxTokens, "upstream_body": string(up)}
			}
			golden.Check(t, c+".golden.json", golden.IndentValue(t, got))
		})
	}
}

func TestGoldenCompletionsAnswers(t *testing.T) {
	for _, c := range golden.Cases(t, "completions", ".sse") {
		t.Run(filepath.Base(c), func(t *testing.T) {
			var got []map[string]any
			for _, ev := range golden.ReadSSE(t, read(t, c+".sse")) {
				ch, err := openai.ParseTextChunk([]byte(ev.Data))
				g := map[string]any{"text": ch.Content, "choices": ch.Choices, "done": ch.Done, "usage": ch.Usage, "error": ch.Error}
				if err != nil {
					g["problem"] = err.Error()
				}
				got = append(got, g)
			}
			golden.Check(t, c+".golden.json", golden.IndentValue(t, got))
		})
	}
}

func TestGoldenEmbeddings(t *testing.T) {
	for _, c := range golden.Cases(t, "embeddings", ".json") {
		t.Run(filepath.Base(c), func(t *testing.T) {
			body := read(t, c+".json")
			var got map[string]any
			if strings.HasPrefix(filepath.Base(c), "answer") {
				e, err := openai.ParseEmbeddings(body)
				got = map[string]any{"data": e.Data, "usage": e.Usage, "error": e.Error}
				if err != nil {
					got["problem"] = err.Error()
				}
			} else if r, err := openai.ParseEmbeddingsRequest(body); err != nil {
				got = refusal(t, err)
			} else {
				got = map[string]any{"model": r.Model, "texts": r.Texts, "token_count": r.TokenCount, "inputs": r.Inputs}
			}
			golden.Check(t, c+".golden.json", golden.IndentValue(t, got))
		})
	}
}

// FuzzCompletionsRequest: the parser never panics; it refuses with a
// *wire.RequestError, and an accepted request has a model, a cap of at
// least 1, and an upstream body that parses to the same request asking a
// stream for usage.
func FuzzCompletionsRequest(f *testing.F) {
	golden.Seed(f, "testdata/completions/*.json", func(p string) bool { return !strings.Contains(p, ".golden.") })
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := openai.ParseCompletionsRequest(body)
		if err != nil {
			if !errors.As(err, new(*wire.RequestError)) {
				t.Fatalf("error %v is not invalid_request", err)
			}
			return
		}
		if r.Model == "" || r.MaxTokens < 1 {
			t.Fatalf("accepted %+v", r)
		}
		up, err := r.UpstreamBody()
		if err != nil {
			t.Fatalf("upstream body: %v", err)
		}
		again, err := openai.ParseCompletionsRequest(up)
		if err != nil || again.Prompt != r.Prompt || again.Suffix != r.Suffix || again.MaxTokens != r.MaxTokens ||
			again.Stream != r.Stream || (r.Stream && !again.IncludeUsage) {
			t.Fatalf("upstream body %s reads as %+v, %v; the client's as %+v", up, again, err, r)
		}
	})
}

// FuzzEmbeddingsRequest: the parser never panics; an accepted request has
// at least one input, and its counts add up.
func FuzzEmbeddingsRequest(f *testing.F) {
	golden.Seed(f, "testdata/embeddings/*.json", func(p string) bool { return !strings.Contains(p, ".golden.") })
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := openai.ParseEmbeddingsRequest(body)
		if err != nil {
			if !errors.As(err, new(*wire.RequestError)) {
				t.Fatalf("error %v is not invalid_request", err)
			}
			return
		}
		if r.Model == "" || r.Inputs < 1 || r.TokenCount < 0 || (len(r.Texts) > 0) == (r.TokenCount > 0) {
			t.Fatalf("accepted %+v", r)
		}
	})
}

// FuzzEmbeddingsAnswer and FuzzTextChunk: the answer readers never panic,
// and never return usage that is negative.
func FuzzEmbeddingsAnswer(f *testing.F) {
	golden.Seed(f, "testdata/embeddings/answer*.json", func(p string) bool { return !strings.Contains(p, ".golden.") })
	f.Fuzz(func(t *testing.T, body []byte) {
		e, err := openai.ParseEmbeddings(body)
		if err == nil && e.Usage != nil && (e.Usage.PromptTokens < 0 || e.Usage.CompletionTokens < 0 || e.Data < 0) {
			t.Fatalf("read %+v", e)
		}
	})
}

func FuzzTextChunk(f *testing.F) {
	for _, c := range []string{"answer-stream", "answer-error", "answer-bad-usage"} {
		b, _ := os.ReadFile("testdata/completions/" + c + ".sse")
		for _, line := range strings.Split(string(b), "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				f.Add([]byte(d))
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := openai.ParseTextChunk(data)
		if err == nil && c.Usage != nil && (c.Usage.PromptTokens < 0 || c.Usage.CompletionTokens < 0) {
			t.Fatalf("read %+v", c)
		}
		if err == nil && !c.Done && !json.Valid(data) {
			t.Fatalf("accepted invalid JSON %q", data)
		}
	})
}
