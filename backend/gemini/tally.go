package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/quotagate/quotagate/backend/wire"
)

// Usage is the evidence of a Gemini answer, its usageMetadata.
type Usage struct {
	PromptTokenCount        int64
	CandidatesTokenCount    int64
	ThoughtsTokenCount      int64
	ToolUsePromptTokenCount int64
	CachedContentTokenCount int64
	TotalTokenCount         int64
	HasTotal                bool
}

// PromptTokens is what the provider read: promptTokenCount (the cached
// tokens are part of it) + toolUsePromptTokenCount.
func (u Usage) PromptTokens() int64 { return u.PromptTokenCount + u.ToolUsePromptTokenCount }

// OutputTokens is what the provider generated: candidatesTokenCount +
// thoughtsTokenCount.
func (u Usage) OutputTokens() int64 { return u.CandidatesTokenCount + u.ThoughtsTokenCount }

// ErrBadUsage marks a usageMetadata that is present but not evidence.
var ErrBadUsage = errors.New("usageMetadata is not valid evidence")

type wireUsage struct {
	PromptTokenCount        json.RawMessage `json:"promptTokenCount"`
	CandidatesTokenCount    json.RawMessage `json:"candidatesTokenCount"`
	ThoughtsTokenCount      json.RawMessage `json:"thoughtsTokenCount"`
	ToolUsePromptTokenCount json.RawMessage `json:"toolUsePromptTokenCount"`
	CachedContentTokenCount json.RawMessage `json:"cachedContentTokenCount"`
	TotalTokenCount         json.RawMessage `json:"totalTokenCount"`
}

// usage reads a usageMetadata: every figure optional (Google leaves out a
// zero), none negative or fractional, and the cached tokens within the
// prompt.
func (w *wireUsage) usage() (Usage, error) {
	var u Usage
	figures := []struct {
		name string
		raw  json.RawMessage
		to   *int64
	}{
		{"promptTokenCount", w.PromptTokenCount, &u.PromptTokenCount},
		{"candidatesTokenCount", w.CandidatesTokenCount, &u.CandidatesTokenCount},
		{"thoughtsTokenCount", w.ThoughtsTokenCount, &u.ThoughtsTokenCount},
		{"toolUsePromptTokenCount", w.ToolUsePromptTokenCount, &u.ToolUsePromptTokenCount},
		{"cachedContentTokenCount", w.CachedContentTokenCount, &u.CachedContentTokenCount},
		{"totalTokenCount", w.TotalTokenCount, &u.TotalTokenCount},
	}
	for _, f := range figures {
		if len(f.raw) == 0 || wire.IsNull(f.raw) {
			continue
		}
		n, err := wire.Count(f.raw)
		if err != nil {
			return u, fmt.Errorf("%w: %s: %v", ErrBadUsage, f.name, err)
		}
		*f.to = n
	}
	u.HasTotal = len(w.TotalTokenCount) > 0 && !wire.IsNull(w.TotalTokenCount)
	if u.CachedContentTokenCount > u.PromptTokenCount {
		return u, fmt.Errorf("%w: cachedContentTokenCount %d is above promptTokenCount %d", ErrBadUsage, u.CachedContentTokenCount, u.PromptTokenCount)
	}
	return u, nil
}

// notBelow reports the first figure of u that is below prev's.
func (u Usage) notBelow(prev Usage) error {
	pairs := []struct {
		name      string
		now, then int64
	}{
		{"promptTokenCount", u.PromptTokenCount, prev.PromptTokenCount},
		{"candidatesTokenCount", u.CandidatesTokenCount, prev.CandidatesTokenCount},
		{"thoughtsTokenCount", u.ThoughtsTokenCount, prev.ThoughtsTokenCount},
		{"toolUsePromptTokenCount", u.ToolUsePromptTokenCount, prev.ToolUsePromptTokenCount},
		{"cachedContentTokenCount", u.CachedContentTokenCount, prev.CachedContentTokenCount},
	}
	for _, p := range pairs {
		if p.now < p.then {
			return fmt.Errorf("usageMetadata's %s went down from %d to %d", p.name, p.then, p.now)
		}
	}
	return nil
}

// wireResponse is a GenerateContentResponse (or an error) as read.
type wireResponse struct {
	Candidates []struct {
		Content *struct {
			Parts []struct {
				Text         *string   `json:"text"`
				FunctionCall *wireCall `json:"functionCall"`
			} `json:"parts"`
		} `json:"content"`
		FinishReason string `json:"finishReason"`
	} `json:"candidates"`
	UsageMetadata *wireUsage `json:"usageMetadata"`
	Error         *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// read parses one response object: its text, finish reason, usage and
// error message.
func read(data []byte) (w wireResponse, text, finish string, err error) {
	d := bytes.TrimSpace(data)
	if len(d) == 0 || d[0] != '{' {
		return w, "", "", fmt.Errorf("gemini: a response is not a JSON object: %.60q", d)
	}
	if err := json.Unmarshal(d, &w); err != nil {
		return w, "", "", fmt.Errorf("gemini: a response does not parse: %w", err)
	}
	var b strings.Builder
	for _, c := range w.Candidates {
		if c.FinishReason != "" && finish == "" {
			finish = c.FinishReason
		}
		if c.Content == nil {
			continue
		}
		for _, p := range c.Content.Parts {
			if p.Text != nil {
				b.WriteString(*p.Text)
			}
			if p.FunctionCall != nil {
				b.WriteString(p.FunctionCall.Name)
				b.Write(wire.Compact(p.FunctionCall.Args))
			}
		}
	}
	return w, b.String(), finish, nil
}

// Tally reads a native streamGenerateContent stream, chunk by chunk, and
// gathers what the gateway relayed and the usage evidence: the last
// chunk's usageMetadata, the chunk whose candidate carries finishReason.
// A chunk that does not parse, a figure that goes down, a final chunk
// without usageMetadata, data after the final chunk and an error chunk
// are each a problem, and a problem keeps the hold. The zero value is
// ready; not safe for concurrent use.
type Tally struct {
	text     strings.Builder
	last     *Usage // the latest usageMetadata seen
	final    bool   // the chunk with finishReason arrived
	finalUse bool   // … and carried usageMetadata
	problem  wire.Problem
	// FinishReason is the final chunk's finishReason.
	FinishReason string
	// UpstreamError is the message of an error chunk the upstream sent.
	UpstreamError string
}

// Observe takes one chunk's data. It returns the text the chunk adds and
// whether it is the final chunk (its candidate carries finishReason); an
// error means the chunk says something the tally cannot account for
// (recorded: the verdict will keep the hold). An error chunk's error wraps
// ErrUpstream.
func (t *Tally) Observe(data []byte) (text string, final bool, err error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return "", false, nil
	}
	w, text, finish, err := read(data)
	if err != nil {
		return "", false, t.problem.Fail("%v", err)
	}
	if w.Error != nil {
		t.UpstreamError = w.Error.Message
		if t.UpstreamError == "" {
			t.UpstreamError = "(no message)"
		}
		return "", false, t.problem.Fail("%w: %s", ErrUpstream, t.UpstreamError)
	}
	t.text.WriteString(text)
	if t.final {
		return text, false, t.problem.Fail("a chunk arrived after the one with finishReason")
	}
	if finish != "" {
		t.final, t.FinishReason = true, finish
	}
	if err := t.usage(w.UsageMetadata, finish != ""); err != nil {
		return text, t.final, err
	}
	return text, t.final, nil
}

// ErrUpstream marks an error chunk.
var ErrUpstream = errors.New("the upstream sent an error chunk")

// usage takes a chunk's usageMetadata: its figures may only grow, and the
// final chunk must carry one.
func (t *Tally) usage(w *wireUsage, final bool) error {
	if w == nil {
		if final {
			return t.problem.Fail("the chunk with finishReason carries no usageMetadata")
		}
		return nil
	}
	u, err := w.usage()
	if err != nil {
		return t.problem.Fail("%v", err)
	}
	if t.last != nil {
		if err := u.notBelow(*t.last); err != nil {
			return t.problem.Fail("%v", err)
		}
	}
	t.last = &u
	t.finalUse = final
	return nil
}

// Output is the generated text relayed so far: text and thoughts, function
// names and their args JSON.
func (t *Tally) Output() string { return t.text.String() }

// Final reports whether the chunk with finishReason arrived.
func (t *Tally) Final() bool { return t.final }

// Problem is the first thing the stream said that cannot be accounted for,
// or "".
func (t *Tally) Problem() string { return t.problem.String() }

// Usage returns the final chunk's usage; ok is false until the chunk with
// finishReason arrived carrying usageMetadata.
func (t *Tally) Usage() (Usage, bool) {
	if !t.final || !t.finalUse || t.last == nil {
		return Usage{}, false
	}
	return *t.last, true
}

// Answer is what a whole (non-streaming) generateContent response says.
type Answer struct {
	// Text is the generated text: text and thoughts, function names and
	// the compact JSON of their args.
	Text         string
	Usage        *Usage // nil when the body has none
	FinishReason string
}

// ParseResponse parses a non-streaming generateContent body. A
// usageMetadata that is present but not evidence gives an error wrapping
// ErrBadUsage, with the text.
func ParseResponse(body []byte) (Answer, error) {
	w, text, finish, err := read(body)
	if err != nil {
		return Answer{}, err
	}
	if w.Error != nil {
		return Answer{}, fmt.Errorf("gemini: the body is an error: %s", w.Error.Message)
	}
	a := Answer{Text: text, FinishReason: finish}
	if w.UsageMetadata == nil {
		return a, nil
	}
	u, err := w.UsageMetadata.usage()
	if err != nil {
		return a, err
	}
	a.Usage = &u
	return a, nil
}
