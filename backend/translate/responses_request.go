package translate

import (
	"encoding/json"
	"fmt"

	"github.com/quotagate/quotagate/backend/responses"
	"github.com/quotagate/quotagate/backend/wire"
)

// ResponsesToChat translates a Responses request into a chat-completions
// body for an upstream that does not speak the Responses API. Notes say
// what was left out (for the log): tools other than functions (Codex's
// namespace and web_search), reasoning items, and members chat has no
// place for. previous_response_id is refused: only the provider keeps that
// state.
func ResponsesToChat(r *responses.Request) (body []byte, notes []string, err error) {
	if r.PreviousResponseID != "" {
		return nil, nil, invalid("previous_response_id needs the provider's stored responses, and this model's upstream speaks only chat completions; send the whole conversation in input instead")
	}
	note := func(format string, args ...any) { notes = append(notes, fmt.Sprintf(format, args...)) }
	msgs, err := responsesChatMessages(r, note)
	if err != nil {
		return nil, nil, err
	}
	out := responsesChat{Model: r.Model, Messages: msgs, Stream: r.Stream,
		Temperature: r.Temperature, TopP: r.TopP, User: r.User,
		ReasoningEffort: r.ReasoningEffort, ParallelToolCalls: r.ParallelToolCalls}
	if r.Stream {
		out.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	if r.MaxOutputTokens != nil {
		// max_tokens is the cap every chat server knows.
		out.MaxTokens = r.MaxOutputTokens
	}
	if err := out.setTools(r, note); err != nil {
		return nil, nil, err
	}
	if len(r.Text) > 0 {
		if out.ResponseFormat, err = chatResponseFormat(r.Text); err != nil {
			return nil, nil, err
		}
	}
	for _, skipped := range []struct {
		given bool
		what  string
	}{
		{len(r.Include) > 0, "include"}, {r.PromptCacheKey != "", "prompt_cache_key"},
		{len(r.Metadata) > 0, "metadata"}, {r.Store != nil, "store"},
	} {
		if skipped.given {
			note("left out %s: chat completions upstreams do not take it", skipped.what)
		}
	}
	chat, err := wire.Marshal(out)
	if err != nil {
		return nil, nil, fmt.Errorf("responses: encode chat body: %w", err)
	}
	return chat, notes, nil
}

// responsesChatMessages is the instructions and the input as chat
// messages; note says which items were left out.
func responsesChatMessages(r *responses.Request, note func(string, ...any)) ([]responsesChatMessage, error) {
	var msgs []responsesChatMessage
	if r.Instructions != "" {
		msgs = append(msgs, responsesChatMessage{Role: "system", Content: stringJSON(r.Instructions)})
	}
	// lastAssistant is the index of an assistant message that later
	// function_call items join, as one chat assistant turn with tool_calls.
	lastAssistant := -1
	dropped := map[string]int{}
	for _, it := range r.Input {
		switch {
		case it.Type == "message":
			m, err := chatMessageFrom(it)
			if err != nil {
				return nil, err
			}
			msgs = append(msgs, m)
			lastAssistant = -1
			if m.Role == "assistant" {
				lastAssistant = len(msgs) - 1
			}
		case it.Type == "function_call" || it.Type == "custom_tool_call":
			// A custom (freeform) call becomes a function call whose
			// arguments are its input: the text the reserve counted.
			if lastAssistant < 0 {
				msgs = append(msgs, responsesChatMessage{Role: "assistant", Content: json.RawMessage("null")})
				lastAssistant = len(msgs) - 1
			}
			msgs[lastAssistant].ToolCalls = append(msgs[lastAssistant].ToolCalls, chatCallOf(it))
		case it.Type == "function_call_output" || it.Type == "custom_tool_call_output":
			msgs = append(msgs, responsesChatMessage{Role: "tool", ToolCallID: it.CallID, Content: stringJSON(it.Output)})
			lastAssistant = -1
		default:
			dropped[it.Type]++
		}
	}
	for t, n := range dropped {
		note("left out %d %s input item(s): chat completions has no such item", n, t)
	}
	if len(msgs) == 0 {
		return nil, invalid("input has no message or function output that chat completions can carry")
	}
	return msgs, nil
}

// chatCallOf is a function_call (or custom_tool_call) item as a chat tool
// call; a namespaced call's name is namespace.name.
func chatCallOf(it responses.Item) chatToolCall {
	name := it.Name
	if it.Namespace != "" {
		name = it.Namespace + "." + it.Name
	}
	tc := chatToolCall{ID: it.CallID, Type: "function"}
	tc.Function.Name, tc.Function.Arguments = name, it.Arguments
	return tc
}

// setTools gives the chat body the request's function tools and its
// tool_choice; note says which other tools were left out.
func (out *responsesChat) setTools(r *responses.Request, note func(string, ...any)) error {
	var functions int
	for _, t := range r.Tools {
		if t.Type != "function" {
			what := t.Type + " tool"
			if t.Name != "" {
				what += fmt.Sprintf(" %q", t.Name)
			}
			note("left out the %s: chat completions has only function tools", what)
			continue
		}
		var f struct {
			Name        string          `json:"name"`
			Description string          `json:"description,omitempty"`
			Parameters  json.RawMessage `json:"parameters,omitempty"`
			Strict      *bool           `json:"strict,omitempty"`
		}
		if err := json.Unmarshal(t.Raw(), &f); err != nil {
			return invalid("tool %q: %v", t.Name, err)
		}
		out.Tools = append(out.Tools, responsesChatTool{Type: "function", Function: f})
		functions++
	}
	if len(r.ToolChoice) > 0 && functions > 0 {
		tc, err := chatToolChoice(r.ToolChoice)
		if err != nil {
			return err
		}
		out.ToolChoice = tc
	}
	if functions == 0 {
		out.ParallelToolCalls = nil // only valid alongside tools
	}
	return nil
}

func chatMessageFrom(it responses.Item) (responsesChatMessage, error) {
	role := it.Role
	if role == "developer" {
		role = "system" // most chat servers know no developer role
	}
	m := responsesChatMessage{Role: role}
	plain := true
	for _, p := range it.Parts {
		if !p.IsText() {
			plain = false
		}
	}
	if plain || role != "user" {
		// Only a user turn can carry images in chat; other roles get text.
		m.Content = stringJSON(it.Text())
		return m, nil
	}
	var parts []responsesChatPart
	for _, p := range it.Parts {
		switch {
		case p.IsText():
			parts = append(parts, responsesChatPart{Type: "text", Text: p.Text})
		case p.Type == "input_image" && p.ImageURL != "":
			img := &chatImage{URL: p.ImageURL, Detail: p.Detail}
			parts = append(parts, responsesChatPart{Type: "image_url", ImageURL: img})
		default:
			return m, invalid("a %s part needs the provider's file storage, and this model's upstream speaks only chat completions", p.Type)
		}
	}
	raw, _ := json.Marshal(parts)
	m.Content = raw
	return m, nil
}

// stringJSON is s as a JSON string, HTML characters as they are.
func stringJSON(s string) json.RawMessage {
	b, _ := wire.Marshal(s)
	return b
}

func chatToolChoice(raw json.RawMessage) (json.RawMessage, error) {
	if raw[0] == '"' {
		return raw, nil
	}
	var o struct {
		Type string `json:"type"`
		Name string `json:"name"`
	}
	_ = json.Unmarshal(raw, &o)
	if o.Type == "function" && o.Name != "" {
		type fn struct {
			Name string `json:"name"`
		}
		return responses.Encode(struct {
			Type     string `json:"type"`
			Function fn     `json:"function"`
		}{"function", fn{o.Name}}), nil
	}
	return nil, invalid("tool_choice of type %q has no chat-completions form", o.Type)
}

func chatResponseFormat(raw json.RawMessage) (json.RawMessage, error) {
	var t struct {
		Format *struct {
			Type        string          `json:"type"`
			Name        string          `json:"name"`
			Schema      json.RawMessage `json:"schema"`
			Strict      *bool           `json:"strict"`
			Description string          `json:"description"`
		} `json:"format"`
	}
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, invalid("text.format: %v", err)
	}
	if t.Format == nil {
		return nil, nil
	}
	switch t.Format.Type {
	case "text", "":
		return nil, nil
	case "json_object":
		return json.RawMessage(`{"type":"json_object"}`), nil
	case "json_schema":
		js := map[string]any{"name": t.Format.Name, "schema": t.Format.Schema}
		if t.Format.Strict != nil {
			js["strict"] = *t.Format.Strict
		}
		if t.Format.Description != "" {
			js["description"] = t.Format.Description
		}
		return json.Marshal(map[string]any{"type": "json_schema", "json_schema": js})
	}
	return nil, invalid("text.format type %q has no chat-completions form", t.Format.Type)
}

// responsesChat is the chat-completions body a Responses request becomes.
type responsesChat struct {
	Model             string                 `json:"model"`
	Messages          []responsesChatMessage `json:"messages"`
	Stream            bool                   `json:"stream,omitempty"`
	StreamOptions     *streamOptions         `json:"stream_options,omitempty"`
	MaxTokens         *int64                 `json:"max_tokens,omitempty"`
	Temperature       json.RawMessage        `json:"temperature,omitempty"`
	TopP              json.RawMessage        `json:"top_p,omitempty"`
	Tools             []responsesChatTool    `json:"tools,omitempty"`
	ToolChoice        json.RawMessage        `json:"tool_choice,omitempty"`
	ParallelToolCalls *bool                  `json:"parallel_tool_calls,omitempty"`
	ResponseFormat    json.RawMessage        `json:"response_format,omitempty"`
	ReasoningEffort   string                 `json:"reasoning_effort,omitempty"`
	User              string                 `json:"user,omitempty"`
}

type responsesChatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []chatToolCall  `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
}

type responsesChatPart struct {
	Type     string     `json:"type"`
	Text     string     `json:"text,omitempty"`
	ImageURL *chatImage `json:"image_url,omitempty"`
}

type chatImage struct {
	URL    string `json:"url"`
	Detail string `json:"detail,omitempty"`
}

type chatToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type responsesChatTool struct {
	Type     string `json:"type"`
	Function any    `json:"function"`
}
