package translate

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/quotagate/quotagate/backend/gemini"
	"github.com/quotagate/quotagate/backend/wire"
)

// GeminiToChat translates a Gemini generateContent request into a
// chat-completions body for an upstream that does not speak Gemini. What
// has no chat equivalent is dropped: safetySettings, cachedContent, tools
// other than functionDeclarations (googleSearch, codeExecution, …), topK,
// thought parts of earlier turns, and parts that are neither text, an
// image, a function call nor a function response. Several text parts
// become several chat text parts, so the chat body carries exactly the
// bytes the reserve counted. Function calls without an id get one, which
// the matching function response (the next with the same name) reuses.
// A streaming request always asks for the usage chunk, the settlement
// evidence.
func GeminiToChat(r *gemini.Request, o ChatOptions) ([]byte, error) {
	g := r.Generation
	if g.CandidateCount > 1 {
		return nil, invalid("candidateCount %d: an upstream that does not speak Gemini is asked for one candidate only", g.CandidateCount)
	}
	b := messagesChat{Model: r.Model, MaxTokens: g.MaxOutputTokens, Stream: r.Stream,
		Stop: g.StopSequences, Temperature: g.Temperature, TopP: g.TopP}
	if r.Stream {
		b.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	if r.System != nil {
		b.Messages = append(b.Messages, messagesChatMessage{Role: "system", Content: geminiContent(r.System.Parts)})
	}
	ids := callIDs{pending: map[string][]string{}}
	for i, c := range r.Contents {
		b.Messages = append(b.Messages, ids.turn(i, c)...)
	}
	for _, t := range r.Tools {
		for _, d := range t.Functions {
			b.Tools = append(b.Tools, messagesChatTool{Type: "function",
				Function: chatToolFunc{Name: d.Name, Description: d.Description, Parameters: chatSchema(d.Schema, d.OpenAPI)}})
		}
	}
	b.ToolChoice = geminiToolChoice(r.ToolConfig, len(b.Tools) > 0)
	geminiThinking(&b, g.Thinking, o)
	rf, err := geminiResponseFormat(g)
	if err != nil {
		return nil, err
	}
	b.ResponseFormat = rf
	out, err := wire.Marshal(b)
	if err != nil {
		return nil, fmt.Errorf("gemini: encode chat body: %w", err)
	}
	return out, nil
}

// geminiContent is one text part as a string, else the text and image
// parts as chat parts.
func geminiContent(parts []gemini.Part) any {
	if len(parts) == 1 && parts[0].Kind == gemini.PartText && !parts[0].Thought {
		return parts[0].Text
	}
	out := make([]messagesChatPart, 0, len(parts))
	for _, p := range parts {
		switch {
		case p.Kind == gemini.PartText && !p.Thought:
			t := p.Text
			out = append(out, messagesChatPart{Type: "text", Text: &t})
		case p.Kind == gemini.PartInlineData && p.Image():
			out = append(out, messagesChatPart{Type: "image_url", ImageURL: &imageURL{URL: "data:" + p.MimeType + ";base64," + p.Data}})
		case p.Kind == gemini.PartFileData && p.Image():
			out = append(out, messagesChatPart{Type: "image_url", ImageURL: &imageURL{URL: p.Data}})
		}
	}
	return out
}

// callIDs pairs function calls with their responses: Gemini may leave out
// ids (it pairs by name and order), chat needs them.
type callIDs struct {
	pending map[string][]string // function name → ids of calls not yet answered, oldest first
}

// turn translates one turn. A user turn's function responses become "tool"
// messages first (chat wants them right after the assistant's calls), then
// the rest of the turn as a user message; a model turn's function calls
// become its tool_calls.
func (ids *callIDs) turn(i int, c gemini.Content) []messagesChatMessage {
	role := "user"
	if c.Role == "model" {
		role = "assistant"
	}
	var out []messagesChatMessage
	var rest []gemini.Part
	var calls []chatCall
	for j, p := range c.Parts {
		switch p.Kind {
		case gemini.PartFunctionResponse:
			out = append(out, messagesChatMessage{Role: "tool", ToolCallID: ids.answer(p),
				Content: string(wire.Compact(p.Response))})
		case gemini.PartFunctionCall:
			id := p.ID
			if id == "" {
				id = "call_" + strconv.Itoa(i) + "_" + strconv.Itoa(j)
			}
			ids.pending[p.Name] = append(ids.pending[p.Name], id)
			calls = append(calls, chatCall{ID: id, Type: "function",
				Function: chatFunction{Name: p.Name, Arguments: string(wire.Compact(p.Args))}})
		case gemini.PartText, gemini.PartInlineData, gemini.PartFileData:
			if !p.Thought {
				rest = append(rest, p)
			}
		}
	}
	if len(rest) == 0 && len(calls) == 0 {
		if len(out) == 0 { // a turn of nothing translatable still takes its place
			out = append(out, messagesChatMessage{Role: role, Content: ""})
		}
		return out
	}
	msg := messagesChatMessage{Role: role, ToolCalls: calls}
	if len(rest) > 0 {
		msg.Content = geminiContent(rest)
	}
	return append(out, msg)
}

// answer is the id of the call a function response answers: its own, else
// the oldest unanswered call of that name, else one made from the name.
func (ids *callIDs) answer(p gemini.Part) string {
	q := ids.pending[p.Name]
	if p.ID != "" {
		for k, id := range q {
			if id == p.ID {
				ids.pending[p.Name] = append(q[:k:k], q[k+1:]...)
				break
			}
		}
		return p.ID
	}
	if len(q) == 0 {
		return "call_" + p.Name
	}
	ids.pending[p.Name] = q[1:]
	return q[0]
}

// chatSchema is a declaration's parameters as chat's JSON Schema: Google's
// OpenAPI subset writes type names in upper case ("OBJECT"), which JSON
// Schema writes in lower case; no parameters is an empty object schema.
func chatSchema(schema json.RawMessage, openAPI bool) json.RawMessage {
	if schema == nil {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	if !openAPI {
		return schema
	}
	var v any
	if json.Unmarshal(schema, &v) != nil {
		return schema
	}
	lowerTypes(v)
	b, err := json.Marshal(v)
	if err != nil {
		return schema
	}
	return b
}

func lowerTypes(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && k == "type" {
				x[k] = strings.ToLower(s)
				continue
			}
			lowerTypes(e)
		}
	case []any:
		for _, e := range x {
			lowerTypes(e)
		}
	}
}

// geminiToolChoice maps functionCallingConfig onto chat's tool_choice: ANY
// with one allowed function names it.
func geminiToolChoice(c *gemini.ToolConfig, haveTools bool) any {
	if c == nil || (!haveTools && c.Mode != "NONE") {
		return nil
	}
	switch c.Mode {
	case "ANY":
		if len(c.AllowedFunctionNames) == 1 {
			return map[string]any{"type": "function", "function": map[string]string{"name": c.AllowedFunctionNames[0]}}
		}
		return "required"
	case "NONE":
		return "none"
	case "AUTO", "VALIDATED":
		return "auto"
	}
	return nil
}

// geminiThinking maps thinkingConfig onto the upstream's reasoning switch.
func geminiThinking(b *messagesChat, t *gemini.ThinkingConfig, o ChatOptions) {
	if t == nil {
		return
	}
	switch o.Reasoning {
	case ReasoningEffort:
		if t.On() {
			b.ReasoningEffort = geminiEffort(t)
		}
	case ReasoningObject:
		b.Thinking = &chatThinking{Type: "disabled"}
		if t.On() {
			b.Thinking.Type = "enabled"
		}
	}
}

// geminiEffort maps a thinking level or budget onto OpenAI's three efforts.
func geminiEffort(t *gemini.ThinkingConfig) string {
	switch strings.ToUpper(t.Level) {
	case "MINIMAL", "LOW":
		return "low"
	case "MEDIUM":
		return "medium"
	case "HIGH":
		return "high"
	}
	if !t.HasBudget || t.Budget < 0 {
		return "medium" // dynamic thinking
	}
	return budgetEffort(t.Budget)
}

// geminiResponseFormat maps responseMimeType application/json (with its
// schema, when given) onto chat's response_format.
func geminiResponseFormat(g gemini.GenerationConfig) (json.RawMessage, error) {
	if g.ResponseMimeType != "application/json" {
		return nil, nil
	}
	schema := g.ResponseJSONSchema
	if schema == nil && g.ResponseSchema != nil {
		schema = chatSchema(g.ResponseSchema, true)
	}
	var v any = map[string]any{"type": "json_object"}
	if schema != nil {
		v = map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "output", "schema": schema}}
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("gemini: encode response_format: %w", err)
	}
	return out, nil
}
