package gemini

import (
	"encoding/json"
	"strings"

	"github.com/quotagate/quotagate/backend/wire"
)

// Request is what the gateway needs from a generateContent body. The model
// and whether it streams come from the URL
// (/v1beta/models/{model}:streamGenerateContent), not the body. The raw
// body is kept: a native upstream gets it exactly as the client wrote it.
type Request struct {
	Model    string
	Stream   bool
	Contents []Content
	// System is systemInstruction; nil when absent.
	System     *Content
	Tools      []Tool
	ToolConfig *ToolConfig
	Generation GenerationConfig
	// SafetySettings are forwarded natively and dropped by a translation;
	// CachedContent names a cache the provider reads from (its tokens come
	// back as cachedContentTokenCount).
	SafetySettings json.RawMessage
	CachedContent  string

	raw []byte
}

// Raw returns the body exactly as the client sent it.
func (r *Request) Raw() []byte { return r.raw }

// Content is one turn: role "user" or "model" ("" is the user's, and the
// old "function" role is a user turn of function responses), and its parts.
type Content struct {
	Role  string
	Parts []Part
}

// Part kinds.
const (
	PartText             = "text"
	PartInlineData       = "inlineData"
	PartFileData         = "fileData"
	PartFunctionCall     = "functionCall"
	PartFunctionResponse = "functionResponse"
	PartOther            = "other" // executableCode, codeExecutionResult, …: kept raw
)

// Part is one part of a turn. Kind says which fields are used; Raw keeps
// the part as sent (thoughtSignature and the rest) for a native upstream.
type Part struct {
	Kind string
	Text string
	// Thought marks a text part as the model's thought summary.
	Thought bool
	// MimeType and Data are inlineData's (base64) or fileData's (Data is
	// then the fileUri).
	MimeType, Data string
	// Call is a functionCall, Response a functionResponse: ID (optional),
	// Name, and Args / Response as JSON objects.
	ID, Name string
	Args     json.RawMessage
	Response json.RawMessage
	Raw      json.RawMessage
}

// Image reports whether an inline or file part is an image.
func (p Part) Image() bool { return strings.HasPrefix(p.MimeType, "image/") }

// Tool is one entry of tools: its functionDeclarations, or another tool
// (googleSearch, codeExecution, urlContext, …) kept in Raw only.
type Tool struct {
	Functions []FunctionDeclaration
	Raw       json.RawMessage
}

// FunctionDeclaration is one function the model may call. Schema is
// parametersJsonSchema (JSON Schema) when given, else parameters (Google's
// OpenAPI subset, whose type names are upper case); nil for none.
type FunctionDeclaration struct {
	Name, Description string
	Schema            json.RawMessage
	// OpenAPI: Schema is the OpenAPI-subset parameters.
	OpenAPI bool
}

// ToolConfig is toolConfig.functionCallingConfig: Mode AUTO, ANY, NONE or
// VALIDATED, and the functions ANY may call.
type ToolConfig struct {
	Mode                 string
	AllowedFunctionNames []string
}

// GenerationConfig is what the gateway reads of generationConfig; Raw
// keeps the whole object for a native upstream.
type GenerationConfig struct {
	// MaxOutputTokens is the output cap, 0 when not given.
	MaxOutputTokens int64
	// CandidateCount is how many answers are asked for, 0 when not given.
	CandidateCount int64
	StopSequences  []string
	// Temperature, TopP, TopK, Seed, PresencePenalty, FrequencyPenalty are
	// kept as the client wrote the numbers.
	Temperature, TopP, TopK, Seed, PresencePenalty, FrequencyPenalty json.RawMessage
	// ResponseMimeType, and the schema of a JSON answer: ResponseJSONSchema
	// (JSON Schema) or ResponseSchema (the OpenAPI subset).
	ResponseMimeType                   string
	ResponseSchema, ResponseJSONSchema json.RawMessage
	Thinking                           *ThinkingConfig
	Raw                                json.RawMessage
}

// ThinkingConfig is generationConfig.thinkingConfig.
type ThinkingConfig struct {
	IncludeThoughts bool
	// Budget is thinkingBudget; -1 is "dynamic", and HasBudget false when
	// not given.
	Budget    int64
	HasBudget bool
	// Level is thinkingLevel (LOW, HIGH, …), "" when not given.
	Level string
}

// On reports whether the client asked the model to think: a budget other
// than 0, or a level.
func (t *ThinkingConfig) On() bool {
	return t != nil && ((t.HasBudget && t.Budget != 0) || t.Level != "" || t.IncludeThoughts)
}

// bodyMembers are the top-level members the gateway reads, in their one
// spelling (Google's JSON also accepts snake_case; a twin in another
// spelling is refused, since the upstream could read it where the gateway
// did not).
var bodyMembers = []string{"model", "contents", "systemInstruction", "tools", "toolConfig",
	"generationConfig", "safetySettings", "cachedContent"}

// ParseRequest parses and checks a generateContent body for model (from
// the URL) that streams or not. Every error is a *wire.RequestError with a
// message for a person.
func ParseRequest(model string, stream bool, body []byte) (*Request, error) {
	if model == "" {
		return nil, invalid("the model is missing from the URL (/v1beta/models/{model}:generateContent)")
	}
	req := &Request{Model: model, Stream: stream, raw: body}
	haveContents := false
	_, err := wire.Body{}.Read(body, func(f wire.Field) error {
		key, err := spelled(f.Key, bodyMembers)
		if err != nil {
			return err
		}
		if key == "contents" {
			haveContents = true
		}
		return req.member(key, f)
	})
	switch {
	case err != nil:
		return nil, err
	case !haveContents:
		return nil, invalid("contents is required")
	}
	return req, nil
}

// spelled returns the known member key is, refusing another spelling of
// one (letter case, snake_case); "" for an unknown member.
func spelled(key string, known []string) (string, error) {
	folded := wire.FoldKey(strings.ReplaceAll(key, "_", ""))
	for _, k := range known {
		if wire.FoldKey(k) != folded {
			continue
		}
		if k != key {
			return "", invalid("the field %q must be spelled %q", key, k)
		}
		return k, nil
	}
	return "", nil
}

func (r *Request) member(key string, f wire.Field) (err error) {
	switch key {
	case "model":
		// The SDKs leave it out; one that is given must name the URL's model.
		var m string
		if json.Unmarshal(f.Val, &m) != nil || (m != r.Model && m != "models/"+r.Model) {
			return invalid("model in the body must be the URL's model %q", r.Model)
		}
	case "contents":
		r.Contents, err = parseContents(f.Val)
	case "systemInstruction":
		var c Content
		if c, err = parseContent(f.Val, true); err == nil {
			r.System = &c
		}
		if err != nil {
			err = invalid("systemInstruction: %s", wire.Reason(err))
		}
	case "tools":
		r.Tools, err = parseTools(f.Val)
	case "toolConfig":
		r.ToolConfig, err = parseToolConfig(f.Val)
	case "generationConfig":
		r.Generation, err = parseGeneration(f.Val)
	case "safetySettings":
		if _, err := wire.Items(f.Val); err != nil {
			return invalid("safetySettings must be an array")
		}
		r.SafetySettings = f.Val
	case "cachedContent":
		if json.Unmarshal(f.Val, &r.CachedContent) != nil {
			return invalid("cachedContent must be a string")
		}
	}
	return err
}

func parseContents(raw json.RawMessage) ([]Content, error) {
	out, err := wire.Elements(raw, "contents", "contents must be an array of content objects", func(item json.RawMessage) (Content, error) {
		return parseContent(item, false)
	})
	if err == nil && len(out) == 0 {
		return nil, invalid("contents must not be empty")
	}
	return out, err
}

// parseContent reads one content object; a system instruction's role is
// not read (Google ignores it).
func parseContent(raw json.RawMessage, system bool) (Content, error) {
	var c Content
	fields, err := wire.Unique(raw, "a content")
	if err != nil {
		return c, err
	}
	haveParts := false
	for _, f := range fields {
		key, err := spelled(f.Key, []string{"role", "parts"})
		if err != nil {
			return c, err
		}
		switch key {
		case "role":
			if json.Unmarshal(f.Val, &c.Role) != nil {
				return c, invalid("role must be a string")
			}
		case "parts":
			haveParts = true
			if c.Parts, err = parseParts(f.Val); err != nil {
				return c, err
			}
		}
	}
	if !haveParts {
		return c, invalid("parts is required")
	}
	if system {
		c.Role = "system"
		return c, nil
	}
	switch c.Role {
	case "", "user", "function":
		c.Role = "user"
	case "model":
	default:
		return c, invalid("role must be \"user\" or \"model\" (got %q)", c.Role)
	}
	return c, nil
}

func parseParts(raw json.RawMessage) ([]Part, error) {
	return wire.Elements(raw, "parts", "parts must be an array of part objects", parsePart)
}

// partMembers are a part's members the gateway reads.
var partMembers = []string{"text", "thought", "inlineData", "fileData", "functionCall", "functionResponse"}

// wirePart is a part as Google writes it (camelCase).
type wirePart struct {
	Text       *string `json:"text"`
	Thought    bool    `json:"thought"`
	InlineData *struct {
		MimeType string `json:"mimeType"`
		Data     string `json:"data"`
	} `json:"inlineData"`
	FileData *struct {
		MimeType string `json:"mimeType"`
		FileURI  string `json:"fileUri"`
	} `json:"fileData"`
	FunctionCall     *wireCall `json:"functionCall"`
	FunctionResponse *struct {
		ID       string          `json:"id"`
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse"`
}

type wireCall struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

func parsePart(raw json.RawMessage) (Part, error) {
	fields, err := wire.Unique(raw, "a part")
	if err != nil {
		return Part{}, err
	}
	for _, f := range fields {
		if _, err := spelled(f.Key, partMembers); err != nil {
			return Part{}, err
		}
	}
	var w wirePart
	if err := json.Unmarshal(raw, &w); err != nil {
		return Part{}, invalid("a part does not parse: %v", err)
	}
	p := Part{Raw: raw, Thought: w.Thought}
	switch {
	case w.Text != nil:
		p.Kind, p.Text = PartText, *w.Text
	case w.InlineData != nil:
		if w.InlineData.MimeType == "" {
			return p, invalid("inlineData needs a mimeType")
		}
		p.Kind, p.MimeType, p.Data = PartInlineData, w.InlineData.MimeType, w.InlineData.Data
	case w.FileData != nil:
		if w.FileData.FileURI == "" {
			return p, invalid("fileData needs a fileUri")
		}
		p.Kind, p.MimeType, p.Data = PartFileData, w.FileData.MimeType, w.FileData.FileURI
	case w.FunctionCall != nil:
		c := w.FunctionCall
		p.Kind, p.ID, p.Name = PartFunctionCall, c.ID, c.Name
		p.Args, err = namedObject("functionCall", c.Name, "args", c.Args)
	case w.FunctionResponse != nil:
		fr := w.FunctionResponse
		p.Kind, p.ID, p.Name = PartFunctionResponse, fr.ID, fr.Name
		p.Response, err = namedObject("functionResponse", fr.Name, "response", fr.Response)
	default:
		p.Kind = PartOther
	}
	return p, err
}

// namedObject checks a functionCall's or functionResponse's name, and
// reads its member (args, response) as an object: {} when absent or null.
func namedObject(kind, name, member string, raw json.RawMessage) (json.RawMessage, error) {
	if name == "" {
		return nil, invalid("a %s needs a name", kind)
	}
	return object(raw, "a "+kind+"'s "+member)
}

// object is raw when it is a JSON object, {} when absent or null.
func object(raw json.RawMessage, what string) (json.RawMessage, error) {
	if len(raw) == 0 || wire.IsNull(raw) {
		return json.RawMessage("{}"), nil
	}
	if !wire.IsObject(raw) {
		return nil, invalid("%s must be an object", what)
	}
	return raw, nil
}

func parseTools(raw json.RawMessage) ([]Tool, error) {
	return wire.Elements(raw, "tools", "tools must be an array of tool objects", parseTool)
}

func parseTool(raw json.RawMessage) (Tool, error) {
	t := Tool{Raw: raw}
	err := eachKnown(raw, "a tool", []string{"functionDeclarations"}, "", func(_ string, val json.RawMessage) (err error) {
		t.Functions, err = parseDeclarations(val)
		return err
	})
	return t, err
}

// eachKnown reads an object inside the body (what names it, as
// wire.Unique does) and calls each with every member among known that is
// not null, in order. A known member spelled otherwise is refused (spelled),
// the reason under "in: " unless in is "".
func eachKnown(raw json.RawMessage, what string, known []string, in string, each func(key string, val json.RawMessage) error) error {
	fields, err := wire.Unique(raw, what)
	if err != nil {
		return err
	}
	for _, f := range fields {
		key, err := spelled(f.Key, known)
		if err != nil && in != "" {
			return invalid("%s: %s", in, wire.Reason(err))
		}
		if err != nil {
			return err
		}
		if key == "" || wire.IsNull(f.Val) {
			continue
		}
		if err := each(key, f.Val); err != nil {
			return err
		}
	}
	return nil
}

func parseDeclarations(raw json.RawMessage) ([]FunctionDeclaration, error) {
	return wire.Array(raw, "functionDeclarations must be an array", parseDeclaration)
}

func parseDeclaration(i int, item json.RawMessage) (FunctionDeclaration, error) {
	var w struct {
		Name                 string          `json:"name"`
		Description          string          `json:"description"`
		Parameters           json.RawMessage `json:"parameters"`
		ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema"`
	}
	if !wire.IsObject(item) || json.Unmarshal(item, &w) != nil || w.Name == "" {
		return FunctionDeclaration{}, invalid("functionDeclarations[%d] needs a name", i)
	}
	d := FunctionDeclaration{Name: w.Name, Description: w.Description}
	switch {
	case len(w.ParametersJSONSchema) > 0 && !wire.IsNull(w.ParametersJSONSchema):
		d.Schema = w.ParametersJSONSchema
	case len(w.Parameters) > 0 && !wire.IsNull(w.Parameters):
		d.Schema, d.OpenAPI = w.Parameters, true
	}
	if d.Schema != nil && !wire.IsObject(d.Schema) {
		return d, invalid("functionDeclarations[%d]'s parameters must be an object", i)
	}
	return d, nil
}

func parseToolConfig(raw json.RawMessage) (*ToolConfig, error) {
	var w struct {
		FunctionCallingConfig *struct {
			Mode                 string   `json:"mode"`
			AllowedFunctionNames []string `json:"allowedFunctionNames"`
		} `json:"functionCallingConfig"`
	}
	if !wire.IsObject(raw) || json.Unmarshal(raw, &w) != nil {
		return nil, invalid("toolConfig must be an object")
	}
	if w.FunctionCallingConfig == nil {
		return nil, nil
	}
	c := &ToolConfig{Mode: strings.ToUpper(w.FunctionCallingConfig.Mode), AllowedFunctionNames: w.FunctionCallingConfig.AllowedFunctionNames}
	switch c.Mode {
	case "", "MODE_UNSPECIFIED", "AUTO", "ANY", "NONE", "VALIDATED":
	default:
		return nil, invalid("toolConfig.functionCallingConfig.mode must be AUTO, ANY, NONE or VALIDATED (got %q)", c.Mode)
	}
	return c, nil
}

// generationMembers are generationConfig's members the gateway reads.
var generationMembers = []string{"maxOutputTokens", "candidateCount", "stopSequences", "temperature", "topP", "topK",
	"seed", "presencePenalty", "frequencyPenalty", "responseMimeType", "responseSchema", "responseJsonSchema", "thinkingConfig"}

func parseGeneration(raw json.RawMessage) (GenerationConfig, error) {
	g := GenerationConfig{Raw: raw}
	err := eachKnown(raw, "generationConfig", generationMembers, "generationConfig", func(key string, val json.RawMessage) error {
		if err := g.member(key, val); err != nil {
			return invalid("generationConfig.%s", wire.Reason(err))
		}
		return nil
	})
	return g, err
}

func (g *GenerationConfig) member(key string, val json.RawMessage) (err error) {
	switch key {
	case "maxOutputTokens", "candidateCount":
		n, err := wire.Count(val)
		if err != nil || n < 1 {
			return invalid("%s must be a positive integer", key)
		}
		*map[string]*int64{"maxOutputTokens": &g.MaxOutputTokens, "candidateCount": &g.CandidateCount}[key] = n
	case "stopSequences":
		if json.Unmarshal(val, &g.StopSequences) != nil {
			return invalid("stopSequences must be an array of strings")
		}
	case "temperature", "topP", "topK", "seed", "presencePenalty", "frequencyPenalty":
		var n float64
		if json.Unmarshal(val, &n) != nil {
			return invalid("%s must be a number", key)
		}
		*map[string]*json.RawMessage{"temperature": &g.Temperature, "topP": &g.TopP, "topK": &g.TopK, "seed": &g.Seed,
			"presencePenalty": &g.PresencePenalty, "frequencyPenalty": &g.FrequencyPenalty}[key] = val
	case "responseMimeType":
		if json.Unmarshal(val, &g.ResponseMimeType) != nil {
			return invalid("responseMimeType must be a string")
		}
	case "responseSchema", "responseJsonSchema":
		if !wire.IsObject(val) {
			return invalid("%s must be an object", key)
		}
		*map[string]*json.RawMessage{"responseSchema": &g.ResponseSchema, "responseJsonSchema": &g.ResponseJSONSchema}[key] = val
	case "thinkingConfig":
		g.Thinking, err = parseThinking(val)
	}
	return err
}

func parseThinking(raw json.RawMessage) (*ThinkingConfig, error) {
	fields, err := wire.Unique(raw, "thinkingConfig")
	if err != nil {
		return nil, err
	}
	t := &ThinkingConfig{}
	for _, f := range fields {
		key, err := spelled(f.Key, []string{"includeThoughts", "thinkingBudget", "thinkingLevel"})
		if err != nil {
			return nil, invalid("thinkingConfig: %s", wire.Reason(err))
		}
		if wire.IsNull(f.Val) {
			continue
		}
		switch key {
		case "includeThoughts":
			if json.Unmarshal(f.Val, &t.IncludeThoughts) != nil {
				return nil, invalid("thinkingConfig.includeThoughts must be true or false")
			}
		case "thinkingBudget":
			if string(f.Val) == "-1" {
				t.Budget, t.HasBudget = -1, true
				continue
			}
			if t.Budget, err = wire.Count(f.Val); err != nil {
				return nil, invalid("thinkingConfig.thinkingBudget must be -1 or a non-negative integer: %v", err)
			}
			t.HasBudget = true
		case "thinkingLevel":
			if json.Unmarshal(f.Val, &t.Level) != nil {
				return nil, invalid("thinkingConfig.thinkingLevel must be a string")
			}
		}
	}
	return t, nil
}
