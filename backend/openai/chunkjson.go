package openai

import "encoding/json"

// The chat-completions answer as it travels, declared once: what a
// translation reads from a chat upstream (backend/translate) and what the
// demo upstream writes. Members are in OpenAI's order; the metering path
// reads answers with ParseChunk and ParseCompletion instead, which take only
// what the meter needs.

// ChunkJSON is one chat.completion.chunk.
type ChunkJSON struct {
	ID                string            `json:"id"`
	Object            string            `json:"object"`
	Created           int64             `json:"created"`
	Model             string            `json:"model"`
	SystemFingerprint string            `json:"system_fingerprint"`
	Choices           []ChunkChoiceJSON `json:"choices"`
	// Usage is absent, null (OpenAI sends "usage": null on every chunk but
	// the last when usage was asked for) or a UsageJSON; ParseUsage reads it.
	Usage json.RawMessage `json:"usage,omitempty"`
}

// ChunkChoiceJSON is one choice of a chunk.
type ChunkChoiceJSON struct {
	Index        int        `json:"index"`
	Delta        *DeltaJSON `json:"delta"`
	FinishReason *string    `json:"finish_reason"`
}

// DeltaJSON is what one chunk adds to a choice.
type DeltaJSON struct {
	Role             string         `json:"role,omitempty"`
	Content          *string        `json:"content,omitempty"`
	ReasoningContent *string        `json:"reasoning_content,omitempty"`
	Refusal          *string        `json:"refusal,omitempty"`
	ToolCalls        []ToolCallJSON `json:"tool_calls,omitempty"`
}

// ToolCallJSON is a function call of a delta or a message. In a stream
// Index says which call a delta continues; ID and the name come once.
type ToolCallJSON struct {
	Index    *int             `json:"index,omitempty"`
	ID       string           `json:"id,omitempty"`
	Type     string           `json:"type,omitempty"`
	Function FunctionCallJSON `json:"function"`
}

// Slot is which call of the stream a delta's piece continues: its Index,
// or i, its place in the delta, from an upstream that leaves Index out.
func (c ToolCallJSON) Slot(i int) int {
	if c.Index != nil {
		return *c.Index
	}
	return i
}

// FunctionCallJSON is a call's function: its name and (a piece of) its
// arguments.
type FunctionCallJSON struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

// CompletionJSON is one whole chat.completion (a non-streaming answer).
type CompletionJSON struct {
	ID                string                 `json:"id"`
	Object            string                 `json:"object"`
	Created           int64                  `json:"created"`
	Model             string                 `json:"model"`
	SystemFingerprint string                 `json:"system_fingerprint"`
	Choices           []CompletionChoiceJSON `json:"choices"`
	Usage             json.RawMessage        `json:"usage,omitempty"` // absent or a UsageJSON
}

// CompletionChoiceJSON is one choice of a completion.
type CompletionChoiceJSON struct {
	Index        int         `json:"index"`
	Message      MessageJSON `json:"message"`
	FinishReason string      `json:"finish_reason"`
}

// MessageJSON is a completion's assistant message; Content is null for a
// message of tool calls only.
type MessageJSON struct {
	Role             string         `json:"role"`
	Content          *string        `json:"content"`
	ReasoningContent *string        `json:"reasoning_content,omitempty"`
	Refusal          *string        `json:"refusal,omitempty"`
	ToolCalls        []ToolCallJSON `json:"tool_calls,omitempty"`
}

// UsageJSON is the usage object as an upstream writes it.
type UsageJSON struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
}
