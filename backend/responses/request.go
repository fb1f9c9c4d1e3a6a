package responses

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/quotagate/quotagate/backend/ledger"
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

// forbiddenFields are refused at the top level (ledger.ForbiddenRequestFields,
// the same at every door).
var forbiddenFields = ledger.ForbiddenRequestFields

// knownFields are the members the parser reads; another spelling of one of
// them in other letter case is refused, since a case-insensitive upstream
// could read it where quotagate did not.
var knownFields = map[string]bool{
	"model": true, "input": true, "instructions": true, "stream": true, "tools": true,
	"tool_choice": true, "parallel_tool_calls": true, "max_output_tokens": true,
	"reasoning": true, "include": true, "store": true, "prompt_cache_key": true,
	"metadata": true, "previous_response_id": true, "temperature": true, "top_p": true,
	"text": true, "user": true, "stream_options": true, "client_metadata": true,
	"truncation": true, "service_tier": true, "safety_identifier": true,
	"background": true, "conversation": true, "prompt": true, "max_tool_calls": true,
	"top_logprobs": true, "prompt_cache_retention": true,
}

// ParseRequest parses and checks a Responses API request body. Every error
// is a *ledger.Error with CodeInvalidRequest and a sentence for a person.
func ParseRequest(body []byte) (*Request, error) {
	if !utf8.Valid(body) {
		return nil, invalid("the request body is not valid UTF-8")
	}
	fields, err := uniqueFields(body, "the request body")
	if err != nil {
		return nil, err
	}
	req := &Request{raw: body}
	var haveInput bool
	for _, f := range fields {
		lower := foldKey(f.key)
		if why, bad := forbiddenFields[lower]; bad {
			return nil, invalid("the field %q is not allowed: %s", f.key, why)
		}
		if knownFields[lower] && f.key != lower {
			return nil, invalid("the field %q must be spelled %q", f.key, lower)
		}
		if isNull(f.val) {
			continue // null means "not given"
		}
		switch f.key {
		case "model":
			if err := json.Unmarshal(f.val, &req.Model); err != nil {
				return nil, invalid("model must be a string")
			}
		case "input":
			if req.Input, err = parseInput(f.val); err != nil {
				return nil, err
			}
			haveInput = true
		case "instructions":
			if err := json.Unmarshal(f.val, &req.Instructions); err != nil {
				return nil, invalid("instructions must be a string")
			}
		case "stream":
			if err := json.Unmarshal(f.val, &req.Stream); err != nil {
				return nil, invalid("stream must be true or false")
			}
		case "tools":
			if req.Tools, err = parseTools(f.val); err != nil {
				return nil, err
			}
			req.ToolsJSON = f.val
		case "tool_choice":
			if err := checkToolChoice(f.val); err != nil {
				return nil, err
			}
			req.ToolChoice = f.val
		case "parallel_tool_calls":
			var b bool
			if err := json.Unmarshal(f.val, &b); err != nil {
				return nil, invalid("parallel_tool_calls must be true or false")
			}
			req.ParallelToolCalls = &b
		case "max_output_tokens":
			n, err := parseCount(f.val)
			if err != nil || n < 1 {
				// 0 would let a provider that ignores it answer in full
				// against a reserve of the input alone.
				return nil, invalid("max_output_tokens must be an integer of at least 1")
			}
			req.MaxOutputTokens = &n
		case "reasoning":
			var r struct {
				Effort *string `json:"effort"`
			}
			if json.Unmarshal(f.val, &r) != nil || f.val[0] != '{' {
				return nil, invalid("reasoning must be an object like {\"effort\":\"low\"}")
			}
			if r.Effort != nil {
				req.ReasoningEffort = *r.Effort
			}
			req.Reasoning = f.val
		case "include":
			if err := json.Unmarshal(f.val, &req.Include); err != nil {
				return nil, invalid("include must be an array of strings")
			}
		case "store":
			var b bool
			if err := json.Unmarshal(f.val, &b); err != nil {
				return nil, invalid("store must be true or false")
			}
			req.Store = &b
		case "prompt_cache_key":
			if err := json.Unmarshal(f.val, &req.PromptCacheKey); err != nil {
				return nil, invalid("prompt_cache_key must be a string")
			}
		case "metadata":
			if f.val[0] != '{' {
				return nil, invalid("metadata must be an object of strings")
			}
			var m map[string]string
			if err := json.Unmarshal(f.val, &m); err != nil {
				return nil, invalid("metadata must be an object of strings")
			}
			req.Metadata = f.val
		case "previous_response_id":
			if err := json.Unmarshal(f.val, &req.PreviousResponseID); err != nil {
				return nil, invalid("previous_response_id must be a string")
			}
		case "temperature", "top_p":
			var x float64
			if err := json.Unmarshal(f.val, &x); err != nil {
				return nil, invalid("%s must be a number", f.key)
			}
			if f.key == "temperature" {
				req.Temperature = f.val
			} else {
				req.TopP = f.val
			}
		case "text":
			if f.val[0] != '{' {
				return nil, invalid("text must be an object like {\"format\":{\"type\":\"text\"}}")
			}
			req.Text = f.val
		case "user":
			if err := json.Unmarshal(f.val, &req.User); err != nil {
				return nil, invalid("user must be a string")
			}
		}
	}
	if req.Model == "" {
		return nil, invalid("model is required")
	}
	if !haveInput && req.PreviousResponseID == "" {
		return nil, invalid("input is required")
	}
	return req, nil
}

// parseCount reads a non-negative integer no larger than ledger.MaxUnits.
func parseCount(raw json.RawMessage) (int64, error) {
	s := string(bytes.TrimSpace(raw))
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > int64(ledger.MaxUnits) {
		return 0, invalid("not a non-negative integer")
	}
	return n, nil
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
			return nil, invalid("input[%d]: %s", i, ledger.ErrorMessage(err))
		}
		out = append(out, it)
	}
	return out, nil
}

func parseItem(raw json.RawMessage) (Item, error) {
	it := Item{raw: raw}
	fields, err := uniqueFields(raw, "an item")
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
		switch it.Role {
		case "user", "assistant", "system", "developer":
		case "":
			return it, invalid("a message needs a role")
		default:
			return it, invalid("role %q: want user, assistant, system or developer", it.Role)
		}
		content, ok := get(fields, "content")
		if !ok {
			return it, invalid("a message needs content")
		}
		if it.Parts, err = parseParts(content, "content"); err != nil {
			return it, err
		}
	case it.Type == "function_call":
		if it.Arguments, err = getString(fields, "arguments", "the function_call"); err != nil {
			return it, err
		}
		if it.CallID == "" || it.Name == "" {
			return it, invalid("a function_call needs call_id and name")
		}
	case it.Type == "custom_tool_call":
		if it.Arguments, err = getString(fields, "input", "the custom_tool_call"); err != nil {
			return it, err
		}
	case it.IsCallOutput():
		out, ok := get(fields, "output")
		if !ok {
			return it, invalid("a %s needs output", it.Type)
		}
		if out[0] == '"' {
			if err := json.Unmarshal(out, &it.Output); err != nil {
				return it, invalid("output must be a string or an array of parts")
			}
		} else if out[0] == '[' {
			if it.Parts, err = parseParts(out, "output"); err != nil {
				return it, err
			}
			for _, p := range it.Parts {
				if p.IsText() {
					it.Output += p.Text
				}
			}
		} else {
			// Shell and computer outputs are objects; their text is the object.
			it.Output = string(out)
		}
	case it.Type == "reasoning":
		var r struct {
			Summary []struct {
				Text string `json:"text"`
			} `json:"summary"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return it, invalid("a reasoning item has summary and content arrays of text parts")
		}
		var b strings.Builder
		for _, s := range r.Summary {
			b.WriteString(s.Text)
		}
		for _, c := range r.Content {
			b.WriteString(c.Text)
		}
		it.Reasoning = b.String()
	}
	return it, nil
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
			if len(p.ImageURL) > 0 && !isNull(p.ImageURL) {
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
