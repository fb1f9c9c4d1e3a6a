package responses

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// ChatBody translates the request into a chat-completions body for an
// upstream that does not speak the Responses API. Notes say what was left
// out (for the log): tools other than functions (Codex's namespace and
// web_search), reasoning items, and members chat has no place for.
// previous_response_id is refused: only the provider keeps that state.
func (r *Request) ChatBody() (body []byte, notes []string, err error) {
	if r.PreviousResponseID != "" {
		return nil, nil, invalid("previous_response_id needs the provider's stored responses, and this model's upstream speaks only chat completions; send the whole conversation in input instead")
	}
	note := func(format string, args ...any) { notes = append(notes, fmt.Sprintf(format, args...)) }
	var msgs []chatMessage
	if r.Instructions != "" {
		msgs = append(msgs, chatMessage{Role: "system", Content: textContent(r.Instructions)})
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
				return nil, nil, err
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
				msgs = append(msgs, chatMessage{Role: "assistant", Content: json.RawMessage("null")})
				lastAssistant = len(msgs) - 1
			}
			name := it.Name
			if it.Namespace != "" {
				name = it.Namespace + "." + it.Name
			}
			tc := chatToolCall{ID: it.CallID, Type: "function"}
			tc.Function.Name, tc.Function.Arguments = name, it.Arguments
			msgs[lastAssistant].ToolCalls = append(msgs[lastAssistant].ToolCalls, tc)
		case it.Type == "function_call_output" || it.Type == "custom_tool_call_output":
			msgs = append(msgs, chatMessage{Role: "tool", ToolCallID: it.CallID, Content: textContent(it.Output)})
			lastAssistant = -1
		default:
			dropped[it.Type]++
		}
	}
	for t, n := range dropped {
		note("left out %d %s input item(s): chat completions has no such item", n, t)
	}
	if len(msgs) == 0 {
		return nil, nil, invalid("input has no message or function output that chat completions can carry")
	}
	out := chatRequest{Model: r.Model, Messages: msgs, Stream: r.Stream,
		Temperature: r.Temperature, TopP: r.TopP, User: r.User,
		ReasoningEffort: r.ReasoningEffort, ParallelToolCalls: r.ParallelToolCalls}
	if r.Stream {
		out.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	if r.MaxOutputTokens != nil {
		// max_tokens is the cap every chat server knows.
		out.MaxTokens = r.MaxOutputTokens
	}
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
		if err := json.Unmarshal(t.raw, &f); err != nil {
			return nil, nil, invalid("tool %q: %v", t.Name, err)
		}
		out.Tools = append(out.Tools, chatTool{Type: "function", Function: f})
		functions++
	}
	if len(r.ToolChoice) > 0 && functions > 0 {
		tc, err := chatToolChoice(r.ToolChoice)
		if err != nil {
			return nil, nil, err
		}
		out.ToolChoice = tc
	}
	if functions == 0 {
		out.ParallelToolCalls = nil // only valid alongside tools
	}
	if len(r.Text) > 0 {
		rf, err := chatResponseFormat(r.Text)
		if err != nil {
			return nil, nil, err
		}
		out.ResponseFormat = rf
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
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return nil, nil, fmt.Errorf("responses: encode chat body: %w", err)
	}
	return bytes.TrimRight(b.Bytes(), "\n"), notes, nil
}

func chatMessageFrom(it Item) (chatMessage, error) {
	role := it.Role
	if role == "developer" {
		role = "system" // most chat servers know no developer role
	}
	m := chatMessage{Role: role}
	plain := true
	for _, p := range it.Parts {
		if !p.IsText() {
			plain = false
		}
	}
	if plain || role != "user" {
		// Only a user turn can carry images in chat; other roles get text.
		m.Content = textContent(it.Text())
		return m, nil
	}
	var parts []chatPart
	for _, p := range it.Parts {
		switch {
		case p.IsText():
			parts = append(parts, chatPart{Type: "text", Text: p.Text})
		case p.Type == "input_image" && p.ImageURL != "":
			img := &chatImage{URL: p.ImageURL, Detail: p.Detail}
			parts = append(parts, chatPart{Type: "image_url", ImageURL: img})
		default:
			return m, invalid("a %s part needs the provider's file storage, and this model's upstream speaks only chat completions", p.Type)
		}
	}
	raw, _ := json.Marshal(parts)
	m.Content = raw
	return m, nil
}

func textContent(s string) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimRight(b.Bytes(), "\n")
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
		return mustJSON(struct {
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

type chatRequest struct {
	Model             string          `json:"model"`
	Messages          []chatMessage   `json:"messages"`
	Stream            bool            `json:"stream,omitempty"`
	StreamOptions     *streamOptions  `json:"stream_options,omitempty"`
	MaxTokens         *int64          `json:"max_tokens,omitempty"`
	Temperature       json.RawMessage `json:"temperature,omitempty"`
	TopP              json.RawMessage `json:"top_p,omitempty"`
	Tools             []chatTool      `json:"tools,omitempty"`
	ToolChoice        json.RawMessage `json:"tool_choice,omitempty"`
	ParallelToolCalls *bool           `json:"parallel_tool_calls,omitempty"`
	ResponseFormat    json.RawMessage `json:"response_format,omitempty"`
	ReasoningEffort   string          `json:"reasoning_effort,omitempty"`
	User              string          `json:"user,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type chatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []chatToolCall  `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
}

type chatPart struct {
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

type chatTool struct {
	Type     string `json:"type"`
	Function any    `json:"function"`
}
