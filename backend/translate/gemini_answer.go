package translate

import (
	"sort"

	"github.com/quotagate/quotagate/backend/gemini"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/openai"
)

// geminiUsage turns chat usage into Gemini's: the reasoning tokens are the
// thoughts, the rest of the completion the candidates, and the cached
// tokens stay inside the prompt (as Gemini counts them); nil without
// usage.
func geminiUsage(u *openai.Usage) *gemini.UsageMetadata {
	if u == nil {
		return nil
	}
	thoughts := min(max(u.ReasoningTokens, 0), u.CompletionTokens)
	return &gemini.UsageMetadata{PromptTokenCount: u.PromptTokens, CandidatesTokenCount: u.CompletionTokens - thoughts,
		ThoughtsTokenCount: thoughts, CachedContentTokenCount: min(max(u.CachedTokens, 0), u.PromptTokens),
		TotalTokenCount: u.PromptTokens + u.CompletionTokens}
}

// finishReason maps a chat finish_reason onto Gemini's.
func finishReason(finish string) string {
	switch finish {
	case "length":
		return gemini.FinishMaxTokens
	case "content_filter":
		return gemini.FinishSafety
	}
	return gemini.FinishStop // stop, tool_calls (Gemini finishes a call with STOP)
}

func modelAnswer(parts []gemini.AnswerPart, finish string, u *gemini.UsageMetadata, model, id string) gemini.Response {
	if parts == nil {
		parts = []gemini.AnswerPart{}
	}
	return gemini.Response{Candidates: []gemini.Candidate{{Content: gemini.AnswerContent{Parts: parts, Role: "model"},
		FinishReason: finish}}, UsageMetadata: u, ModelVersion: model, ResponseID: id}
}

// callPart is a chat tool call as a functionCall part; arguments that are
// not a JSON object (a model's malformed call) become {}.
func callPart(id, name, args string) gemini.AnswerPart {
	return gemini.AnswerPart{FunctionCall: &gemini.FunctionCall{ID: id, Name: name, Args: toolInput(args)}}
}

// GeminiFromChat translates a whole chat.completion body into a Gemini
// GenerateContentResponse for the model the client asked for. Reasoning
// text becomes a thought part when showThoughts (the client asked for
// thoughts); tool calls become functionCall parts.
func GeminiFromChat(body []byte, model, id string, showThoughts bool) ([]byte, error) {
	c, usage, err := firstChoice(body, "gemini")
	if err != nil {
		return nil, err
	}
	var parts []gemini.AnswerPart
	if r := c.Message.ReasoningContent; showThoughts && r != nil && *r != "" {
		parts = append(parts, gemini.AnswerPart{Text: r, Thought: true})
	}
	if t := c.Message.Content; t != nil && *t != "" {
		parts = append(parts, gemini.AnswerPart{Text: t})
	}
	for _, tc := range c.Message.ToolCalls {
		parts = append(parts, callPart(tc.ID, tc.Function.Name, tc.Function.Arguments))
	}
	return gemini.Marshal(modelAnswer(parts, finishReason(c.FinishReason), geminiUsage(usage), model, id))
}

// GeminiStream turns a chat.completion.chunk stream into Gemini chunks:
// one chunk of text (and thought) parts per chat chunk that has any, then
// — from End, which the door writes once the outcome is committed — the
// final chunk with the function calls (Gemini sends each call whole, chat
// streams its arguments in pieces), the finishReason and the
// usageMetadata. Not safe for concurrent use.
type GeminiStream struct {
	model, id    string
	showThoughts bool

	calls map[int]*openai.ToolCallJSON // chat tool-call index → the call so far
	chatTail
}

// NewGeminiStream starts a translation answering model, as response id.
func NewGeminiStream(model, id string, showThoughts bool) *GeminiStream {
	return &GeminiStream{model: model, id: id, showThoughts: showThoughts, calls: map[int]*openai.ToolCallJSON{}}
}

// Chunk translates one chat chunk's data payload ("[DONE]" gives nothing:
// End closes the stream). The last usage object seen is kept for End.
func (t *GeminiStream) Chunk(payload []byte) ([]byte, error) {
	a, err := t.read(payload, "gemini")
	if a == nil {
		return nil, err
	}
	var parts []gemini.AnswerPart
	for _, c := range a.Choices {
		if c.Index != 0 {
			continue
		}
		if c.Delta != nil {
			parts = t.delta(parts, c.Delta)
		}
		t.finished(c)
	}
	if len(parts) == 0 {
		return nil, nil
	}
	return gemini.Chunk(modelAnswer(parts, "", nil, t.model, t.id)), nil
}

// delta appends one delta's thought and text parts, and gathers its tool
// call pieces for End.
func (t *GeminiStream) delta(parts []gemini.AnswerPart, d *openai.DeltaJSON) []gemini.AnswerPart {
	if r := d.ReasoningContent; t.showThoughts && r != nil && *r != "" {
		parts = append(parts, gemini.AnswerPart{Text: r, Thought: true})
	}
	if s := d.Content; s != nil && *s != "" {
		parts = append(parts, gemini.AnswerPart{Text: s})
	}
	for i, tc := range d.ToolCalls {
		ci := tc.Slot(i)
		call, seen := t.calls[ci]
		if !seen {
			call = &openai.ToolCallJSON{ID: tc.ID}
			t.calls[ci] = call
		}
		call.Function.Name += tc.Function.Name
		call.Function.Arguments += tc.Function.Arguments
	}
	return parts
}

// End returns the final chunk: the function calls in the order chat
// numbered them (an empty text part when there are none, as Google writes
// a final chunk), the finishReason and the usage the upstream reported
// (none when it sent none: that run keeps its hold).
func (t *GeminiStream) End() []byte {
	idx := make([]int, 0, len(t.calls))
	for i := range t.calls {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	var parts []gemini.AnswerPart
	for _, i := range idx {
		c := t.calls[i]
		parts = append(parts, callPart(c.ID, c.Function.Name, c.Function.Arguments))
	}
	if len(parts) == 0 {
		empty := ""
		parts = []gemini.AnswerPart{{Text: &empty}}
	}
	return gemini.Chunk(modelAnswer(parts, finishReason(t.finish), geminiUsage(t.usage), t.model, t.id))
}

// GeminiErrorBody is the Google-shaped body for err answered with HTTP
// status: {"error":{"code":status,"message":"… (quotagate: code)","status":…}}.
func GeminiErrorBody(status int, err error) []byte {
	return gemini.ErrorBody(status, gemini.StatusFor(status), gemini.ErrorMessage(ledger.ErrorCode(err), ledger.ErrorMessage(err)))
}

// GeminiErrorEvent is the in-stream error event for err (a cut stream:
// UNAVAILABLE, with upstream_interrupted in the message).
func GeminiErrorEvent(err error) []byte {
	code := ledger.ErrorCode(err)
	status := ledger.HTTPStatus(code)
	return gemini.ErrorEvent(status, gemini.StatusFor(status), gemini.ErrorMessage(code, ledger.ErrorMessage(err)))
}
