package demo

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/quotagate/quotagate/backend/openai"
)

// The demo speaks legacy completions (POST /v1/completions), filling in the
// middle when the request carries a suffix, and embeddings (POST
// /v1/embeddings) with deterministic vectors, under the same plans as chat.

// fimRequest is the part of a completions request the demo reads.
type fimRequest struct {
	Model         string          `json:"model"`
	Prompt        json.RawMessage `json:"prompt"`
	Suffix        string          `json:"suffix"`
	MaxTokens     *int64          `json:"max_tokens"`
	Stream        bool            `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

// prompt is the prompt string (or the first of an array).
func (f *fimRequest) prompt() string {
	var s string
	if json.Unmarshal(f.Prompt, &s) == nil {
		return s
	}
	var list []string
	if json.Unmarshal(f.Prompt, &list) == nil && len(list) > 0 {
		return list[0]
	}
	return ""
}

// FillPrefix starts the demo's fill-in-the-middle answer, which names the
// first non-blank line of the suffix it fills up to.
const FillPrefix = "/* simulated fill before "

func (s *Server) completionsHandler(w http.ResponseWriter, r *http.Request) {
	var req fimRequest
	body, ok := readRequest(w, r, func(b []byte) error { return json.Unmarshal(b, &req) }, chatRefusal)
	if !ok {
		return
	}
	prompt := req.prompt()
	x := s.begin(w, r, body, &chatRequest{Model: req.Model, Stream: req.Stream}, prompt,
		req.StreamOptions != nil && req.StreamOptions.IncludeUsage)
	if x == nil {
		return
	}
	defer s.done(x)
	x.fim = &req
	if x.plan.Text == "" && len(x.plan.Parts) == 0 && req.Suffix != "" {
		line, _, _ := strings.Cut(strings.TrimSpace(req.Suffix), "\n")
		x.plan.Text = FillPrefix + fmt.Sprintf("%q */", line)
	}
	x.run()
}

// fimParts are the parts of the answer that fit in max_tokens (OpenAI's
// default 16), in the units the demo reports, and whether it was cut there.
func (x *exchange) fimParts() ([]string, bool) {
	limit := int64(openai.DefaultCompletionsMaxTokens)
	if x.fim.MaxTokens != nil {
		limit = *x.fim.MaxTokens
	}
	all := x.parts()
	var text strings.Builder
	for i, p := range all {
		if x.s.opts.CompletionUnits(x.req.Model, text.String()+p) > limit {
			return all[:i], true
		}
		text.WriteString(p)
	}
	return all, false
}

// fimUsage is the usage of a completions answer of text.
func (x *exchange) fimUsage(text string) *openai.UsageJSON {
	prompt := int64(len(x.fim.prompt()) + len(x.fim.Suffix))
	if x.s.opts.CompletionsPromptUnits != nil {
		prompt = x.s.opts.CompletionsPromptUnits(x.rec.Body)
	}
	completion := x.s.opts.CompletionUnits(x.req.Model, text)
	if x.plan.Kind == KindFalseUsage {
		completion = 0
	}
	return &openai.UsageJSON{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion}
}

// completions answers a completions request, streamed or whole.
func (x *exchange) completions() {
	parts, cut := x.fimParts()
	finish := "stop"
	if cut {
		finish = "length"
	}
	if x.plan.Kind == KindCut {
		parts = parts[:min(x.plan.CutAfter, len(parts))]
	}
	if !x.req.Stream {
		x.fimComplete(parts, finish)
		return
	}
	x.startStream()
	includeUsage := x.rec.IncludeUsage && x.plan.Kind != KindNoUsage
	created := time.Now().Unix()
	chunk := func(text string, finish *string, usage json.RawMessage) bool {
		c := openai.TextCompletionJSON{ID: x.fimID(), Object: "text_completion", Created: created, Model: x.req.Model,
			Choices: []openai.TextChoiceJSON{{Text: text, FinishReason: finish}}, Usage: usage}
		if finish == nil && usage != nil {
			c.Choices = []openai.TextChoiceJSON{}
		}
		if includeUsage && usage == nil {
			c.Usage = nullUsage
		}
		return x.data(c, text != "")
	}
	for _, p := range parts {
		if !x.beforePart() || !chunk(p, nil, nil) {
			return
		}
	}
	if x.plan.Kind == KindCut {
		panic(http.ErrAbortHandler)
	}
	if !chunk("", &finish, nil) || !x.pause(x.plan.UsageDelay) {
		return
	}
	if includeUsage {
		u, _ := json.Marshal(x.fimUsage(strings.Join(parts, "")))
		if !chunk("", nil, u) {
			return
		}
	}
	x.write([]byte("data: [DONE]\n\n"), false)
}

func (x *exchange) fimComplete(parts []string, finish string) {
	for range parts {
		if !x.beforePart() {
			return
		}
	}
	text := strings.Join(parts, "")
	resp := openai.TextCompletionJSON{ID: x.fimID(), Object: "text_completion", Created: time.Now().Unix(), Model: x.req.Model,
		Choices: []openai.TextChoiceJSON{{Text: text, FinishReason: &finish}}}
	if x.plan.Kind != KindNoUsage {
		resp.Usage, _ = json.Marshal(x.fimUsage(text))
	}
	x.whole(resp)
}

func (x *exchange) fimID() string { return fmt.Sprintf("cmpl-demo-%d", x.rec.Seq) }

// data writes one data event of v.
func (x *exchange) data(v any, content bool) bool {
	b, _ := json.Marshal(v)
	return x.write([]byte("data: "+string(b)+"\n\n"), content)
}

// whole writes v as a non-streaming answer (wholeBody).
func (x *exchange) whole(v any) {
	b, _ := json.Marshal(v)
	x.wholeBody(b)
}

// wholeBody writes a non-streaming answer's JSON; a cut plan sends half of
// it and closes the connection.
func (x *exchange) wholeBody(b []byte) {
	x.w.Header().Set("Content-Type", "application/json")
	x.w.WriteHeader(http.StatusOK)
	if x.plan.Kind == KindCut {
		x.write(b[:len(b)/2], true)
		panic(http.ErrAbortHandler)
	}
	x.write(b, true)
}

// embedRequest is the part of an embeddings request the demo reads.
type embedRequest struct {
	Model          string          `json:"model"`
	Input          json.RawMessage `json:"input"`
	Dimensions     int             `json:"dimensions"`
	EncodingFormat string          `json:"encoding_format"`
}

// inputs are the request's inputs, each as text or as token ids.
func (e *embedRequest) inputs() (texts []string, tokens [][]int64) {
	var one string
	if json.Unmarshal(e.Input, &one) == nil {
		return []string{one}, nil
	}
	if json.Unmarshal(e.Input, &texts) == nil {
		return texts, nil
	}
	var ids []int64
	if json.Unmarshal(e.Input, &ids) == nil {
		return nil, [][]int64{ids}
	}
	_ = json.Unmarshal(e.Input, &tokens)
	return nil, tokens
}

// DefaultDimensions is the length of the demo's embeddings when the
// request does not ask for one.
const DefaultDimensions = 16

func (s *Server) embeddingsHandler(w http.ResponseWriter, r *http.Request) {
	var req embedRequest
	body, ok := readRequest(w, r, func(b []byte) error { return json.Unmarshal(b, &req) }, chatRefusal)
	if !ok {
		return
	}
	texts, _ := req.inputs()
	last := ""
	if len(texts) > 0 {
		last = texts[len(texts)-1]
	}
	x := s.begin(w, r, body, &chatRequest{Model: req.Model}, last, false)
	if x == nil {
		return
	}
	defer s.done(x)
	x.embed = &req
	x.run()
}

// embeddings answers an embeddings request: one deterministic unit vector
// an input, seeded by its text or token ids.
func (x *exchange) embeddings() {
	texts, tokens := x.embed.inputs()
	seeds := append([]string(nil), texts...)
	var prompt int64
	for _, t := range texts {
		prompt += int64(len(t))
	}
	for _, ids := range tokens {
		seeds = append(seeds, fmt.Sprint(ids))
		prompt += int64(len(ids))
	}
	if x.s.opts.EmbeddingsPromptUnits != nil {
		prompt = x.s.opts.EmbeddingsPromptUnits(x.rec.Body)
	}
	if !x.beforePart() {
		return
	}
	dims := x.embed.Dimensions
	if dims <= 0 {
		dims = DefaultDimensions
	}
	resp := openai.EmbeddingsJSON{Object: "list", Model: x.req.Model, Data: []openai.EmbeddingJSON{}}
	for i, seed := range seeds {
		v := Embedding(seed, dims)
		var emb any = v
		if x.embed.EncodingFormat == "base64" {
			emb = base64Floats(v)
		}
		resp.Data = append(resp.Data, openai.EmbeddingJSON{Object: "embedding", Index: i, Embedding: emb})
	}
	if x.plan.Kind != KindNoUsage {
		if x.plan.Kind == KindFalseUsage {
			prompt = prompt*2 + 1 // contradicts the input
		}
		resp.Usage = &openai.EmbeddingsUsageJSON{PromptTokens: prompt, TotalTokens: prompt}
	}
	x.whole(resp)
}

// Embedding is the demo's embedding of seed: dims numbers drawn from its
// FNV hash, scaled to unit length. The same seed always gives the same
// vector.
func Embedding(seed string, dims int) []float32 {
	h := fnv.New64a()
	h.Write([]byte(seed))
	state := h.Sum64()
	v := make([]float32, dims)
	var norm float64
	for i := range v {
		state = state*6364136223846793005 + 1442695040888963407 // a linear congruential step
		f := float64(int64(state>>11))/float64(1<<52) - 1
		v[i] = float32(f)
		norm += f * f
	}
	if norm > 0 {
		for i := range v {
			v[i] = float32(float64(v[i]) / math.Sqrt(norm))
		}
	}
	return v
}

// base64Floats is v as OpenAI's base64 encoding: little-endian float32s.
func base64Floats(v []float32) string {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return base64.StdEncoding.EncodeToString(b)
}
