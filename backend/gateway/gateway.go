package gateway

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quotagate/quotagate/backend/gate"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/meter"
	"github.com/quotagate/quotagate/backend/openai"
	"github.com/quotagate/quotagate/backend/price"
	"github.com/quotagate/quotagate/backend/scrub"
)

// Defaults for Options, applied by New to a field left zero (the config's
// limits left out of the file).
const (
	DefaultRequestBytesMax   = 4 << 20 // the config's documented request_bytes_max (README)
	DefaultStreamQueueEvents = 8
	DefaultWriteTimeout      = 30 * time.Second
	DefaultUpstreamTimeout   = 120 * time.Second // stream idle timeout (RELIABILITY T32)
	DefaultKeepAlive         = 15 * time.Second  // ": keepalive" during an upstream gap
	DefaultResponseBytesMax  = 64 << 20          // a non-streaming upstream body
	DefaultTenantRefresh     = 2 * time.Second
	DefaultBodyTimeout       = 30 * time.Second // a body that trickles in: 30 stalled bodies once held 245 MB
	DefaultFinishGrace       = 5 * time.Second  // usage comes ~300 ms after the last content
	DefaultEndWait           = 10 * time.Second // a database restart or failover is usually back within it
)

// Off switches off a duration of Options that has a default (KeepAlive,
// FinishGrace): zero is the default, Off (or any negative) is none.
const Off time.Duration = -1

// Options configures a Gateway. Store, Meter and Upstreams are required; a
// nil RateLimiter, Gate or Quota means that control is off.
type Options struct {
	Store     ledger.Store
	Meter     meter.Meter
	Reserve   meter.ReservePolicy // output cap default, reasoning floor, image units
	Band      meter.PromptBand    // tiktoken prompt band; zero → meter.BandFor(model), per call (meter.NewRun)
	Upstreams []Upstream          // in config order; a model's route is every upstream that serves it
	Routes    Routes              // the routes' order (priority) and the upstreams' names for their models
	// Money is the currency runs are priced in and each model's price in
	// it; the zero value keeps the books in units only.
	Money Money

	RequestBytesMax   int64         // request body limit (413); default 4 MiB
	StreamQueueEvents int           // per-stream event queue between upstream reader and client writer; default 8
	WriteTimeout      time.Duration // per write to the client; a client that stops reading is cut after it; default 30s
	UpstreamTimeout   time.Duration // longest silence from a streaming upstream before the run is cut; default 120s
	KeepAlive         time.Duration // SSE comment sent to the client during an upstream gap; default 15s; Off: none
	BodyTimeout       time.Duration // longest wait for the request body (408 after it); default 30s
	FinishGrace       time.Duration // after finish_reason, how long a stream whose client left is still read for usage; default 5s; Off: none
	EndWait           time.Duration // how long a whole answer waits for the ledger to take its end before the client is told it could not; default 10s; Off: none
	MaxEventBytes     int           // one upstream SSE event; default openai.DefaultMaxEventBytes
	// ForwardHeaders are request headers copied to the upstream (e.g.
	// "X-Demo-Plan" for the demo upstream); nothing else is forwarded.
	ForwardHeaders []string

	RateLimiter RateLimiter // per-tenant request windows, before any reserve (seed 003)
	Gate        Gate        // per-upstream concurrency + FIFO queue (seed 003)
	Quota       QuotaGuard  // provider daily quota guard (seed 002)
	// Retry retries an upstream 429/503 answered before any output, honouring
	// its Retry-After (gate.DefaultRetryPolicy: 2 retries, 15 s in all). The
	// zero value never retries. Nothing is retried once output has started.
	Retry gate.RetryPolicy

	// Scrub masks secrets in anything taken from an upstream (error bodies,
	// transport errors) before it is stored, shown or relayed; nil still
	// masks key-shaped strings.
	Scrub *scrub.Scrubber

	// Elsewhere routes the cancel of a run relayed by another gateway
	// sharing the ledger; nil: a single gateway.
	Elsewhere Elsewhere

	// KeepProviderID keeps a stream's provider id on its run while it still
	// streams; the zero value keeps it only at the run's end.
	KeepProviderID KeepProviderID

	Logger   *slog.Logger // default slog.Default()
	NewRunID func() ledger.RunID
	// Now is the gateway's clock for the times it writes itself (a
	// translated Responses answer's created_at); the ledger keeps its own
	// for run and audit times. Default time.Now.
	Now func() time.Time
}

// KeepProviderID is when a stream's provider id is kept on its run before
// the run ends: After its answer named the call, on the Upstreams named
// (those a usage lookup can ask about), so that a run a crash ends held can
// still be settled from the provider's figure. A shorter stream ends first
// and keeps the id with its end, without the extra write.
type KeepProviderID struct {
	After     time.Duration
	Upstreams map[string]bool
}

// Money is the gateway's currency and the price of each model in it,
// resolved by the assembly (an upstream's configured price, else the price
// table's converted by usd_rate). A model without a price costs nothing
// in money — unless its tenant has a money budget, which refuses it
// (model_unpriced).
type Money struct {
	Currency string                 // ISO 4217; empty: no money at all
	Prices   map[string]price.Price // by model
	// At are prices by upstream, then model, over Prices: a model several
	// upstreams serve costs what the target of each attempt charges.
	At map[string]map[string]price.Price
}

// Gateway serves /v1/*. It is an http.Handler.
type Gateway struct {
	opts Options
	mux  *http.ServeMux
	log  *slog.Logger

	tenants tenantCache

	table routeTable // every model's route

	rmu  sync.Mutex
	runs map[ledger.RunID]*call // runs in flight in this process

	stats streamCounters

	pendingEnds atomic.Int64 // decided run ends being retried (runRecord.retry)
}

// New returns a gateway, with the defaults of the options left zero; it
// panics on a missing Store, Meter or upstream, which is a wiring bug.
func New(opts Options) *Gateway {
	if opts.Store == nil || opts.Meter == nil || len(opts.Upstreams) == 0 {
		panic("gateway.New: Store, Meter and at least one upstream are required")
	}
	opts = opts.withDefaults()
	g := &Gateway{opts: opts, log: opts.Logger, runs: make(map[ledger.RunID]*call),
		table: newRouteTable(opts.Upstreams, opts.Routes)}
	g.mux = g.routes()
	return g
}

// withDefaults fills the options left zero with the package's defaults.
func (opts Options) withDefaults() Options {
	if opts.RequestBytesMax <= 0 {
		opts.RequestBytesMax = DefaultRequestBytesMax
	}
	if opts.StreamQueueEvents <= 0 {
		opts.StreamQueueEvents = DefaultStreamQueueEvents
	}
	if opts.WriteTimeout <= 0 {
		opts.WriteTimeout = DefaultWriteTimeout
	}
	if opts.UpstreamTimeout <= 0 {
		opts.UpstreamTimeout = DefaultUpstreamTimeout
	}
	if opts.BodyTimeout <= 0 {
		opts.BodyTimeout = DefaultBodyTimeout
	}
	if opts.FinishGrace == 0 {
		opts.FinishGrace = DefaultFinishGrace
	}
	if opts.EndWait == 0 {
		opts.EndWait = DefaultEndWait
	}
	if opts.KeepAlive == 0 {
		opts.KeepAlive = DefaultKeepAlive
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.NewRunID == nil {
		opts.NewRunID = newRunID
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return opts
}

// routes is the /v1 surface.
func (g *Gateway) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", g.serveDoor(chatDoor{}))
	mux.HandleFunc("POST /v1/responses", g.serveDoor(responsesDoor{log: g.log, now: g.opts.Now}))
	mux.HandleFunc("GET /v1/responses", serveResponsesUpgrade)
	mux.HandleFunc("POST /v1/messages", g.serveDoor(messagesDoor{}))
	mux.HandleFunc("POST /v1/messages/count_tokens", g.asTenant(messagesDoor{}, g.countTokens))
	mux.HandleFunc("POST /v1/completions", g.serveDoor(completionsDoor))
	mux.HandleFunc("POST /v1/embeddings", g.serveDoor(embeddingsDoor))
	mux.HandleFunc("GET /v1/models", g.models)
	mux.HandleFunc("GET /v1/balance", g.asTenant(chatDoor{}, g.balance))
	mux.HandleFunc("GET /v1/runs/{id}", g.asTenant(chatDoor{}, g.getRun))
	mux.HandleFunc("DELETE /v1/runs/{id}", g.asTenant(chatDoor{}, g.deleteRun))
	mux.HandleFunc("GET /v1/models/{id}", g.asTenant(chatDoor{}, g.model))
	mux.HandleFunc("GET /v1/runs", g.asTenant(chatDoor{}, g.listRuns))
	mux.HandleFunc(catchAll, g.unknownRoute)
	g.geminiRoutes(mux)
	return mux
}

// ServeHTTP implements http.Handler.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) { g.mux.ServeHTTP(w, r) }

// newRunID is "run_" and 24 hex digits: the milliseconds since 1970 (6
// bytes) then 6 random bytes. Ids that grow with time are appended at the end
// of the ledger's indexes on run ids (the runs table's key, the audit rows'
// run_id); random ids dirtied a random page of each per call, so the cost of
// a call grew with the ledger.
func newRunID() ledger.RunID {
	var at [6]byte
	ms := uint64(time.Now().UnixMilli())
	for i := range at {
		at[i] = byte(ms >> (8 * (5 - i)))
	}
	return ledger.RunID("run_" + hex.EncodeToString(at[:]) + randomHex(6))
}

// randomHex is n random bytes in hex, the random part of every id the
// gateway makes (runs, Messages and Responses answers).
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b)
}

// InvalidateTenants makes the next request re-read tenants from the store
// (after a config change applied keys or policies).
func (g *Gateway) InvalidateTenants() { g.tenants.invalidate() }

// asTenant serves h for the tenant the request authenticates as; a request
// that does not is refused in door d's error shape before h runs.
func (g *Gateway) asTenant(d door, h func(http.ResponseWriter, *http.Request, ledger.Tenant)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if t, ok := g.authenticated(d, w, r); ok {
			h(w, r, t)
		}
	}
}

// authenticated is authenticate for a handler: on failure the refusal (or
// the internal error) is written in door d's error shape and ok is false.
func (g *Gateway) authenticated(d door, w http.ResponseWriter, r *http.Request) (t ledger.Tenant, ok bool) {
	t, err := g.authenticate(r)
	if err != nil {
		g.internalFor(d, w, err, "authenticate")
		return t, false
	}
	return t, true
}

// authenticate returns the tenant whose key is the request's Bearer token.
func (g *Gateway) authenticate(r *http.Request) (ledger.Tenant, error) {
	key, err := requestKey(r)
	if err != nil {
		return ledger.Tenant{}, err
	}
	for _, force := range []bool{false, true} {
		ts, err := g.tenants.load(r.Context(), force, g.opts.Store.Tenants, g.log)
		if err != nil {
			return ledger.Tenant{}, err
		}
		for _, t := range ts {
			if t.MatchesKey(key) {
				return t, nil
			}
		}
	}
	return ledger.Tenant{}, ledger.Errorf(ledger.CodeInvalidAPIKey, "the API key is not known to this quotagate")
}

// requestKey is the tenant key a request carries, on every route:
// "Authorization: Bearer <key>" (OpenAI's clients, Claude Code's
// ANTHROPIC_AUTH_TOKEN), "x-api-key: <key>" (the Anthropic SDKs,
// ANTHROPIC_API_KEY) or "x-goog-api-key: <key>" (Gemini CLI and the Google
// Gen AI SDKs, GEMINI_API_KEY). When several are sent they must agree.
func requestKey(r *http.Request) (string, error) {
	bearer, _ := bearerKey(r.Header.Get("Authorization")) // the scheme in any case (RFC 9110)
	sent := [...]struct{ header, key string }{{"Authorization", bearer},
		{"x-api-key", strings.TrimSpace(r.Header.Get("X-Api-Key"))},
		{"x-goog-api-key", strings.TrimSpace(r.Header.Get("X-Goog-Api-Key"))}}
	key, from := "", ""
	for _, s := range sent {
		switch {
		case s.key == "":
		case key == "":
			key, from = s.key, s.header
		case s.key != key:
			return "", ledger.Errorf(ledger.CodeInvalidAPIKey, "the request carries two different keys (%s and %s); send one", from, s.header)
		}
	}
	if key == "" {
		return "", ledger.Errorf(ledger.CodeInvalidAPIKey, "send your quotagate key as \"Authorization: Bearer <key>\" or \"x-api-key: <key>\"")
	}
	return key, nil
}

// upstreamFor is the first target of model's route (nil: no upstream
// serves it), which lists name as the model's owner.
func (g *Gateway) upstreamFor(model string) Upstream {
	if rt := g.table.of(model); rt != nil {
		return rt.first().up
	}
	return nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// models is GET /v1/models: the models this key may use, in Anthropic's
// list shape when the request looks like an Anthropic client's (it carries
// anthropic-version or x-api-key), else in OpenAI's.
func (g *Gateway) models(w http.ResponseWriter, r *http.Request) {
	anthropicShape := r.Header.Get("Anthropic-Version") != "" || r.Header.Get("X-Api-Key") != ""
	var shape door = chatDoor{}
	if anthropicShape {
		shape = messagesDoor{}
	}
	t, ok := g.authenticated(shape, w, r)
	if !ok {
		return
	}
	type served struct{ id, upstream string }
	var ms []served
	for _, rt := range g.table.order { // each name once, however many upstreams serve it
		if t.AllowsModel(rt.model) {
			ms = append(ms, served{rt.model, rt.first().up.Name()})
		}
	}
	if anthropicShape {
		list := anthropicModels{Data: []anthropicModel{}}
		for _, m := range ms {
			list.Data = append(list.Data, anthropicModel{Type: "model", ID: m.id,
				DisplayName: m.id + " (via " + m.upstream + ")", CreatedAt: "1970-01-01T00:00:00Z"})
		}
		if n := len(ms); n > 0 {
			list.FirstID, list.LastID = &ms[0].id, &ms[n-1].id
		}
		writeJSON(w, http.StatusOK, list)
		return
	}
	list := openai.ModelListJSON{Object: "list", Data: []openai.ModelJSON{}}
	for _, m := range ms {
		list.Data = append(list.Data, openai.ModelJSON{ID: m.id, Object: "model", OwnedBy: m.upstream})
	}
	writeJSON(w, http.StatusOK, list)
}

// anthropicModels is Anthropic's model list (GET /v1/models); quotagate
// knows no creation dates, so created_at is the Unix epoch.
type anthropicModels struct {
	Data    []anthropicModel `json:"data"`
	HasMore bool             `json:"has_more"`
	FirstID *string          `json:"first_id"`
	LastID  *string          `json:"last_id"`
}

type anthropicModel struct {
	Type        string `json:"type"`
	ID          string `json:"id"`
	DisplayName string `json:"display_name"`
	CreatedAt   string `json:"created_at"`
}

func (g *Gateway) balance(w http.ResponseWriter, r *http.Request, t ledger.Tenant) {
	b, err := g.opts.Store.Balance(r.Context(), t.ID)
	if err != nil {
		g.internal(w, err, "balance of "+t.ID)
		return
	}
	if g.opts.Money.Currency == "" {
		writeJSON(w, http.StatusOK, b)
		return
	}
	writeJSON(w, http.StatusOK, moneyBalance{b, g.opts.Money.Currency})
}

// moneyBalance is a balance with its currency and its money also as
// decimal strings: spent, held, and — with a money budget — budget and
// available ("50.00", as a person would write them).
type moneyBalance struct {
	ledger.Balance
	currency string
}

// MarshalJSON writes the ledger's balance (its own MarshalJSON decides
// which micros appear) followed by the currency and the decimal strings.
func (b moneyBalance) MarshalJSON() ([]byte, error) {
	inner, err := json.Marshal(b.Balance)
	if err != nil || len(inner) < 2 || inner[len(inner)-1] != '}' {
		return inner, err
	}
	extra := map[string]string{"currency": b.currency, "spent": b.SpentMicros.String(), "held": b.HeldMicros.String()}
	if b.HasMoneyBudget {
		extra["budget"], extra["available"] = b.BudgetMicros.String(), b.AvailableMicros.String()
	}
	tail, err := json.Marshal(extra)
	if err != nil {
		return nil, err
	}
	return append(append(inner[:len(inner)-1], ','), tail[1:]...), nil
}

// internal logs err and writes it; ledger.ErrorMessage keeps SQL and
// secrets out of the body.
func (g *Gateway) internal(w http.ResponseWriter, err error, what string) {
	g.internalFor(chatDoor{}, w, err, what)
}

// internalFor is internal in door d's error shape.
func (g *Gateway) internalFor(d door, w http.ResponseWriter, err error, what string) {
	if ledger.ErrorCode(err) == ledger.CodeInternal {
		g.log.Error("gateway: "+what, "err", err)
	}
	d.writeError(w, err)
}
