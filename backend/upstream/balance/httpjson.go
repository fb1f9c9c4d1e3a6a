package balance

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/upstream"
)

// maxBody bounds a balance answer; a billing reply is a few kilobytes.
const maxBody = 4 << 20

// HTTPJSON GETs a URL and reads the number at a dotted field.
type HTTPJSON struct {
	url, token string
	path       []string
	client     *http.Client
}

// NewHTTPJSON builds an http-json source. rawURL may contain {model}.
func NewHTTPJSON(rawURL, field, token string, client *http.Client) (*HTTPJSON, error) {
	u, err := url.Parse(strings.ReplaceAll(rawURL, "{model}", "m"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, ledger.Errorf(ledger.CodeInvalidRequest, "http-json balance source needs an http(s) URL (got %q)", rawURL)
	}
	if strings.TrimSpace(field) == "" {
		return nil, ledger.Errorf(ledger.CodeInvalidRequest, "http-json balance source needs a field such as data.available")
	}
	return &HTTPJSON{url: rawURL, token: token, path: strings.Split(field, "."), client: client}, nil
}

// Kind names the source in snapshots.
func (*HTTPJSON) Kind() string { return KindHTTPJSON }

// Balance GETs the URL and returns the number at the field.
func (h *HTTPJSON) Balance(ctx context.Context, model string) (ledger.Units, error) {
	target := strings.ReplaceAll(h.url, "{model}", url.PathEscape(model))
	status, body, err := upstream.GetJSON(ctx, h.client, target, h.token, maxBody)
	if err != nil {
		return 0, fmt.Errorf("balance of %s: %w", model, err)
	}
	if status/100 != 2 {
		return 0, fmt.Errorf("balance of %s: HTTP %d", model, status)
	}
	u, err := Field(body, h.path)
	if err != nil {
		return 0, fmt.Errorf("balance of %s: %w", model, err)
	}
	return u, nil
}

// Field reads the number at path in a JSON document: a JSON number or a
// string holding one. Array elements are addressed by index ("list.0.n").
func Field(doc []byte, path []string) (ledger.Units, error) {
	v, err := upstream.DecodeJSON(doc)
	if err != nil {
		return 0, fmt.Errorf("not JSON: %w", err)
	}
	for i, key := range path {
		switch node := v.(type) {
		case map[string]any:
			next, ok := node[key]
			if !ok {
				return 0, fmt.Errorf("field %s: missing", strings.Join(path[:i+1], "."))
			}
			v = next
		case []any:
			n, err := strconv.Atoi(key)
			if err != nil || n < 0 || n >= len(node) {
				return 0, fmt.Errorf("field %s: no such element", strings.Join(path[:i+1], "."))
			}
			v = node[n]
		default:
			return 0, fmt.Errorf("field %s: not an object", strings.Join(path[:i], "."))
		}
	}
	switch n := v.(type) {
	case json.Number:
		return ParseUnits(n.String())
	case string:
		return ParseUnits(n)
	}
	return 0, fmt.Errorf("field %s: not a number", strings.Join(path, "."))
}
