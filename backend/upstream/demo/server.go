package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/quotagate/quotagate/backend/clock"
	"github.com/quotagate/quotagate/backend/openai"
)

// DefaultModels are the model ids the demo serves when Options.Models is empty.
var DefaultModels = []string{"demo-chat"}

// Options configures a demo upstream.
type Options struct {
	Addr   string   // listen address; default "127.0.0.1:0"
	Models []string // served model ids; default DefaultModels
	APIKey string   // when set, requests must carry "Authorization: Bearer <APIKey>" or "x-api-key: <APIKey>"
	Plan   Plan     // the plan of requests that choose none
	// PromptUnits and CompletionUnits count the usage the demo reports. The
	// default counts UTF-8 bytes of the message contents and of the output
	// text, which is exactly what utf8-bytes-v1 measures (seed 000: 6 + 9).
	// A server on the tiktoken meter passes the meter's own counts (the
	// request's input estimate, the tokens of the text for the model), so
	// that the demo's usage is trusted there too.
	PromptUnits     func(body []byte) int64
	CompletionUnits func(model, text string) int64
	// ResponsesPromptUnits counts the input of a /v1/responses body; the
	// default is the UTF-8 bytes of instructions, message text parts and
	// function outputs (what utf8-bytes-v1 measures).
	ResponsesPromptUnits func(body []byte) int64
	// MessagesPromptUnits counts the input of a /v1/messages body; the
	// default is what utf8-bytes-v1 measures there (the bytes of
	// system text, text blocks and tool_result text).
	MessagesPromptUnits func(body []byte) int64
	// CompletionsPromptUnits counts the input of a /v1/completions body
	// (default: the UTF-8 bytes of prompt and suffix);
	// EmbeddingsPromptUnits of a /v1/embeddings body (default: the UTF-8
	// bytes of every text input and the length of every token-id input).
	CompletionsPromptUnits func(body []byte) int64
	EmbeddingsPromptUnits  func(body []byte) int64
	// GeminiPromptUnits counts the input of a Gemini body for model (from
	// its URL); the default is what utf8-bytes-v1 measures there (the bytes
	// of the system instruction's and the turns' text parts and of function
	// responses).
	GeminiPromptUnits func(model string, body []byte) int64
	// KeepRequests bounds the request records kept for Stats (the newest are
	// kept; default 1000), so a long-running demo does not grow.
	KeepRequests int
	// BlockedWrite is how long one write+flush may take before it counts as
	// blocked by a reader that does not read (default 50ms).
	BlockedWrite time.Duration
}

// Request is what the demo observed of one call.
type Request struct {
	Seq           int
	Header        http.Header
	Body          []byte
	Plan          Plan
	Stream        bool
	IncludeUsage  bool
	ChunksWritten int   // content parts written to the socket
	BytesWritten  int64 // response body bytes written
	BlockedWrites int   // writes still blocked after Options.BlockedWrite
	Disconnected  bool  // the client went away before the plan finished
	Done          bool  // the handler has returned
}

// Stats is a consistent copy of what the demo observed so far.
type Stats struct {
	Requests    []Request // the newest Options.KeepRequests records, oldest first
	Received    int       // requests received since start
	Disconnects int
	InFlight    int
}

// Server is a running demo upstream on its own loopback listener.
type Server struct {
	opts Options
	ln   net.Listener
	srv  *http.Server

	mu      sync.Mutex
	plan    Plan
	reqs    []*Request
	seq     int
	discs   int
	flight  int
	changed chan struct{}  // closed and replaced on every observation
	held    chan struct{}  // Hold's: closed on release; nil when not held
	errored map[string]int // Plan.Times: errors answered per plan string
	keys    keyBook        // RefuseKey's answers and the calls seen per key
	// The usage lookup (lookup.go): each chat call's usage by id, how
	// often each id was asked about, and the script.
	usages  map[string]lookupUsage
	asked   map[string]int
	lookup  Lookup
	lookups int
}

// Start listens and serves until Close.
func Start(opts Options) (*Server, error) {
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	if len(opts.Models) == 0 {
		opts.Models = DefaultModels
	}
	if opts.CompletionUnits == nil {
		opts.CompletionUnits = func(_, s string) int64 { return int64(len(s)) }
	}
	if opts.KeepRequests <= 0 {
		opts.KeepRequests = 1000
	}
	if opts.BlockedWrite <= 0 {
		opts.BlockedWrite = 50 * time.Millisecond
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("demo upstream listen %s: %w", opts.Addr, err)
	}
	s := &Server{opts: opts, ln: ln, plan: opts.Plan, changed: make(chan struct{}), asked: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("GET /v1/generation", s.generation)
	mux.HandleFunc("POST /v1/responses", s.responsesHandler)
	mux.HandleFunc("GET /v1/models", s.models)
	mux.HandleFunc("POST /v1/messages", s.messagesHandler)
	mux.HandleFunc("POST /v1/completions", s.completionsHandler)
	mux.HandleFunc("POST /v1/embeddings", s.embeddingsHandler)
	mux.HandleFunc("POST /v1/models/{call}", s.geminiHandler)
	s.srv = &http.Server{Handler: s.auth(mux), ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
	return s, nil
}

// Hold keeps every answer that has sent its first part from sending the
// next until release is called: a test's way to keep a stream, and its
// run, going for as long as it needs, whatever the machine's load.
func (s *Server) Hold() (release func()) {
	ch := make(chan struct{})
	s.mu.Lock()
	s.held = ch
	s.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			if s.held == ch {
				s.held = nil
			}
			s.mu.Unlock()
			close(ch)
		})
	}
}

// URL is the base URL of the OpenAI-compatible API, ending in /v1.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() + "/v1" }

// Models returns the served model ids.
func (s *Server) Models() []string { return append([]string(nil), s.opts.Models...) }

// Close stops the listener and every open connection.
func (s *Server) Close() error { return s.srv.Close() }

// SetPlan changes the plan of requests that choose none.
func (s *Server) SetPlan(p Plan) {
	s.mu.Lock()
	s.plan = p
	s.mu.Unlock()
}

// Stats returns a copy of what the demo observed.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Stats{Disconnects: s.discs, InFlight: s.flight, Received: s.seq, Requests: make([]Request, len(s.reqs))}
	for i, r := range s.reqs {
		st.Requests[i] = *r
	}
	return st
}

// Wait blocks until cond holds for the observed stats or ctx ends. Tests wait
// on what the demo saw instead of sleeping.
func (s *Server) Wait(ctx context.Context, cond func(Stats) bool) error {
	for {
		s.mu.Lock()
		ch := s.changed
		s.mu.Unlock()
		if cond(s.Stats()) {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("demo upstream wait: %w (stats %+v)", ctx.Err(), s.summary())
		}
	}
}

// WaitDisconnects waits until at least n disconnects were observed.
func (s *Server) WaitDisconnects(ctx context.Context, n int) error {
	return s.Wait(ctx, func(st Stats) bool { return st.Disconnects >= n })
}

// WaitRequests waits until at least n requests were received.
func (s *Server) WaitRequests(ctx context.Context, n int) error {
	return s.Wait(ctx, func(st Stats) bool { return st.Received >= n })
}

func (s *Server) summary() string {
	st := s.Stats()
	var b strings.Builder
	fmt.Fprintf(&b, "requests=%d disconnects=%d in_flight=%d", st.Received, st.Disconnects, st.InFlight)
	for _, r := range st.Requests {
		fmt.Fprintf(&b, " [#%d %s chunks=%d bytes=%d blocked=%d disc=%v done=%v]",
			r.Seq, r.Plan.Kind, r.ChunksWritten, r.BytesWritten, r.BlockedWrites, r.Disconnected, r.Done)
	}
	return b.String()
}

// update applies f to the record under the lock and wakes waiters.
func (s *Server) update(f func()) {
	s.mu.Lock()
	f()
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
}

func (s *Server) auth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.refusedKey(w, r) {
			return
		}
		if s.opts.APIKey != "" && apiKey(r) != s.opts.APIKey {
			writeJSON(w, http.StatusUnauthorized, errorBody("invalid api key for the demo upstream", "invalid_request_error", "invalid_api_key"))
			return
		}
		w.Header().Set("X-Demo", "simulated")
		next.ServeHTTP(w, r)
	})
}

func (s *Server) models(w http.ResponseWriter, _ *http.Request) {
	list := openai.ModelListJSON{Object: "list"}
	for _, m := range s.opts.Models {
		list.Data = append(list.Data, openai.ModelJSON{ID: m, Object: "model", Created: 1700000000, OwnedBy: "quotagate-demo (simulated)"})
	}
	writeJSON(w, http.StatusOK, list)
}

// chatRequest is the part of an OpenAI chat request the demo reads.
type chatRequest struct {
	Model         string `json:"model"`
	Stream        bool   `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

// contents returns the text of each message (string content, or the text
// parts of an array content).
func (c *chatRequest) contents() []string {
	var out []string
	for _, m := range c.Messages {
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			out = append(out, s)
			continue
		}
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(m.Content, &parts) == nil {
			for _, p := range parts {
				if p.Type == "text" {
					out = append(out, p.Text)
				}
			}
		}
	}
	return out
}

func (c *chatRequest) lastUser() string {
	for i := len(c.Messages) - 1; i >= 0; i-- {
		if c.Messages[i].Role == "user" {
			var s string
			_ = json.Unmarshal(c.Messages[i].Content, &s)
			return s
		}
	}
	return ""
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	body, ok := readRequest(w, r, func(b []byte) error { return json.Unmarshal(b, &req) }, chatRefusal)
	if !ok {
		return
	}
	x := s.begin(w, r, body, &req, req.lastUser(), req.StreamOptions != nil && req.StreamOptions.IncludeUsage)
	if x == nil {
		return
	}
	defer s.done(x)
	defer s.remember(x)
	x.run()
}

// readRequest reads a request's body and parses it; a body that does not
// parse is answered 400 with refusal's error body, in the protocol's shape.
func readRequest(w http.ResponseWriter, r *http.Request, parse func([]byte) error, refusal func(msg string) any) ([]byte, bool) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, false
	}
	if err := parse(body); err != nil {
		writeJSON(w, http.StatusBadRequest, refusal("the demo upstream could not parse the request: "+err.Error()))
		return nil, false
	}
	return body, true
}

// chatRefusal is an unparsable body's error in OpenAI's shape.
func chatRefusal(msg string) any { return errorBody(msg, "invalid_request_error", "invalid_request") }

// done ends an exchange begin started: it no longer counts as in flight.
func (s *Server) done(x *exchange) {
	s.update(func() {
		x.rec.Done = true
		s.flight--
	})
}

// begin checks the model, chooses the request's plan (header, directive in
// lastUser, default), records the request and returns its exchange; nil when
// it already answered an error.
func (s *Server) begin(w http.ResponseWriter, r *http.Request, body []byte, req *chatRequest, lastUser string, includeUsage bool) *exchange {
	if !s.serves(req.Model) {
		writeJSON(w, http.StatusNotFound, errorBody(fmt.Sprintf("the demo upstream has no model %q", req.Model), "invalid_request_error", "model_not_found"))
		return nil
	}
	s.mu.Lock()
	plan := s.plan
	s.mu.Unlock()
	planText := r.Header.Get(PlanHeader)
	if d, ok := strings.CutPrefix(lastUser, DirectivePrefix); ok && planText == "" {
		planText = d
	}
	if planText != "" {
		var err error
		if plan, err = ParsePlan(planText); err != nil {
			writeJSON(w, http.StatusBadRequest, errorBody(err.Error(), "invalid_request_error", "invalid_request"))
			return nil
		}
	}
	if plan.Kind == KindError && plan.Times > 0 && !s.countError(planText, plan.Times) {
		plan.Kind = KindNormal // this plan's errors are spent
	}
	if plan.Kind == "" {
		plan.Kind = KindNormal
	}
	if plan.Kind == KindSlow && plan.ChunkDelay == 0 {
		plan.ChunkDelay = 200 * time.Millisecond
	}
	rec := &Request{Header: r.Header.Clone(), Body: body, Plan: plan, Stream: req.Stream, IncludeUsage: includeUsage}
	s.update(func() {
		s.seq++
		rec.Seq = s.seq
		if len(s.reqs) >= s.opts.KeepRequests {
			s.reqs = append(s.reqs[:0:0], s.reqs[len(s.reqs)-s.opts.KeepRequests+1:]...)
		}
		s.reqs = append(s.reqs, rec)
		s.flight++
	})
	return &exchange{s: s, w: w, rc: http.NewResponseController(w), ctx: r.Context(), rec: rec, plan: plan, req: req}
}

// countError reports whether the request with this plan still gets its
// error: the first `times` requests carrying it do.
func (s *Server) countError(plan string, times int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.errored == nil {
		s.errored = map[string]int{}
	}
	if s.errored[plan] >= times {
		return false
	}
	if len(s.errored) >= s.opts.KeepRequests { // bounded: forget the oldest scripts wholesale
		clear(s.errored)
	}
	s.errored[plan]++
	return true
}

func (s *Server) serves(model string) bool {
	return slices.Contains(s.opts.Models, model)
}

// exchange is one request being answered.
type exchange struct {
	s         *Server
	w         http.ResponseWriter
	rc        *http.ResponseController
	ctx       context.Context
	rec       *Request
	plan      Plan
	req       *chatRequest
	resp      *responsesRequest // set for POST /v1/responses
	msg       *messagesRequest  // set for POST /v1/messages
	fim       *fimRequest       // set for POST /v1/completions
	embed     *embedRequest     // set for POST /v1/embeddings
	gem       *geminiExchange   // set for POST /v1/models/{model}:…
	partsSent int               // beforePart's count
}

func (x *exchange) disconnected() {
	x.s.update(func() {
		if !x.rec.Disconnected {
			x.rec.Disconnected = true
			x.s.discs++
		}
	})
}

// pause waits d, or reports false when the client went away meanwhile.
func (x *exchange) pause(d time.Duration) bool {
	if d <= 0 {
		return true
	}
	if !clock.Sleep(x.ctx, d) {
		x.disconnected()
		return false
	}
	return true
}

// beforePart waits before a part of the answer: the plan's ChunkDelay,
// then, from the second part on, for as long as the server is held.
func (x *exchange) beforePart() bool {
	if !x.pause(x.plan.ChunkDelay) {
		return false
	}
	if x.partsSent++; x.partsSent == 1 {
		return true
	}
	x.s.mu.Lock()
	held := x.s.held
	x.s.mu.Unlock()
	if held == nil {
		return true
	}
	select {
	case <-held:
		return true
	case <-x.ctx.Done():
		x.disconnected()
		return false
	}
}

func (x *exchange) run() {
	p := x.plan
	lat := p.LatencyMin
	if p.LatencyMax > p.LatencyMin {
		lat += rand.N(p.LatencyMax - p.LatencyMin)
	}
	if !x.pause(lat) {
		return
	}
	switch p.Kind {
	case KindError:
		status := p.Status
		if status == 0 {
			status = http.StatusServiceUnavailable
		}
		if p.RetryAfter != "" {
			x.w.Header().Set("Retry-After", p.RetryAfter)
		}
		body := p.Body
		if body == "" {
			var e any = errorBody("the demo upstream was told to fail with "+http.StatusText(status), "server_error", "demo_error")
			switch {
			case x.msg != nil:
				e = msgError(errorTypeFor(status), "the demo upstream was told to fail with "+http.StatusText(status))
			case x.gem != nil:
				e = geminiError(status, "the demo upstream was told to fail with "+http.StatusText(status))
			}
			b, _ := json.Marshal(e)
			body = string(b)
		}
		x.w.Header().Set("Content-Type", "application/json")
		x.w.WriteHeader(status)
		io.WriteString(x.w, body)
		return
	case KindStall:
		if x.req.Stream {
			x.w.Header().Set("Content-Type", "text/event-stream")
		} else {
			x.w.Header().Set("Content-Type", "application/json")
		}
		x.w.WriteHeader(http.StatusOK)
		x.rc.Flush()
		<-x.ctx.Done()
		x.disconnected()
		return
	}
	if p.Kind == KindErrorMid {
		x.errorMid()
		return
	}
	switch {
	case x.resp != nil:
		x.responses()
	case x.msg != nil:
		x.messages()
	case x.fim != nil:
		x.completions()
	case x.embed != nil:
		x.embeddings()
	case x.gem != nil && x.req.Stream:
		x.geminiStream()
	case x.gem != nil:
		x.geminiComplete()
	case x.req.Stream:
		x.stream()
	default:
		x.complete()
	}
}

func (x *exchange) id() string { return fmt.Sprintf("chatcmpl-demo-%d", x.rec.Seq) }

// usage is what the plan reports for the text it sends.
func (x *exchange) usage() *openai.UsageJSON {
	var prompt int64
	switch {
	case x.resp != nil:
		prompt = x.resp.promptUnits(x.s.opts.ResponsesPromptUnits, x.rec.Body)
	case x.s.opts.PromptUnits != nil:
		prompt = x.s.opts.PromptUnits(x.rec.Body)
	default:
		for _, c := range x.req.contents() {
			prompt += int64(len(c))
		}
	}
	completion := x.s.opts.CompletionUnits(x.req.Model, x.output())
	u := &openai.UsageJSON{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion}
	if x.plan.Kind == KindFalseUsage {
		// Contradicts the relayed text: claims nothing was generated.
		u.CompletionTokens = 0
		u.TotalTokens = prompt
	}
	return u
}

// startStream answers 200 with an event stream's headers; the events
// follow.
func (x *exchange) startStream() {
	h := x.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	x.w.WriteHeader(http.StatusOK)
}

func (x *exchange) stream() {
	x.startStream()
	includeUsage := x.rec.IncludeUsage && x.plan.Kind != KindNoUsage
	created := time.Now().Unix()
	if x.calling() {
		x.streamCall(created, includeUsage)
		return
	}
	head := &openai.DeltaJSON{Role: "assistant", Content: new(string)}
	text := func(part string) *openai.DeltaJSON { return &openai.DeltaJSON{Content: &part} }
	if !x.streamDeltas(created, includeUsage, head, x.parts(), text, "stop") || !x.pause(x.plan.UsageDelay) {
		return
	}
	x.end(created, includeUsage)
}

// streamDeltas streams choice 0 as chat-completions chunks: head, then a
// delta a part (paced by Plan.ChunkDelay), then finish; false when the
// client went away. A cut plan closes the connection after Plan.CutAfter
// parts, or before finish: no terminating chunk, no usage, no [DONE].
func (x *exchange) streamDeltas(created int64, includeUsage bool, head *openai.DeltaJSON, parts []string, delta func(part string) *openai.DeltaJSON, finish string) bool {
	chunk := func(d *openai.DeltaJSON, finish *string) openai.ChunkJSON {
		return x.chunk(created, includeUsage, d, finish)
	}
	if !x.event(chunk(head, nil), false) {
		return false
	}
	for i, part := range parts {
		if x.plan.Kind == KindCut && i >= x.plan.CutAfter {
			panic(http.ErrAbortHandler)
		}
		if !x.beforePart() || !x.event(chunk(delta(part), nil), true) {
			return false
		}
	}
	if x.plan.Kind == KindCut {
		panic(http.ErrAbortHandler)
	}
	return x.event(chunk(&openai.DeltaJSON{}, &finish), false)
}

// chunk is one chat.completion.chunk of choice 0.
func (x *exchange) chunk(created int64, includeUsage bool, d *openai.DeltaJSON, finish *string) openai.ChunkJSON {
	c := openai.ChunkJSON{ID: x.id(), Object: "chat.completion.chunk", Created: created, Model: x.req.Model,
		SystemFingerprint: "quotagate-demo-simulated", Choices: []openai.ChunkChoiceJSON{{Index: 0, Delta: d, FinishReason: finish}}}
	if includeUsage {
		c.Usage = nullUsage
	}
	return c
}

// end writes the usage chunk, when it was asked for, and [DONE].
func (x *exchange) end(created int64, includeUsage bool) {
	if includeUsage {
		u, _ := json.Marshal(x.usage())
		c := openai.ChunkJSON{ID: x.id(), Object: "chat.completion.chunk", Created: created, Model: x.req.Model,
			SystemFingerprint: "quotagate-demo-simulated", Choices: []openai.ChunkChoiceJSON{}, Usage: u}
		if !x.event(c, false) {
			return
		}
	}
	x.write([]byte("data: [DONE]\n\n"), false)
}

func (x *exchange) event(c openai.ChunkJSON, content bool) bool {
	b, _ := json.Marshal(c)
	buf := make([]byte, 0, len(b)+8)
	buf = append(buf, "data: "...)
	buf = append(buf, b...)
	buf = append(buf, "\n\n"...)
	return x.write(buf, content)
}

// write sends b and flushes it, recording how far the demo got. A write
// still blocked after Options.BlockedWrite is counted at that moment, so a
// test can wait for it while the write is still stuck.
func (x *exchange) write(b []byte, content bool) bool {
	blocked := time.AfterFunc(x.s.opts.BlockedWrite, func() {
		x.s.update(func() { x.rec.BlockedWrites++ })
	})
	_, err := x.w.Write(b)
	if err == nil {
		err = x.rc.Flush()
	}
	blocked.Stop()
	x.s.update(func() {
		if err == nil {
			x.rec.BytesWritten += int64(len(b))
			if content {
				x.rec.ChunksWritten++
			}
		}
	})
	if err != nil {
		x.disconnected()
		return false
	}
	return true
}

func (x *exchange) complete() {
	for range x.parts() {
		if !x.beforePart() {
			return
		}
	}
	text := x.text()
	if x.plan.Kind == KindCut {
		text = strings.Join(x.parts()[:min(x.plan.CutAfter, len(x.parts()))], "")
	}
	resp := openai.CompletionJSON{ID: x.id(), Object: "chat.completion", Created: time.Now().Unix(), Model: x.req.Model,
		SystemFingerprint: "quotagate-demo-simulated",
		Choices:           []openai.CompletionChoiceJSON{{Index: 0, Message: openai.MessageJSON{Role: "assistant", Content: &text}, FinishReason: "stop"}}}
	if x.calling() {
		resp.Choices[0].Message = openai.MessageJSON{Role: "assistant", ToolCalls: []openai.ToolCallJSON{x.toolCall(x.plan.Args)}}
		resp.Choices[0].FinishReason = "tool_calls"
	}
	if x.plan.Kind != KindNoUsage {
		resp.Usage, _ = json.Marshal(x.usage())
	}
	x.whole(resp)
}

// nullUsage is "usage": null, which OpenAI sends on every chunk but the
// last when usage was asked for.
var nullUsage = json.RawMessage("null")

func errorBody(msg, typ, code string) openai.ErrorBody { return openai.NewError(msg, typ, code) }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
