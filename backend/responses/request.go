package responses

import (
	"encoding/json"
	"strings"

	"github.com/quotagate/quotagate/backend/wire"
)

// Request is what quotagate needs from a Responses API request body. The raw
// body is kept: a native relay sends it upstream byte for byte.
type Request struct {
	Model        string
	Stream       bool
	Instructions string
	Input        []Item
	Tools        []Tool
	// ToolsJSON is the raw `tools` array; nil when absent.
	ToolsJSON         json.RawMessage
	ToolChoice        json.RawMessage // raw; nil when absent
	ParallelToolCalls *bool
	// MaxOutputTokens is the client's output cap; nil when absent (Codex
	// sends none, and the reserve then takes the configured default).
	MaxOutputTokens    *int64
	ReasoningEffort    string          // reasoning.effort
	Reasoning          json.RawMessage // the whole reasoning object, raw
	Include            []string
	Store              *bool
	PromptCacheKey     string
	Metadata           json.RawMessage
	PreviousResponseID string
	Temperature        json.RawMessage
	TopP               json.RawMessage
	Text               json.RawMessage // text.format (structured output), raw
	User               string

	raw []byte
}

// Item is one element of `input`.
type Item struct {
	Type string // message, function_call, function_call_output, reasoning, …
	ID   string
	// Role is a message's role: user, assistant, system or developer.
	Role string
	// Parts are a message's content parts in order (a string content is one
	// input_text part), or the parts of a *_call_output's array output.
	Parts []Part
	// CallID, Name and Arguments belong to function_call (and CallID to
	// function_call_output); Name also to custom and namespaced calls.
	CallID, Name, Arguments, Namespace string
	// Output is the text of a *_call_output: its string output, or its text
	// parts joined.
	Output string
	// Reasoning is the summary and content text of a reasoning item.
	Reasoning string

	raw json.RawMessage
}

// Part is one content part.
type Part struct {
	Type     string // input_text, output_text, refusal, input_image, input_file, …
	Text     string // text of input_text, output_text and refusal parts
	ImageURL string // input_image: image_url (an https or data URL)
	FileID   string // input_image / input_file: file_id
	Detail   string // input_image: detail
}

// Tool is one entry of `tools`.
type Tool struct {
	Type string // function, namespace, web_search, custom, …
	Name string
	raw  json.RawMessage
}

// Raw returns the request body exactly as the client sent it.
func (r *Request) Raw() []byte { return r.raw }

// Raw returns the item as the client wrote it.
func (it Item) Raw() json.RawMessage { return it.raw }

// Raw returns the tool definition as the client wrote it.
func (t Tool) Raw() json.RawMessage { return t.raw }

// IsText reports whether the part carries text.
func (p Part) IsText() bool {
	return p.Type == "input_text" || p.Type == "output_text" || p.Type == "text" || p.Type == "refusal"
}

// Text returns a message item's text parts joined.
func (it Item) Text() string {
	var b strings.Builder
	for _, p := range it.Parts {
		if p.IsText() {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// IsCallOutput reports whether the item is a tool's answer
// (function_call_output, custom_tool_call_output, shell_call_output, …).
func (it Item) IsCallOutput() bool { return strings.HasSuffix(it.Type, "_call_output") }

// requestBody is how a Responses body's top level is read: a known member
// in other letter case is refused, since a case-insensitive upstream could
// read it where quotagate did not.
var requestBody = wire.Body{Known: map[string]bool{
	"model": true, "input": true, "instructions": true, "stream": true, "tools": true,
	"tool_choice": true, "parallel_tool_calls": true, "max_output_tokens": true,
	"reasoning": true, "include": true, "store": true, "prompt_cache_key": true,
	"metadata": true, "previous_response_id": true, "temperature": true, "top_p": true,
	"text": true, "user": true, "stream_options": true, "client_metadata": true,
	"truncation": true, "service_tier": true, "safety_identifier": true,
	"background": true, "conversation": true, "prompt": true, "max_tool_calls": true,
	"top_logprobs": true, "prompt_cache_retention": true,
}}

// ParseRequest parses and checks a Responses API request body. Every error
// is a *wire.RequestError with a sentence for a person.
func ParseRequest(body []byte) (*Request, error) {
	req := &Request{raw: body}
	var haveInput bool
	_, err := requestBody.Read(body, func(f wire.Field) error {
		haveInput = haveInput || f.Key == "input"
		return req.member(f)
	})
	if err != nil {
		return nil, err
	}
	if req.Model == "" {
		return nil, invalid("model is required")
	}
	if !haveInput && req.PreviousResponseID == "" {
		return nil, invalid("input is required")
	}
	return req, nil
}

// member reads one top-level member into r: the conversation and its
// tools here, plain strings and switches by kind, the settings that are
// forwarded raw once checked in setting.
func (r *Request) member(f wire.Field) (err error) {
	switch f.Key {
	case "model", "instructions", "prompt_cache_key", "previous_response_id", "user":
		dst := map[string]*string{"model": &r.Model, "instructions": &r.Instructions, "prompt_cache_key": &r.PromptCacheKey,
			"previous_response_id": &r.PreviousResponseID, "user": &r.User}[f.Key]
		if err := json.Unmarshal(f.Val, dst); err != nil {
			return invalid("%s must be a string", f.Key)
		}
	case "stream", "parallel_tool_calls", "store":
		b, err := wire.Flag(f)
		if err != nil {
			return err
		}
		switch f.Key {
		case "stream":
			r.Stream = b
		case "parallel_tool_calls":
			r.ParallelToolCalls = &b
		default:
			r.Store = &b
		}
	case "input":
		r.Input, err = parseInput(f.Val)
	case "tools":
		if r.Tools, err = parseTools(f.Val); err == nil {
			r.ToolsJSON = f.Val
		}
	case "include":
		if err := json.Unmarshal(f.Val, &r.Include); err != nil {
			return invalid("include must be an array of strings")
		}
	case "max_output_tokens":
		n, err := wire.Count(f.Val)
		if err != nil || n < 1 {
			// 0 would let a provider that ignores it answer in full
			// against a reserve of the input alone.
			return invalid("max_output_tokens must be an integer of at least 1")
		}
		r.MaxOutputTokens = &n
	default:
		return r.setting(f)
	}
	return err
}

// setting checks a member that is forwarded as the client wrote it.
func (r *Request) setting(f wire.Field) error {
	switch f.Key {
	case "tool_choice":
		if err := checkToolChoice(f.Val); err != nil {
			return err
		}
		r.ToolChoice = f.Val
	case "reasoning":
		var o struct {
			Effort *string `json:"effort"`
		}
		if json.Unmarshal(f.Val, &o) != nil || f.Val[0] != '{' {
			return invalid("reasoning must be an object like {\"effort\":\"low\"}")
		}
		if o.Effort != nil {
			r.ReasoningEffort = *o.Effort
		}
		r.Reasoning = f.Val
	case "metadata":
		var m map[string]string
		if f.Val[0] != '{' || json.Unmarshal(f.Val, &m) != nil {
			return invalid("metadata must be an object of strings")
		}
		r.Metadata = f.Val
	case "temperature", "top_p":
		var x float64
		if err := json.Unmarshal(f.Val, &x); err != nil {
			return invalid("%s must be a number", f.Key)
		}
		if f.Key == "temperature" {
			r.Temperature = f.Val
		} else {
			r.TopP = f.Val
		}
	case "text":
		if f.Val[0] != '{' {
			return invalid("text must be an object like {\"format\":{\"type\":\"text\"}}")
		}
		r.Text = f.Val
	}
	return nil
}

func parseInput(raw json.RawMessage) ([]Item, error) {
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, invalid("input must be a string or an array of items")
		}
		return []Item{{Type: "message", Role: "user", Parts: []Part{{Type: "input_text", Text: s}}}}, nil
	}
	var items []json.RawMessage
	if raw[0] != '[' || json.Unmarshal(raw, &items) != nil {
		return nil, invalid("input must be a string or an array of items")
	}
	out := make([]Item, 0, len(items))
	for i, r := range items {
		it, err := parseItem(r)
		if err != nil {
			return nil, invalid("input[%d]: %s", i, wire.Reason(err))
		}
		out = append(out, it)
	}
	return out, nil
}

func parseItem(raw json.RawMessage) (Item, error) {
	it := Item{raw: raw}
	fields, err := wire.Unique(raw, "an item")
	if err != nil {
		return it, invalid("an item must be an object")
	}
	for _, k := range []struct {
		key string
		dst *string
	}{{"type", &it.Type}, {"id", &it.ID}, {"role", &it.Role}, {"call_id", &it.CallID}, {"name", &it.Name}, {"namespace", &it.Namespace}} {
		if *k.dst, err = getString(fields, k.key, "the item"); err != nil {
			return it, err
		}
	}
	if it.Type == "" && it.Role != "" {
		it.Type = "message" // the easy form {"role","content"}
	}
	switch {
	case it.Type == "":
		return it, invalid("an item needs a type (or a role)")
	case it.Type == "message":
		err = it.readMessage(fields)
	case it.Type == "function_call":
		if it.Arguments, err = getString(fields, "arguments", "the function_call"); err == nil && (it.CallID == "" || it.Name == "") {
			err = invalid("a function_call needs call_id and name")
		}
	case it.Type == "custom_tool_call":
		it.Arguments, err = getString(fields, "input", "the custom_tool_call")
	case it.IsCallOutput():
		err = it.readOutput(fields)
	case it.Type == "reasoning":
		it.Reasoning, err = reasoningText(raw)
	}
	return it, err
}

// readMessage reads a message item's role and content.
func (it *Item) readMessage(fields []wire.Field) error {
	switch it.Role {
	case "user", "assistant", "system", "developer":
	case "":
		return invalid("a message needs a role")
	default:
		return invalid("role %q: want user, assistant, system or developer", it.Role)
	}
	content, ok := wire.Get(fields, "content")
	if !ok {
		return invalid("a message needs content")
	}
	var err error
	it.Parts, err = parseParts(content, "content")
	return err
}

// readOutput reads a *_call_output's output: a string, an array of parts
// (Output is then their text), or an object (shell and computer outputs,
// whose text is the object).
func (it *Item) readOutput(fields []wire.Field) error {
	out, ok := wire.Get(fields, "output")
	if !ok {
		return invalid("a %s needs output", it.Type)
	}
	switch out[0] {
	case '"':
		if err := json.Unmarshal(out, &it.Output); err != nil {
			return invalid("output must be a string or an array of parts")
		}
	case '[':
		var err error
		if it.Parts, err = parseParts(out, "output"); err != nil {
			return err
		}
		for _, p := range it.Parts {
			if p.IsText() {
				it.Output += p.Text
			}
		}
	default:
		it.Output = string(out)
	}
	return nil
}

// reasoningText is a reasoning item's summary and content text, joined.
func reasoningText(raw json.RawMessage) (string, error) {
	var r struct {
		Summary []struct {
			Text string `json:"text"`
		} `json:"summary"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return "", invalid("a reasoning item has summary and content arrays of text parts")
	}
	var b strings.Builder
	for _, s := range r.Summary {
		b.WriteString(s.Text)
	}
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String(), nil
}

func parseParts(raw json.RawMessage, what string) ([]Part, error) {
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, invalid("%s must be a string or an array of parts", what)
		}
		return []Part{{Type: "input_text", Text: s}}, nil
	}
	var parts []struct {
		Type     *string         `json:"type"`
		Text     *string         `json:"text"`
		Refusal  *string         `json:"refusal"`
		ImageURL json.RawMessage `json:"image_url"`
		FileID   string          `json:"file_id"`
		Detail   string          `json:"detail"`
	}
	if raw[0] != '[' || json.Unmarshal(raw, &parts) != nil {
		return nil, invalid("%s must be a string or an array of parts", what)
	}
	out := make([]Part, 0, len(parts))
	for i, p := range parts {
		if p.Type == nil || *p.Type == "" {
			return nil, invalid("%s[%d] has no type", what, i)
		}
		q := Part{Type: *p.Type, FileID: p.FileID, Detail: p.Detail}
		switch q.Type {
		case "input_text", "output_text", "text":
			if p.Text == nil {
				return nil, invalid("%s[%d] is a %s part without text", what, i, q.Type)
			}
			q.Text = *p.Text
		case "refusal":
			if p.Refusal != nil {
				q.Text = *p.Refusal
			}
		case "input_image":
			var s string
			if len(p.ImageURL) > 0 && !wire.IsNull(p.ImageURL) {
				if json.Unmarshal(p.ImageURL, &s) != nil {
					return nil, invalid("%s[%d].image_url must be a string", what, i)
				}
			}
			q.ImageURL = s
		}
		out = append(out, q)
	}
	return out, nil
}

func parseTools(raw json.RawMessage) ([]Tool, error) {
	var tools []json.RawMessage
	if raw[0] != '[' || json.Unmarshal(raw, &tools) != nil {
		return nil, invalid("tools must be an array of tool definitions")
	}
	out := make([]Tool, 0, len(tools))
	for i, t := range tools {
		var d struct {
			Type *string `json:"type"`
			Name string  `json:"name"`
		}
		if t[0] != '{' || json.Unmarshal(t, &d) != nil || d.Type == nil || *d.Type == "" {
			return nil, invalid("tools[%d] must be an object with a type", i)
		}
		if *d.Type == "function" && d.Name == "" {
			return nil, invalid("tools[%d] is a function without a name", i)
		}
		out = append(out, Tool{Type: *d.Type, Name: d.Name, raw: t})
	}
	return out, nil
}

func checkToolChoice(raw json.RawMessage) error {
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return invalid("tool_choice must be \"auto\", \"none\", \"required\" or an object")
		}
		switch s {
		case "auto", "none", "required":
			return nil
		}
		return invalid("tool_choice %q: want \"auto\", \"none\", \"required\" or an object", s)
	}
	var o struct {
		Type string `json:"type"`
	}
	if raw[0] != '{' || json.Unmarshal(raw, &o) != nil || o.Type == "" {
		return invalid("tool_choice must be \"auto\", \"none\", \"required\" or an object with a type")
	}
	return nil
}
