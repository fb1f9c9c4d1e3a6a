// Package lookup asks a provider what one call cost, after the fact: the
// per-call usage endpoints some providers publish (OpenRouter's
// GET /generation?id=…, or any endpoint that answers JSON for an id). It
// makes the HTTP call and reads the answer into a Figure; what a figure is
// worth as evidence, and when to ask, is backend/evidence's.
package lookup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/quotagate/quotagate/backend/upstream"
)

// Kinds of lookup, as written in an upstream's usage_lookup.kind.
const (
	KindOpenRouter = "openrouter" // GET {base_url}/generation?id={id}
	KindHTTPJSON   = "http-json"  // GET url with {id}, numbers at dotted fields
)

// Spec is an upstream's usage_lookup. For http-json, URL holds {id} and
// Input and Output name dotted fields ("data.tokens.in"); Cached,
// Reasoning, Cost and ID are optional fields (ID, when given, must name
// the call asked about).
type Spec struct {
	Kind                                   string
	URL                                    string
	Input, Output, Cached, Reasoning, Cost string
	ID                                     string
}

// openRouter is OpenRouter's generation endpoint's fields.
var openRouter = Spec{Kind: KindOpenRouter, Input: "data.native_tokens_prompt", Output: "data.native_tokens_completion",
	Cached: "data.native_tokens_cached", Reasoning: "data.native_tokens_reasoning", Cost: "data.total_cost", ID: "data.id"}

// Figure is what the provider reports of one call: tokens in its own
// count (cached and reasoning are parts of input and output), and its
// cost as it wrote it ("" when it gave none).
type Figure struct {
	ProviderID                       string
	Input, Output, Cached, Reasoning int64
	Cost                             string
}

// ErrNotYet: the provider does not know the call (yet): HTTP 404. Usage
// endpoints answer a few seconds after a call ended; ask again later.
var ErrNotYet = errors.New("the provider does not know the call yet (HTTP 404)")

// Refusal is an answer that cannot be evidence: malformed, inconsistent
// or about another call. Asking again will not change it.
type Refusal struct{ Why string }

func (r *Refusal) Error() string { return "refused as evidence: " + r.Why }

func refused(format string, args ...any) error { return &Refusal{Why: fmt.Sprintf(format, args...)} }

// maxBody bounds an answer: a generation's record is a few kilobytes.
const maxBody = 1 << 20

// Client looks calls up at one upstream.
type Client struct {
	spec    Spec
	url     string // with {id}
	key     string // sent as a Bearer token only to the upstream's own host
	sendKey bool
	hc      *http.Client
}

// New checks spec and returns its client; baseURL and key are the
// upstream's.
func New(spec Spec, baseURL, key string, hc *http.Client) (*Client, error) {
	switch spec.Kind {
	case KindOpenRouter:
		spec = openRouter
		spec.URL = strings.TrimRight(baseURL, "/") + "/generation?id={id}"
	case KindHTTPJSON:
		// The configuration checked the spec field by field (config.UsageLookup).
		if !strings.Contains(spec.URL, "{id}") || spec.Input == "" || spec.Output == "" {
			return nil, fmt.Errorf("usage_lookup: an http-json lookup needs a url with {id}, input and output")
		}
	default:
		return nil, fmt.Errorf("usage_lookup.kind %q is neither %s nor %s", spec.Kind, KindOpenRouter, KindHTTPJSON)
	}
	if hc == nil {
		hc = http.DefaultClient
	}
	c := &Client{spec: spec, url: spec.URL, key: key, hc: hc}
	lu, err1 := url.Parse(strings.ReplaceAll(spec.URL, "{id}", "x"))
	bu, err2 := url.Parse(baseURL)
	c.sendKey = err1 == nil && err2 == nil && lu.Host == bu.Host
	return c, nil
}

// target is the URL that asks about id.
func (c *Client) target(id string) string {
	esc := url.PathEscape(id)
	if q := strings.IndexByte(c.url, '?'); q >= 0 && q < strings.Index(c.url, "{id}") {
		esc = url.QueryEscape(id)
	}
	return strings.ReplaceAll(c.url, "{id}", esc)
}

// Look asks the provider about call id. It returns the figure and the
// answer's body; ErrNotYet for a 404; a *Refusal for an answer that cannot
// be evidence; any other error (a 5xx, no connection) may pass.
func (c *Client) Look(ctx context.Context, id string) (Figure, []byte, error) {
	token := ""
	if c.sendKey {
		token = c.key
	}
	status, body, err := upstream.GetJSON(ctx, c.hc, c.target(id), token, maxBody)
	if err != nil {
		return Figure{}, nil, fmt.Errorf("look up %s: %w", id, err)
	}
	switch {
	case status == http.StatusNotFound:
		return Figure{}, body, ErrNotYet
	case status/100 != 2:
		return Figure{}, body, fmt.Errorf("look up %s: HTTP %d", id, status)
	}
	f, err := c.read(body, id)
	return f, body, err
}

// read reads the figure for call id out of an answer.
func (c *Client) read(body []byte, id string) (Figure, error) {
	doc, err := upstream.DecodeJSON(body)
	if err != nil {
		return Figure{}, refused("the answer is not JSON: %v", err)
	}
	f := Figure{ProviderID: id}
	if c.spec.ID != "" {
		got, ok := at(doc, c.spec.ID).(string)
		if ok && got != id {
			return Figure{}, refused("the answer is about call %q, not %q", got, id)
		}
	}
	for _, n := range []struct {
		field    string
		into     *int64
		required bool
	}{{c.spec.Input, &f.Input, true}, {c.spec.Output, &f.Output, true},
		{c.spec.Cached, &f.Cached, false}, {c.spec.Reasoning, &f.Reasoning, false}} {
		if n.field == "" {
			continue
		}
		v, err := count(at(doc, n.field), n.field, n.required)
		if err != nil {
			return Figure{}, err
		}
		*n.into = v
	}
	if f.Cached > f.Input {
		return Figure{}, refused("cached tokens %d exceed the input tokens %d", f.Cached, f.Input)
	}
	if f.Reasoning > f.Output {
		return Figure{}, refused("reasoning tokens %d exceed the output tokens %d", f.Reasoning, f.Output)
	}
	if c.spec.Cost != "" {
		switch v := at(doc, c.spec.Cost).(type) {
		case json.Number:
			f.Cost = v.String()
		case string:
			f.Cost = v
		}
	}
	return f, nil
}

// at is the value at a dotted path in doc (array elements by index), nil
// when there is none.
func at(doc any, path string) any {
	v := doc
	for _, key := range strings.Split(path, ".") {
		switch node := v.(type) {
		case map[string]any:
			v = node[key]
		case []any:
			i, err := strconv.Atoi(key)
			if err != nil || i < 0 || i >= len(node) {
				return nil
			}
			v = node[i]
		default:
			return nil
		}
	}
	return v
}

// count reads a token count: a whole non-negative JSON number, or a
// string holding one; nil is 0 unless required.
func count(v any, field string, required bool) (int64, error) {
	var s string
	switch n := v.(type) {
	case nil:
		if required {
			return 0, refused("the answer has no %s", field)
		}
		return 0, nil
	case json.Number:
		s = n.String()
	case string:
		s = n
	default:
		return 0, refused("%s is not a number", field)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, refused("%s is %q, not a whole number of tokens", field, s)
	}
	return n, nil
}
