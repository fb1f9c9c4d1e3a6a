package translate

import (
	"encoding/json"
	"fmt"

	"github.com/quotagate/quotagate/backend/anthropic"
	"github.com/quotagate/quotagate/backend/wire"
)

// Reasoning switches a chat-completions upstream may have, for `thinking`.
const (
	ReasoningNone   = ""                 // no switch: thinking is dropped
	ReasoningEffort = "reasoning_effort" // OpenAI: "low" | "medium" | "high"
	ReasoningObject = "thinking"         // Volcengine Ark / DeepSeek: {"type":"enabled"|"disabled"}
)

// ChatOptions says how to translate for one upstream.
type ChatOptions struct {
	// Reasoning names the upstream's reasoning switch (Reasoning*); the
	// client's thinking is mapped onto it, or dropped when there is none.
	Reasoning string
}

// Chat-completions wire shapes, only as far as the translation writes them.
type (
	messagesChat struct {
		Model             string                `json:"model"`
		Messages          []messagesChatMessage `json:"messages"`
		MaxTokens         int64                 `json:"max_tokens,omitempty"`
		Stream            bool                  `json:"stream,omitempty"`
		StreamOptions     *streamOptions        `json:"stream_options,omitempty"`
		Tools             []messagesChatTool    `json:"tools,omitempty"`
		ToolChoice        any                   `json:"tool_choice,omitempty"`
		ParallelToolCalls *bool                 `json:"parallel_tool_calls,omitempty"`
		Stop              []string              `json:"stop,omitempty"`
		Temperature       json.RawMessage       `json:"temperature,omitempty"`
		TopP              json.RawMessage       `json:"top_p,omitempty"`
		ReasoningEffort   string                `json:"reasoning_effort,omitempty"`
		Thinking          *chatThinking         `json:"thinking,omitempty"`
		ResponseFormat    json.RawMessage       `json:"response_format,omitempty"`
	}
	streamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	}
	chatThinking struct {
		Type string `json:"type"`
	}
	messagesChatMessage struct {
		Role       string     `json:"role"`
		Content    any        `json:"content"` // string, []messagesChatPart or nil (an assistant turn of tool calls only)
		ToolCalls  []chatCall `json:"tool_calls,omitempty"`
		ToolCallID string     `json:"tool_call_id,omitempty"`
	}
	messagesChatPart struct {
		Type     string    `json:"type"`
		Text     *string   `json:"text,omitempty"`
		ImageURL *imageURL `json:"image_url,omitempty"`
	}
	imageURL struct {
		URL string `json:"url"`
	}
	chatCall struct {
		ID       string       `json:"id"`
		Type     string       `json:"type"`
		Function chatFunction `json:"function"`
	}
	chatFunction struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	messagesChatTool struct {
		Type     string       `json:"type"`
		Function chatToolFunc `json:"function"`
	}
	chatToolFunc struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
	}
)

// MessagesToChat translates a Messages request into a chat-completions body for an
// upstream that does not speak Messages. What has no chat equivalent is
// dropped: cache_control, unknown tool keys (defer_loading, …) and server
// tools, thinking blocks of earlier turns, top_k, metadata,
// context_management, output_config.effort, and blocks of unknown types.
// Texts are never joined with separators: several blocks become several
// text parts, so the chat body carries exactly the bytes Segments counts.
// A streaming request always asks for the usage chunk, the settlement
// evidence.
func MessagesToChat(r *anthropic.Request, o ChatOptions) ([]byte, error) {
	b := messagesChat{Model: r.Model, MaxTokens: r.MaxTokens, Stream: r.Stream,
		Stop: r.StopSequences, Temperature: r.Temperature, TopP: r.TopP}
	if r.Stream {
		b.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	if len(r.System) > 0 {
		b.Messages = append(b.Messages, messagesChatMessage{Role: "system", Content: textContent(r.System)})
	}
	for _, m := range r.Messages {
		b.Messages = append(b.Messages, chatTurn(m)...)
	}
	for _, t := range r.Tools {
		if t.Custom() {
			b.Tools = append(b.Tools, messagesChatTool{Type: "function",
				Function: chatToolFunc{Name: t.Name, Description: t.Description, Parameters: t.InputSchema}})
		}
	}
	if tc := r.ToolChoice; tc != nil && (len(b.Tools) > 0 || tc.Type == "none") {
		switch tc.Type {
		case "auto":
			b.ToolChoice = "auto"
		case "any":
			b.ToolChoice = "required"
		case "none":
			b.ToolChoice = "none"
		case "tool":
			b.ToolChoice = map[string]any{"type": "function", "function": map[string]string{"name": tc.Name}}
		}
		if tc.DisableParallelToolUse && len(b.Tools) > 0 {
			f := false
			b.ParallelToolCalls = &f
		}
	}
	if r.Thinking != nil {
		switch o.Reasoning {
		case ReasoningEffort:
			if r.Thinking.On() {
				b.ReasoningEffort = effort(r.Thinking)
			}
		case ReasoningObject:
			b.Thinking = &chatThinking{Type: "disabled"}
			if r.Thinking.On() {
				b.Thinking.Type = "enabled"
			}
		}
	}
	if rf, err := responseFormat(r.OutputConfig); err != nil {
		return nil, err
	} else if rf != nil {
		b.ResponseFormat = rf
	}
	out, err := wire.Marshal(b)
	if err != nil {
		return nil, fmt.Errorf("anthropic: encode chat body: %w", err)
	}
	return out, nil
}

// effort maps a thinking budget onto OpenAI's three efforts.
func effort(t *anthropic.Thinking) string {
	if t.Type == "adaptive" {
		return "medium"
	}
	return budgetEffort(t.BudgetTokens)
}

// budgetEffort maps a thinking budget in tokens onto OpenAI's three
// efforts: the one scale for every door that states thinking as a budget.
func budgetEffort(budget int64) string {
	switch {
	case budget < 4096:
		return "low"
	case budget < 16384:
		return "medium"
	}
	return "high"
}

// responseFormat maps output_config.format ({"type":"json_schema","schema":…})
// onto chat's response_format.
func responseFormat(raw json.RawMessage) (json.RawMessage, error) {
	if raw == nil {
		return nil, nil
	}
	var oc struct {
		Format *struct {
			Type   string          `json:"type"`
			Schema json.RawMessage `json:"schema"`
		} `json:"format"`
	}
	if json.Unmarshal(raw, &oc) != nil || oc.Format == nil || oc.Format.Type != "json_schema" || oc.Format.Schema == nil {
		return nil, nil
	}
	out, err := json.Marshal(map[string]any{"type": "json_schema",
		"json_schema": map[string]any{"name": "output", "schema": oc.Format.Schema, "strict": true}})
	if err != nil {
		return nil, fmt.Errorf("anthropic: encode response_format: %w", err)
	}
	return out, nil
}

// textContent is one text block as a string, several as text parts.
func textContent(blocks []anthropic.Block) any {
	if len(blocks) == 1 && blocks[0].Type == anthropic.BlockText {
		return blocks[0].Text
	}
	parts := make([]messagesChatPart, 0, len(blocks))
	for _, b := range blocks {
		if p, ok := chatPartOf(b); ok {
			parts = append(parts, p)
		}
	}
	return parts
}

func chatPartOf(b anthropic.Block) (messagesChatPart, bool) {
	switch b.Type {
	case anthropic.BlockText:
		t := b.Text
		return messagesChatPart{Type: "text", Text: &t}, true
	case anthropic.BlockImage:
		switch b.Source.Type {
		case "base64":
			return messagesChatPart{Type: "image_url", ImageURL: &imageURL{URL: "data:" + b.Source.MediaType + ";base64," + b.Source.Data}}, true
		case "url":
			return messagesChatPart{Type: "image_url", ImageURL: &imageURL{URL: b.Source.URL}}, true
		}
	}
	return messagesChatPart{}, false
}

// chatTurn translates one turn. A user turn's tool_result blocks become
// "tool" messages first (chat wants them right after the assistant's
// calls), then the rest of the turn as a user message; an assistant turn's
// tool_use blocks become its tool_calls.
func chatTurn(m anthropic.Message) []messagesChatMessage {
	var out []messagesChatMessage
	var rest []anthropic.Block
	var calls []chatCall
	for _, b := range m.Content {
		switch {
		case b.Type == anthropic.BlockToolResult && m.Role == "user":
			var content any = b.Text
			if texts := textBlocks(b.Content); len(texts) > 1 {
				content = textContent(texts)
			}
			out = append(out, messagesChatMessage{Role: "tool", ToolCallID: b.ToolUseID, Content: content})
			// Images a tool returned follow as the user's, which chat allows.
			for _, c := range b.Content {
				if c.Type == anthropic.BlockImage {
					rest = append(rest, c)
				}
			}
		case b.Type == anthropic.BlockToolUse && m.Role == "assistant":
			calls = append(calls, chatCall{ID: b.ID, Type: "function",
				Function: chatFunction{Name: b.Name, Arguments: string(wire.Compact(b.Input))}})
		case b.Type == anthropic.BlockText, b.Type == anthropic.BlockImage:
			rest = append(rest, b)
		}
	}
	if len(rest) == 0 && len(calls) == 0 {
		if len(out) == 0 { // a turn of nothing translatable still takes its place
			out = append(out, messagesChatMessage{Role: m.Role, Content: ""})
		}
		return out
	}
	msg := messagesChatMessage{Role: m.Role, ToolCalls: calls}
	if len(rest) > 0 {
		msg.Content = textContent(rest)
	}
	return append(out, msg)
}

func textBlocks(bs []anthropic.Block) []anthropic.Block {
	var out []anthropic.Block
	for _, b := range bs {
		if b.Type == anthropic.BlockText {
			out = append(out, b)
		}
	}
	return out
}
