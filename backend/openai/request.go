package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/quotagate/quotagate/backend/internal/jsonobj"
	"github.com/quotagate/quotagate/backend/ledger"
)

// ChatRequest is what the gateway needs from an OpenAI chat-completions
// request body. The raw body is kept so the request can be forwarded as the
// client wrote it (see UpstreamBody).
type ChatRequest struct {
	Model    string
	Messages []Message
	Stream   bool
	// IncludeUsage is true when the CLIENT asked for the usage chunk
	// (stream_options.include_usage). The gateway always asks the upstream for
	// it, and relays the usage chunk only when the client asked.
	IncludeUsage bool
	// MaxCompletionTokens and MaxTokens are the client's output caps; nil
	// when absent. OutputCap combines them.
	MaxCompletionTokens *int64
	MaxTokens           *int64
	// N is the number of choices asked for (default 1); each choice may
	// produce up to the output cap, so the reserve multiplies by N.
	N int64
	// ToolsJSON is the raw `tools` array (function definitions), which the
	// provider bills as prompt tokens; nil when absent.
	ToolsJSON []byte

	raw    []byte
	fields []field // top-level members in body order, for UpstreamBody
}

// Message is one chat message with its text flattened.
type Message struct {
	Role string
	Name string
	// Text is the message's content: a string content, or its text parts
	// joined without separator. Media parts are counted, never fetched.
	Text string
	// ToolCalls is the function names and arguments of an assistant's
	// tool_calls, concatenated; the provider bills them as prompt tokens.
	ToolCalls string
	// Images counts image_url parts; OtherParts counts parts that are
	// neither text nor image (input_audio, file, …).
	Images     int
	OtherParts int
}

// Raw returns the request body exactly as the client sent it.
func (r *ChatRequest) Raw() []byte { return r.raw }

// OutputCap returns the client's output cap and whether one was given:
// max_completion_tokens or max_tokens, and the larger of the two when both
// are given — OpenAI honours the first, many compatible providers only the
// second, and the reserve must cover whichever the upstream obeys.
func (r *ChatRequest) OutputCap() (int64, bool) {
	switch {
	case r.MaxCompletionTokens != nil && r.MaxTokens != nil:
		return max(*r.MaxCompletionTokens, *r.MaxTokens), true
	case r.MaxCompletionTokens != nil:
		return *r.MaxCompletionTokens, true
	case r.MaxTokens != nil:
		return *r.MaxTokens, true
	}
	return 0, false
}

type field struct {
	key string
	val json.RawMessage
}

// forbiddenFields are refused at the top level of a request body
// (ledger.ForbiddenRequestFields, the same at every door).
var forbiddenFields = ledger.ForbiddenRequestFields

// knownFields are the members this parser reads. Another member whose name
// differs from one of these only in letter case is refused: a
// case-insensitive upstream could read it where the gateway did not.
var knownFields = map[string]bool{
	"model": true, "messages": true, "stream": true, "stream_options": true,
	"max_tokens": true, "max_completion_tokens": true, "n": true, "tools": true,
}

// foldKey is the form under which encoding/json — and so any upstream
// written in Go — matches a member name to a field: case-insensitively,
// with Unicode folding ("ſ" is "s", the Kelvin sign "K" is "k").
func foldKey(k string) string { return strings.ToLower(strings.ToUpper(k)) }

func invalid(format string, args ...any) error {
	return ledger.Errorf(ledger.CodeInvalidRequest, format, args...)
}

// ParseChatRequest parses and checks an OpenAI chat-completions body. Every
// error is a *ledger.Error with CodeInvalidRequest and a message for a person.
func ParseChatRequest(body []byte) (*ChatRequest, error) {
	// JSON is UTF-8 (RFC 8259). encoding/json would quietly turn invalid bytes
	// into U+FFFD while the raw body goes upstream as sent, so the gateway
	// would meter one text and forward another.
	if !utf8.Valid(body) {
		return nil, invalid("the request body is not valid UTF-8")
	}
	fields, err := objectFields(body)
	if err != nil {
		return nil, invalid("the request body is not a JSON object: %v", err)
	}
	req := &ChatRequest{raw: body, fields: fields, N: 1}
	seen := make(map[string]string, len(fields))
	var haveModel, haveMessages bool
	for _, f := range fields {
		lower := foldKey(f.key)
		if prev, dup := seen[lower]; dup {
			return nil, invalid("the field %q appears twice (also as %q); send it once", f.key, prev)
		}
		seen[lower] = f.key
		if why, bad := forbiddenFields[lower]; bad {
			return nil, invalid("the field %q is not allowed: %s", f.key, why)
		}
		if knownFields[lower] && f.key != lower {
			return nil, invalid("the field %q must be spelled %q", f.key, lower)
		}
		if isNull(f.val) && f.key != "model" && f.key != "messages" {
			continue // null means "not given" for optional members
		}
		switch f.key {
		case "model":
			if err := json.Unmarshal(f.val, &req.Model); err != nil || req.Model == "" {
				return nil, invalid("model must be a non-empty string")
			}
			haveModel = true
		case "messages":
			if req.Messages, err = parseMessages(f.val); err != nil {
				return nil, err
			}
			haveMessages = true
		case "stream":
			if err := json.Unmarshal(f.val, &req.Stream); err != nil {
				return nil, invalid("stream must be true or false")
			}
		case "stream_options":
			so, err := objectFields(f.val)
			if err != nil {
				return nil, invalid("stream_options must be an object")
			}
			for _, o := range so {
				if o.key == "include_usage" && !isNull(o.val) {
					if err := json.Unmarshal(o.val, &req.IncludeUsage); err != nil {
						return nil, invalid("stream_options.include_usage must be true or false")
					}
				}
			}
		case "max_tokens":
			if req.MaxTokens, err = parseOutputCap("max_tokens", f.val); err != nil {
				return nil, err
			}
		case "max_completion_tokens":
			if req.MaxCompletionTokens, err = parseOutputCap("max_completion_tokens", f.val); err != nil {
				return nil, err
			}
		case "n":
			n, err := parseCount("n", f.val)
			if err != nil {
				return nil, err
			}
			if *n < 1 {
				return nil, invalid("n must be at least 1 (got %d)", *n)
			}
			req.N = *n
		case "tools":
			if len(f.val) == 0 || f.val[0] != '[' {
				return nil, invalid("tools must be an array")
			}
			req.ToolsJSON = f.val
		}
	}
	if !haveModel {
		return nil, invalid("model is required")
	}
	if !haveMessages {
		return nil, invalid("messages is required")
	}
	if !req.Stream {
		req.IncludeUsage = false // usage is always in a non-streaming body
	}
	return req, nil
}

// parseCount reads a non-negative integer no larger than ledger.MaxUnits.
func parseCount(name string, raw json.RawMessage) (*int64, error) {
	v, err := parseUnitsNumber(raw)
	if err != nil {
		return nil, invalid("%s must be a non-negative integer: %v", name, err)
	}
	return &v, nil
}

// parseOutputCap reads an output cap, which must be at least 1: a provider
// that ignores a 0 would answer in full against a reserve of the input alone.
func parseOutputCap(name string, raw json.RawMessage) (*int64, error) {
	v, err := parseCount(name, raw)
	if err == nil && *v < 1 {
		err = invalid("%s must be at least 1 (got %d)", name, *v)
	}
	return v, err
}

func parseMessages(raw json.RawMessage) ([]Message, error) {
	notArray := invalid("messages must be an array of message objects")
	// raw is a value objectFields took, so valid JSON: it can be scanned.
	if items, ok := scanArray(raw); ok {
		var msgs []Message
		for _, item := range items {
			m, err := parseMessage(item)
			if err != nil {
				return nil, invalid("messages[%d]: %s", len(msgs), ledger.ErrorMessage(err))
			}
			msgs = append(msgs, m)
		}
		if len(msgs) == 0 {
			return nil, invalid("messages must not be empty")
		}
		return msgs, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return nil, notArray
	}
	var msgs []Message
	for dec.More() {
		var item json.RawMessage
		if err := dec.Decode(&item); err != nil {
			return nil, notArray
		}
		m, err := parseMessage(item)
		if err != nil {
			return nil, invalid("messages[%d]: %s", len(msgs), ledger.ErrorMessage(err))
		}
		msgs = append(msgs, m)
	}
	if _, err := dec.Token(); err != nil { // closing ']'
		return nil, notArray
	}
	if len(msgs) == 0 {
		return nil, invalid("messages must not be empty")
	}
	return msgs, nil
}

// jsonString decodes a JSON string exactly as json.Unmarshal does, for
// any raw (FuzzJSONString).
func jsonString(raw []byte, s *string) error {
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' && literalInside(raw[1:n-1]) {
		return bodyString(raw, s)
	}
	return json.Unmarshal(raw, s)
}

// bodyString is jsonString for a value of a body that passed
// ParseChatRequest's checks — valid UTF-8 and valid JSON — so a string is
// unescaped in one pass (issue 15: json.Unmarshal validated every message
// content a second time, half of the parse of a 600 KB conversation).
func bodyString(raw []byte, s *string) error {
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' {
		if v, ok := unquote(raw[1 : n-1]); ok {
			*s = v
			return nil
		}
	}
	return json.Unmarshal(raw, s)
}

// literalInside reports whether b is valid UTF-8 with no control byte and
// no quote that is not escaped: the inside of a string literal, as far as
// unquote needs (it declines a malformed escape itself).
func literalInside(b []byte) bool {
	ascii := true
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c < 0x20 || c == '"':
			return false
		case c == '\\':
			i++ // the escaped byte; unquote checks the escape
		case c >= 0x80:
			ascii = false
		}
	}
	return ascii || utf8.Valid(b)
}

// unquote unescapes the inside of a JSON string literal that is valid JSON
// and valid UTF-8, as encoding/json does (a lone or broken surrogate escape
// is U+FFFD); ok is false for a malformed escape, which the caller leaves
// to encoding/json. FuzzUnquote holds it to json.Unmarshal.
func unquote(body []byte) (string, bool) {
	esc := bytes.IndexByte(body, '\\')
	if esc < 0 {
		return string(body), true
	}
	out := make([]byte, 0, len(body))
	for i := 0; ; {
		if esc < 0 {
			return string(append(out, body[i:]...)), true
		}
		out = append(out, body[i:i+esc]...)
		i += esc
		if i+1 >= len(body) {
			return "", false
		}
		switch c := body[i+1]; c {
		case '"', '\\', '/':
			out = append(out, c)
			i += 2
		case 'b':
			out, i = append(out, '\b'), i+2
		case 'f':
			out, i = append(out, '\f'), i+2
		case 'n':
			out, i = append(out, '\n'), i+2
		case 'r':
			out, i = append(out, '\r'), i+2
		case 't':
			out, i = append(out, '\t'), i+2
		case 'u':
			r := hex4(body[i+2:])
			if r < 0 {
				return "", false
			}
			i += 6
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if i+1 < len(body) && body[i] == '\\' && body[i+1] == 'u' {
					r2 = hex4(body[i+2:])
				}
				if dec := utf16.DecodeRune(r, r2); dec != unicode.ReplacementChar {
					r, i = dec, i+6
				} else {
					r = unicode.ReplacementChar
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", false
		}
		esc = bytes.IndexByte(body[i:], '\\')
	}
}

// hex4 reads the four hex digits of a \u escape, or returns -1.
func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

func parseMessage(raw json.RawMessage) (Message, error) {
	var m Message
	fields, ok := scanObject(raw) // raw is an element of a valid array
	if !ok {
		var err error
		if fields, err = objectFields(raw); err != nil {
			return m, invalid("a message must be an object")
		}
	}
	seen := make(map[string]bool, len(fields))
	for _, f := range fields {
		lower := foldKey(f.key)
		if seen[lower] {
			return m, invalid("the field %q appears twice", f.key)
		}
		seen[lower] = true
		if isNull(f.val) {
			continue
		}
		switch lower {
		case "role":
			if err := bodyString(f.val, &m.Role); err != nil {
				return m, invalid("role must be a string")
			}
		case "name":
			if err := bodyString(f.val, &m.Name); err != nil {
				return m, invalid("name must be a string")
			}
		case "content":
			if err := parseContent(f.val, &m); err != nil {
				return m, err
			}
		case "tool_calls":
			if err := parseToolCalls(f.val, &m); err != nil {
				return m, err
			}
		}
	}
	if m.Role == "" {
		return m, invalid("role is required")
	}
	return m, nil
}

func parseContent(raw json.RawMessage, m *Message) error {
	if raw[0] == '"' {
		if err := bodyString(raw, &m.Text); err != nil {
			return invalid("content must be a string or an array of parts")
		}
		return nil
	}
	var parts []struct {
		Type    string  `json:"type"`
		Text    *string `json:"text"`
		Refusal *string `json:"refusal"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return invalid("content must be a string or an array of parts")
	}
	var b strings.Builder
	for i, p := range parts {
		switch p.Type {
		case "text":
			if p.Text == nil {
				return invalid("content[%d] is a text part without text", i)
			}
			b.WriteString(*p.Text)
		case "refusal": // an assistant's earlier refusal is text too
			if p.Refusal != nil {
				b.WriteString(*p.Refusal)
			}
		case "image_url":
			m.Images++ // never downloaded: a configured number of units instead
		case "":
			return invalid("content[%d] has no type", i)
		default:
			m.OtherParts++
		}
	}
	m.Text = b.String()
	return nil
}

func parseToolCalls(raw json.RawMessage, m *Message) error {
	var calls []struct {
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &calls); err != nil {
		return invalid("tool_calls must be an array of calls")
	}
	var b strings.Builder
	for _, c := range calls {
		b.WriteString(c.Function.Name)
		b.WriteString(c.Function.Arguments)
	}
	m.ToolCalls = b.String()
	return nil
}

// UpstreamBody returns the body to send upstream: the client's body
// unchanged, except that a streaming request always asks for the usage chunk
// (stream_options.include_usage = true) — the usage is the settlement
// evidence. Every other member, and every other stream_options member, is
// kept as the client wrote it.
func (r *ChatRequest) UpstreamBody() ([]byte, error) {
	if !r.Stream || r.IncludeUsage {
		return r.raw, nil
	}
	var b bytes.Buffer
	b.Grow(len(r.raw) + 48)
	b.WriteByte('{')
	wrote := false
	for _, f := range r.fields {
		if wrote {
			b.WriteByte(',')
		}
		wrote = true
		key, _ := json.Marshal(f.key)
		b.Write(key)
		b.WriteByte(':')
		if f.key != "stream_options" {
			b.Write(f.val)
			continue
		}
		opts, err := withIncludeUsage(f.val)
		if err != nil {
			return nil, err
		}
		b.Write(opts)
	}
	if _, ok := r.field("stream_options"); !ok {
		if wrote {
			b.WriteByte(',')
		}
		b.WriteString(`"stream_options":{"include_usage":true}`)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func (r *ChatRequest) field(key string) (json.RawMessage, bool) {
	for _, f := range r.fields {
		if f.key == key {
			return f.val, true
		}
	}
	return nil, false
}

// withIncludeUsage rewrites a stream_options object (or null) so that
// include_usage is true, keeping its other members in order.
func withIncludeUsage(raw json.RawMessage) ([]byte, error) {
	if isNull(raw) {
		return []byte(`{"include_usage":true}`), nil
	}
	fields, err := objectFields(raw)
	if err != nil {
		return nil, fmt.Errorf("openai: rewrite stream_options: %w", err)
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for _, f := range fields {
		if f.key == "include_usage" {
			continue
		}
		key, _ := json.Marshal(f.key)
		b.Write(key)
		b.WriteByte(':')
		b.Write(f.val)
		b.WriteByte(',')
	}
	b.WriteString(`"include_usage":true}`)
	return b.Bytes(), nil
}

func isNull(raw json.RawMessage) bool { return jsonobj.IsNull(raw) }

// objectFields decodes one JSON object into its members in order
// (jsonobj.Fields: duplicate and differently-cased keys are seen).
func objectFields(data []byte) ([]field, error) {
	if jsonobj.Valid(data) {
		if out, ok := scanObject(data); ok {
			return out, nil
		}
	}
	return decodeObjectFields(data) // says what is wrong, or reads what the scan did not take
}

// scanObject splits a valid JSON object into its members without decoding
// or copying the values (issue 15: a 600 KB conversation took three
// json.Decoder passes, each copying every message). ok is false when data is
// not an object or a key needs unescaping: the decoder then takes it.
func scanObject(data []byte) (out []field, ok bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return nil, true
	}
	for i < len(data) {
		if data[i] != '"' {
			return nil, false
		}
		end := skipValue(data, i)
		key := data[i+1 : end-1]
		// An escape, or bytes that are not UTF-8 (the decoder makes them
		// U+FFFD): the decoder's reading of the key is the one to take.
		if bytes.IndexByte(key, '\\') >= 0 || !utf8.Valid(key) {
			return nil, false
		}
		i = skipSpace(data, end)
		i = skipSpace(data, i+1) // the ':'
		vend := skipValue(data, i)
		out = append(out, field{key: string(key), val: json.RawMessage(data[i:vend])})
		i = skipSpace(data, vend)
		if i < len(data) && data[i] == '}' {
			return out, true
		}
		i = skipSpace(data, i+1) // the ','
	}
	return nil, false
}

// scanArray splits a valid JSON array into its elements, like scanObject.
func scanArray(data []byte) (out []json.RawMessage, ok bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return nil, false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return nil, true
	}
	for i < len(data) {
		end := skipValue(data, i)
		out = append(out, json.RawMessage(data[i:end]))
		i = skipSpace(data, end)
		if i < len(data) && data[i] == ']' {
			return out, true
		}
		i = skipSpace(data, i+1)
	}
	return nil, false
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the valid JSON value that starts at data[i].
func skipValue(data []byte, i int) int {
	switch data[i] {
	case '"':
		// The next quote not escaped by an odd run of backslashes;
		// IndexByte scans long contents many bytes at a time.
		for j := i + 1; j < len(data); {
			q := bytes.IndexByte(data[j:], '"')
			if q < 0 {
				return len(data)
			}
			j += q
			k := j - 1
			for k > i && data[k] == '\\' {
				k--
			}
			if (j-1-k)%2 == 0 {
				return j + 1
			}
			j++
		}
		return len(data)
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				j = skipValue(data, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(data)
	}
	j := i
	for ; j < len(data); j++ {
		switch data[j] {
		case ' ', '\t', '\r', '\n', ',', ']', '}':
			return j
		}
	}
	return j
}

// decodeObjectFields is objectFields by encoding/json, for what the scan
// does not take; its errors say what is malformed.
func decodeObjectFields(data []byte) ([]field, error) {
	fs, err := jsonobj.Fields(data)
	out := make([]field, len(fs))
	for i, f := range fs {
		out[i] = field{key: f.Key, val: f.Val}
	}
	return out, err
}
