// Package upstream is quotagate's OpenAI-compatible client: the only package
// that makes outbound HTTP calls to model providers.
//
// The gateway reads the client's whole request body first and hands it over
// as bytes; nothing is streamed through httputil.ReverseProxy, which aborted
// about 2 % of streaming calls in our measurements (golang/go#40747).
// Cancelling the context of a Send closes the upstream connection.
package upstream

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

// Defaults for Options.
const (
	DefaultDialTimeout           = 10 * time.Second
	DefaultResponseHeaderTimeout = 60 * time.Second
	DefaultIdleConnTimeout       = 90 * time.Second
	DefaultMaxIdleConnsPerHost   = 64
	// Per connection, net/http's 4 KiB defaults cost 8 KiB a stream in
	// flight, 8 MiB for 1,000 slow streams. A request goes out once, its
	// body past the buffer written straight through; events are small and
	// a larger read goes straight into the SSE reader's own buffer.
	DefaultWriteBufferBytes = 1 << 10
	DefaultReadBufferBytes  = 1 << 10
)

// Options configures one upstream.
type Options struct {
	Name    string   // the upstream's name in the config and the ledger ("demo", "ark")
	BaseURL string   // ends before /chat/completions, e.g. https://api.openai.com/v1
	APIKey  string   // sent as Authorization: Bearer (as x-api-key to MessagesPath); never logged
	Models  []string // model ids this upstream serves
	// APIKeys is a pool used in turn instead of APIKey (never both). A key
	// the provider refuses (401, 403, 402, a 429 saying the quota is spent)
	// rests for KeyCooldown (default DefaultKeyCooldown), and the call is
	// sent once more with the next key; with every key resting the upstream
	// refuses (KeysRestingError). Now is the pool's clock (default time.Now).
	APIKeys     []string
	KeyCooldown time.Duration
	Now         func() time.Time
	// Protocols are the API protocols the upstream speaks natively ("chat",
	// "responses", "messages"); empty means chat completions only.
	Protocols []string
	// ReasoningSwitch is the chat-completions switch for thinking a
	// translation maps onto ("reasoning_effort", "thinking" or "": none).
	ReasoningSwitch string

	DialTimeout           time.Duration // TCP connect (+TLS handshake) limit
	ResponseHeaderTimeout time.Duration // from request written to response headers
	// Transport replaces the client's own transport (tests, benchmarks).
	Transport http.RoundTripper
}

// Client calls one OpenAI-compatible upstream.
type Client struct {
	opts Options
	hc   *http.Client
	base string
	pool *keyPool // nil without APIKeys
}

// New returns a client with its own http.Transport.
func New(opts Options) (*Client, error) {
	if opts.Name == "" {
		return nil, errors.New("upstream: name is required")
	}
	if !strings.HasPrefix(opts.BaseURL, "http://") && !strings.HasPrefix(opts.BaseURL, "https://") {
		return nil, fmt.Errorf("upstream %s: base URL %q must start with http:// or https://", opts.Name, opts.BaseURL)
	}
	if opts.APIKey != "" && len(opts.APIKeys) > 0 {
		return nil, fmt.Errorf("upstream %s: give api_key or api_keys, not both", opts.Name)
	}
	var pool *keyPool
	if len(opts.APIKeys) > 0 {
		if slices.Contains(opts.APIKeys, "") {
			return nil, fmt.Errorf("upstream %s: api_keys holds an empty key", opts.Name)
		}
		pool = newKeyPool(opts.Name, slices.Clone(opts.APIKeys), opts.KeyCooldown, opts.Now)
	}
	if opts.DialTimeout <= 0 {
		opts.DialTimeout = DefaultDialTimeout
	}
	if opts.ResponseHeaderTimeout <= 0 {
		opts.ResponseHeaderTimeout = DefaultResponseHeaderTimeout
	}
	rt := opts.Transport
	if rt == nil {
		rt = &http.Transport{
			Proxy:                 nil, // a local gateway must not send provider keys through an ambient proxy
			DialContext:           (&net.Dialer{Timeout: opts.DialTimeout, KeepAlive: 30 * time.Second}).DialContext,
			TLSHandshakeTimeout:   opts.DialTimeout,
			ResponseHeaderTimeout: opts.ResponseHeaderTimeout,
			IdleConnTimeout:       DefaultIdleConnTimeout,
			MaxIdleConnsPerHost:   DefaultMaxIdleConnsPerHost,
			WriteBufferSize:       DefaultWriteBufferBytes,
			ReadBufferSize:        DefaultReadBufferBytes,
			ForceAttemptHTTP2:     true,
			TLSClientConfig:       &tls.Config{MinVersion: tls.VersionTLS12},
		}
	}
	hc := &http.Client{
		Transport: rt,
		// A redirect could carry the key elsewhere; providers do not redirect API calls.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return &Client{opts: opts, hc: hc, base: strings.TrimRight(opts.BaseURL, "/"), pool: pool}, nil
}

// Name is the upstream's configured name.
func (c *Client) Name() string { return c.opts.Name }

// Models returns the model ids this upstream serves.
func (c *Client) Models() []string { return append([]string(nil), c.opts.Models...) }

// Serves reports whether this upstream serves model.
func (c *Client) Serves(model string) bool {
	return slices.Contains(c.opts.Models, model)
}

// ReasoningSwitch names the upstream's switch for thinking ("" for none).
func (c *Client) ReasoningSwitch() string { return c.opts.ReasoningSwitch }

// Speaks reports whether this upstream speaks protocol natively.
func (c *Client) Speaks(protocol string) bool {
	if len(c.opts.Protocols) == 0 {
		return protocol == "chat"
	}
	return slices.Contains(c.opts.Protocols, protocol)
}

// Response is an upstream answer whose body the caller must close.
type Response struct {
	StatusCode int
	Header     http.Header
	Body       io.ReadCloser
}

// SendError is a failed Send. Sent tells whether any byte of the request may
// have reached the provider: when false the provider provably did no work and
// the hold may be released with this error as evidence.
type SendError struct {
	Upstream string
	Sent     bool
	Timeout  bool // the dial or the response-header wait timed out
	Err      error
}

func (e *SendError) Error() string {
	what := "could not be reached"
	if kr := (*KeysRestingError)(nil); errors.As(e.Err, &kr) {
		return kr.Error()
	}
	if e.Sent {
		what = "gave no response"
	}
	return fmt.Sprintf("upstream %s %s: %v", e.Upstream, what, e.Err)
}

func (e *SendError) Unwrap() error { return e.Err }

// Evidence is the sentence recorded in the ledger when a hold is released on
// this error.
func (e *SendError) Evidence() string {
	if errors.Is(e.Err, context.Canceled) {
		return fmt.Sprintf("upstream_not_sent: cancelled before the request reached %s", e.Upstream)
	}
	if kr := (*KeysRestingError)(nil); errors.As(e.Err, &kr) {
		return "upstream_keys_resting: " + kr.Error()
	}
	return fmt.Sprintf("upstream_connect_error: %s: %v", e.Upstream, e.Err)
}

// Send posts body to /chat/completions. header carries extra request headers
// (may be nil). The returned body streams; cancel ctx to close the connection.
func (c *Client) Send(ctx context.Context, body []byte, header http.Header) (*Response, error) {
	return c.Post(ctx, "/chat/completions", body, header)
}

// Keys is the upstream's key pool as the dashboard shows it (nil without
// one): last four characters and rest, never a key.
func (c *Client) Keys() []KeyState {
	if c.pool == nil {
		return nil
	}
	return c.pool.states()
}

// Post is Send to another path under the base URL ("/responses",
// "/messages"), for a protocol the upstream speaks natively. With a key
// pool, an answer that refuses the key (keyRefused) rests it and the call
// goes once more to the next key: the provider did no work for a refused
// key, and it is the same upstream, so this is one attempt.
func (c *Client) Post(ctx context.Context, path string, body []byte, header http.Header) (*Response, error) {
	if c.pool == nil {
		return c.post(ctx, path, body, header, c.opts.APIKey)
	}
	for try := 0; ; try++ {
		i, key, err := c.pool.take()
		if err != nil {
			return nil, err
		}
		resp, err := c.post(ctx, path, body, header, key)
		if err != nil {
			return nil, err
		}
		why, resp := keyRefused(resp)
		if why == "" {
			return resp, nil
		}
		c.pool.rest(i, why)
		if try > 0 {
			return resp, nil
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, keyRefusalBytes))
		resp.Body.Close()
	}
}

// post sends one request with key (none when empty).
func (c *Client) post(ctx context.Context, path string, body []byte, header http.Header, key string) (*Response, error) {
	var wrote atomic.Bool
	trace := &httptrace.ClientTrace{
		WroteHeaderField: func(string, []string) { wrote.Store(true) },
		WroteHeaders:     func() { wrote.Store(true) },
	}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodPost,
		c.base+path, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("upstream %s request: %w", c.opts.Name, err)
	}
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	switch {
	case key == "":
	case path == MessagesPath:
		// Anthropic's API (and every Anthropic-compatible endpoint) takes
		// the key as x-api-key; Authorization is for its OAuth tokens.
		req.Header.Set("X-Api-Key", key)
	case strings.HasPrefix(path, GeminiModelsPath):
		// The Gemini API takes the key as x-goog-api-key, never in the URL
		// (a key in a URL ends up in logs).
		req.Header.Set("X-Goog-Api-Key", key)
	default:
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		var ne net.Error
		timeout := errors.As(err, &ne) && ne.Timeout()
		return nil, &SendError{Upstream: c.opts.Name, Sent: wrote.Load(), Timeout: timeout, Err: err}
	}
	return &Response{StatusCode: resp.StatusCode, Header: resp.Header, Body: resp.Body}, nil
}

// MessagesPath is the Anthropic Messages API's path under a base URL.
const MessagesPath = "/messages"

// GeminiModelsPath starts the Gemini API's paths under a base URL
// (…/v1beta): GeminiModelsPath + model + ":generateContent".
const GeminiModelsPath = "/models/"

// CloseIdleConnections closes idle keep-alive connections.
func (c *Client) CloseIdleConnections() { c.hc.CloseIdleConnections() }
