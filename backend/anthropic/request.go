package anthropic

import (
	"encoding/json"

	"github.com/quotagate/quotagate/backend/wire"
)

// Request is what the gateway needs from a Messages API body
// (POST /v1/messages or /v1/messages/count_tokens). The raw body is kept:
// a native upstream gets it exactly as the client wrote it.
type Request struct {
	Model string
	// MaxTokens is the client's output cap; 0 for a count_tokens body,
	// which has none.
	MaxTokens int64
	Stream    bool
	// System is the top-level system prompt (a string is one text block),
	// followed by the content of every message with role "system" (Claude
	// Code sends one), in body order.
	System   []Block
	Messages []Message // user and assistant turns, system turns taken out
	Tools    []Tool
	// ToolChoice, Thinking: nil when absent.
	ToolChoice *ToolChoice
	Thinking   *Thinking

	StopSequences []string
	// Temperature, TopP and TopK are kept as the client wrote the numbers.
	Temperature, TopP, TopK json.RawMessage
	// OutputConfig and ContextManagement are forwarded natively; a
	// translation reads output_config.format and drops the rest. Metadata
	// (user_id) is allowed at this door and is never sent to a translated
	// upstream.
	OutputConfig, ContextManagement, Metadata json.RawMessage

	raw []byte
}

// Raw returns the body exactly as the client sent it.
func (r *Request) Raw() []byte { return r.raw }

// Message is one user or assistant turn.
type Message struct {
	Role    string // "user" or "assistant"
	Content []Block
}

// Block is one content block. Type is the wire type; the fields used
// depend on it. Blocks of types the gateway does not know are kept in Raw:
// forwarded natively, counted as media, dropped by a translation.
type Block struct {
	Type string
	// Text is a text block's text, a thinking block's thinking, and the
	// text of a tool_result (string content, or its text blocks joined).
	Text string
	// tool_use: ID, Name, Input (a JSON object). tool_result: ToolUseID,
	// IsError, Content (its blocks when content is an array).
	ID, Name  string
	Input     json.RawMessage
	ToolUseID string
	IsError   bool
	Content   []Block
	// Source is an image's source.
	Source *ImageSource
	// Signature is a thinking block's signature; Data a redacted_thinking
	// block's data.
	Signature, Data string
	Raw             json.RawMessage
}

// Block types.
const (
	BlockText             = "text"
	BlockImage            = "image"
	BlockToolUse          = "tool_use"
	BlockToolResult       = "tool_result"
	BlockThinking         = "thinking"
	BlockRedactedThinking = "redacted_thinking"
)

// ImageSource is where an image block's bytes are: inline base64, a URL or
// an uploaded file. Images are never fetched to be measured.
type ImageSource struct {
	Type      string // "base64", "url" or "file"
	MediaType string
	Data      string
	URL       string
	FileID    string
}

// Tool is one entry of `tools`. A custom tool has a Name and an InputSchema;
// a server tool (web_search_…, bash_…) has a dated Type. Raw keeps every key
// (defer_loading, cache_control, input_examples, …) for a native upstream.
type Tool struct {
	Type        string // "" or "custom" for a client tool
	Name        string
	Description string
	InputSchema json.RawMessage
	Raw         json.RawMessage
}

// Custom reports whether the tool is a client tool that a chat-completions
// upstream can be given as a function.
func (t Tool) Custom() bool {
	return (t.Type == "" || t.Type == "custom") && len(t.InputSchema) > 0
}

// ToolChoice is `tool_choice`: auto, any, tool (with Name) or none.
type ToolChoice struct {
	Type                   string
	Name                   string
	DisableParallelToolUse bool
}

// Thinking is `thinking`: enabled (with BudgetTokens), disabled or adaptive.
type Thinking struct {
	Type         string
	BudgetTokens int64
}

// On reports whether the client asked the model to think.
func (t *Thinking) On() bool { return t != nil && (t.Type == "enabled" || t.Type == "adaptive") }

// messagesBody is how a Messages body's top level is read (client
// metadata is allowed at this door): a member that differs from a known
// one only in letter case is refused, since a case-insensitive upstream
// could read it where the gateway did not.
var messagesBody = wire.Body{
	Known: map[string]bool{
		"model": true, "messages": true, "max_tokens": true, "stream": true, "system": true,
		"tools": true, "tool_choice": true, "thinking": true, "stop_sequences": true,
		"temperature": true, "top_p": true, "top_k": true, "metadata": true,
		"output_config": true, "context_management": true,
	},
	Required: []string{"model", "messages", "max_tokens"},
}

// ParseRequest parses and checks a POST /v1/messages body. Every error is a
// *wire.RequestError with a message for a person.
func ParseRequest(body []byte) (*Request, error) { return parse(body, true) }

// ParseCountTokens parses a POST /v1/messages/count_tokens body: the same
// shape without max_tokens or stream.
func ParseCountTokens(body []byte) (*Request, error) { return parse(body, false) }

func parse(body []byte, create bool) (*Request, error) {
	req := &Request{raw: body}
	var haveModel, haveMessages, haveMax bool
	var systemTurns []Block
	_, err := messagesBody.Read(body, func(f wire.Field) (err error) {
		switch f.Key {
		case "model":
			haveModel = true
		case "messages":
			haveMessages = true
			req.Messages, systemTurns, err = parseMessages(f.Val)
			return err
		case "max_tokens":
			haveMax = true
		}
		return req.member(f)
	})
	switch {
	case err != nil:
		return nil, err
	case !haveModel:
		return nil, invalid("model is required")
	case !haveMessages:
		return nil, invalid("messages is required")
	case create && !haveMax:
		return nil, invalid("max_tokens is required")
	}
	if !create {
		req.MaxTokens, req.Stream = 0, false
	}
	req.System = append(req.System, systemTurns...)
	return req, nil
}

// member reads one top-level member but messages into r: the model, the
// cap and the conversation's parts here, the settings forwarded as the
// client wrote them in setting.
func (r *Request) member(f wire.Field) (err error) {
	switch f.Key {
	case "model":
		r.Model, err = wire.Model(f)
	case "max_tokens":
		n, err := wire.Count(f.Val)
		if err != nil {
			return invalid("max_tokens must be a positive integer: %v", err)
		}
		if n < 1 {
			return invalid("max_tokens must be at least 1 (got %d)", n)
		}
		r.MaxTokens = n
	case "stream":
		r.Stream, err = wire.Flag(f)
	case "system":
		r.System, err = parseSystem(f.Val)
	case "tools":
		r.Tools, err = parseTools(f.Val)
	case "tool_choice":
		r.ToolChoice, err = parseToolChoice(f.Val)
	case "thinking":
		r.Thinking, err = parseThinking(f.Val)
	case "stop_sequences":
		if json.Unmarshal(f.Val, &r.StopSequences) != nil {
			return invalid("stop_sequences must be an array of strings")
		}
	default:
		return r.setting(f)
	}
	return err
}

// settingChecks are the members kept raw, each with what it must be:
// sampling numbers, and the objects a native upstream reads.
var settingChecks = map[string]func(wire.Field) error{
	"temperature": number, "top_p": number, "top_k": number,
	"metadata": object, "output_config": object, "context_management": object,
}

// setting checks a member that is kept raw and keeps it as the client
// wrote it; a member that is not kept passes unread.
func (r *Request) setting(f wire.Field) error {
	check, ok := settingChecks[f.Key]
	if !ok {
		return nil
	}
	if err := check(f); err != nil {
		return err
	}
	*r.kept(f.Key) = f.Val
	return nil
}

func number(f wire.Field) error {
	var n float64
	if json.Unmarshal(f.Val, &n) != nil {
		return invalid("%s must be a number", f.Key)
	}
	return nil
}

func object(f wire.Field) error {
	if !wire.IsObject(f.Val) {
		return invalid("%s must be an object", f.Key)
	}
	return nil
}

// kept is where the member key is kept as the client wrote it.
func (r *Request) kept(key string) *json.RawMessage {
	return map[string]*json.RawMessage{"temperature": &r.Temperature, "top_p": &r.TopP, "top_k": &r.TopK,
		"metadata": &r.Metadata, "output_config": &r.OutputConfig, "context_management": &r.ContextManagement}[key]
}

func parseSystem(raw json.RawMessage) ([]Block, error) {
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, invalid("system must be a string or an array of text blocks")
		}
		return []Block{{Type: BlockText, Text: s}}, nil
	}
	blocks, err := parseBlocks(raw, "system")
	if err != nil {
		return nil, err
	}
	for i, b := range blocks {
		if b.Type != BlockText {
			return nil, invalid("system[%d] must be a text block (got %q)", i, b.Type)
		}
	}
	return blocks, nil
}

func parseMessages(raw json.RawMessage) (turns []Message, system []Block, err error) {
	all, err := wire.Elements(raw, "messages", "messages must be an array of message objects", parseMessage)
	if err != nil {
		return nil, nil, err
	}
	if len(all) == 0 {
		return nil, nil, invalid("messages must not be empty")
	}
	for _, m := range all {
		if m.Role == "system" {
			system = append(system, m.Content...)
			continue
		}
		turns = append(turns, m)
	}
	return turns, system, nil
}

func parseMessage(raw json.RawMessage) (Message, error) {
	var m Message
	fields, err := wire.Fields(raw)
	if err != nil {
		return m, invalid("a message must be an object")
	}
	seen := make(map[string]bool, len(fields))
	haveContent := false
	for _, f := range fields {
		lower := wire.FoldKey(f.Key)
		if seen[lower] {
			return m, invalid("the field %q appears twice", f.Key)
		}
		seen[lower] = true
		switch lower {
		case "role":
			if err := json.Unmarshal(f.Val, &m.Role); err != nil {
				return m, invalid("role must be a string")
			}
		case "content":
			haveContent = true
			if len(f.Val) > 0 && f.Val[0] == '"' {
				var s string
				if err := json.Unmarshal(f.Val, &s); err != nil {
					return m, invalid("content must be a string or an array of content blocks")
				}
				m.Content = []Block{{Type: BlockText, Text: s}}
				continue
			}
			if m.Content, err = parseBlocks(f.Val, "content"); err != nil {
				return m, err
			}
		}
	}
	switch m.Role {
	case "user", "assistant", "system":
	case "":
		return m, invalid("role is required")
	default:
		return m, invalid("role must be \"user\", \"assistant\" or \"system\" (got %q)", m.Role)
	}
	if !haveContent {
		return m, invalid("content is required")
	}
	return m, nil
}

func parseBlocks(raw json.RawMessage, where string) ([]Block, error) {
	return wire.Elements(raw, where, where+" must be a string or an array of content blocks", parseBlock)
}

type wireBlock struct {
	Type      *string         `json:"type"`
	Text      *string         `json:"text"`
	ID        *string         `json:"id"`
	Name      *string         `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID *string         `json:"tool_use_id"`
	IsError   *bool           `json:"is_error"`
	Content   json.RawMessage `json:"content"`
	Source    json.RawMessage `json:"source"`
	Thinking  *string         `json:"thinking"`
	Signature *string         `json:"signature"`
	Data      *string         `json:"data"`
}

func parseBlock(raw json.RawMessage) (Block, error) {
	if !wire.IsObject(raw) {
		return Block{}, invalid("a content block must be an object")
	}
	var w wireBlock
	if err := json.Unmarshal(raw, &w); err != nil {
		return Block{}, invalid("a content block does not parse: %v", err)
	}
	if w.Type == nil || *w.Type == "" {
		return Block{}, invalid("a content block needs a type")
	}
	b := Block{Type: *w.Type, Raw: raw}
	switch b.Type {
	case BlockText:
		if w.Text == nil {
			return b, invalid("a text block needs text")
		}
		b.Text = *w.Text
	case BlockImage:
		src, err := parseImageSource(w.Source)
		if err != nil {
			return b, err
		}
		b.Source = src
	case BlockToolUse:
		if w.ID == nil || *w.ID == "" || w.Name == nil || *w.Name == "" {
			return b, invalid("a tool_use block needs an id and a name")
		}
		if !wire.IsObject(w.Input) {
			return b, invalid("a tool_use block's input must be an object")
		}
		b.ID, b.Name, b.Input = *w.ID, *w.Name, w.Input
	case BlockToolResult:
		return b, b.readToolResult(&w)
	case BlockThinking:
		if w.Thinking == nil {
			return b, invalid("a thinking block needs thinking")
		}
		b.Text = *w.Thinking
		if w.Signature != nil {
			b.Signature = *w.Signature
		}
	case BlockRedactedThinking:
		if w.Data != nil {
			b.Data = *w.Data
		}
	}
	return b, nil
}

// readToolResult reads a tool_result block: its tool_use_id, is_error, and
// content (a string, or blocks whose text is its Text).
func (b *Block) readToolResult(w *wireBlock) error {
	if w.ToolUseID == nil || *w.ToolUseID == "" {
		return invalid("a tool_result block needs a tool_use_id")
	}
	b.ToolUseID = *w.ToolUseID
	if w.IsError != nil {
		b.IsError = *w.IsError
	}
	if len(w.Content) == 0 || wire.IsNull(w.Content) {
		return nil
	}
	if w.Content[0] == '"' {
		if err := json.Unmarshal(w.Content, &b.Text); err != nil {
			return invalid("a tool_result's content must be a string or an array of blocks")
		}
		return nil
	}
	inner, err := parseBlocks(w.Content, "tool_result content")
	if err != nil {
		return err
	}
	for _, c := range inner {
		if c.Type == BlockText {
			b.Text += c.Text
		}
	}
	b.Content = inner
	return nil
}

func parseImageSource(raw json.RawMessage) (*ImageSource, error) {
	var s struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
		URL       string `json:"url"`
		FileID    string `json:"file_id"`
	}
	if !wire.IsObject(raw) || json.Unmarshal(raw, &s) != nil {
		return nil, invalid("an image block needs a source object")
	}
	switch s.Type {
	case "base64":
		if s.Data == "" || s.MediaType == "" {
			return nil, invalid("a base64 image source needs media_type and data")
		}
	case "url":
		if s.URL == "" {
			return nil, invalid("a url image source needs a url")
		}
	case "file":
		if s.FileID == "" {
			return nil, invalid("a file image source needs a file_id")
		}
	default:
		return nil, invalid("an image source's type must be base64, url or file (got %q)", s.Type)
	}
	return &ImageSource{Type: s.Type, MediaType: s.MediaType, Data: s.Data, URL: s.URL, FileID: s.FileID}, nil
}

func parseTools(raw json.RawMessage) ([]Tool, error) {
	return wire.Array(raw, "tools must be an array of tool objects", parseTool)
}

func parseTool(i int, item json.RawMessage) (Tool, error) {
	var w struct {
		Type        *string         `json:"type"`
		Name        *string         `json:"name"`
		Description *string         `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
	if !wire.IsObject(item) || json.Unmarshal(item, &w) != nil {
		return Tool{}, invalid("tools[%d] must be a tool object", i)
	}
	t := Tool{Raw: item}
	if w.Type != nil {
		t.Type = *w.Type
	}
	if w.Name != nil {
		t.Name = *w.Name
	}
	if w.Description != nil {
		t.Description = *w.Description
	}
	if len(w.InputSchema) > 0 && !wire.IsNull(w.InputSchema) {
		if !wire.IsObject(w.InputSchema) {
			return t, invalid("tools[%d].input_schema must be an object", i)
		}
		t.InputSchema = w.InputSchema
	}
	if (t.Type == "" || t.Type == "custom") && (t.Name == "" || t.InputSchema == nil) {
		return t, invalid("tools[%d] needs a name and an input_schema", i)
	}
	return t, nil
}

func parseToolChoice(raw json.RawMessage) (*ToolChoice, error) {
	var w struct {
		Type                   string `json:"type"`
		Name                   string `json:"name"`
		DisableParallelToolUse bool   `json:"disable_parallel_tool_use"`
	}
	if !wire.IsObject(raw) || json.Unmarshal(raw, &w) != nil {
		return nil, invalid("tool_choice must be an object")
	}
	switch w.Type {
	case "auto", "any", "none":
	case "tool":
		if w.Name == "" {
			return nil, invalid("tool_choice of type tool needs a name")
		}
	default:
		return nil, invalid("tool_choice.type must be auto, any, tool or none (got %q)", w.Type)
	}
	return &ToolChoice{Type: w.Type, Name: w.Name, DisableParallelToolUse: w.DisableParallelToolUse}, nil
}

func parseThinking(raw json.RawMessage) (*Thinking, error) {
	fields, err := wire.Fields(raw)
	if err != nil {
		return nil, invalid("thinking must be an object")
	}
	t := &Thinking{}
	haveBudget := false
	for _, f := range fields {
		switch f.Key {
		case "type":
			if err := json.Unmarshal(f.Val, &t.Type); err != nil {
				return nil, invalid("thinking.type must be a string")
			}
		case "budget_tokens":
			if t.BudgetTokens, err = wire.Count(f.Val); err != nil {
				return nil, invalid("thinking.budget_tokens must be a non-negative integer: %v", err)
			}
			haveBudget = true
		}
	}
	switch t.Type {
	case "enabled":
		if !haveBudget {
			return nil, invalid("thinking of type enabled needs budget_tokens")
		}
	case "disabled", "adaptive":
	default:
		return nil, invalid("thinking.type must be enabled, disabled or adaptive (got %q)", t.Type)
	}
	return t, nil
}
