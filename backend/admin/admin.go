package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/quotagate/quotagate/backend/audit"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/live"
	"github.com/quotagate/quotagate/backend/price"
)

// Canceller cancels a run on the operator's behalf (the gateway closes the
// upstream connection). Errors: ledger.CodeRunNotFound, ledger.CodeRunEnded.
type Canceller interface {
	Cancel(ctx context.Context, id ledger.RunID, actor ledger.Actor) (ledger.Run, error)
}

// BalanceReading is the body of POST …/balance: a balance read now, or
// today's true starting balance b0 from the provider console (seed 002).
type BalanceReading struct {
	Balance *ledger.Units `json:"balance,omitempty"`
	B0      *ledger.Units `json:"b0,omitempty"`
}

// Quota drives a guarded model's balance sync. Errors: ledger.CodeModelNotFound
// for a model that is not guarded; ledger.CodeUpstreamError when the provider
// balance could not be read.
type Quota interface {
	Sync(ctx context.Context, upstream, model string) (ledger.Snapshot, error)
	RecordBalance(ctx context.Context, upstream, model string, r BalanceReading) (ledger.Snapshot, error)
}

// ProviderEvidence reconciles a hold with the figure its provider gave
// (backend/evidence). Errors: ledger.CodeInvalidRequest when there is no
// figure to apply, and the ledger's.
type ProviderEvidence interface {
	Apply(ctx context.Context, id ledger.RunID, actor ledger.Actor) (ledger.Run, error)
}

// Options configure the admin handler. Token, State, Store, Canceller, Quota
// and Connect are required (the server always has a ledger, a gateway and a
// guard's actions, which answer ledger.CodeModelNotFound when nothing is
// guarded); New panics without them.
type Options struct {
	Token     string
	Origins   []string // exact allowed Origins; see AllowedOrigins
	State     StateSource
	Store     ledger.Store // reconcile and audit.csv
	Canceller Canceller
	Quota     Quota
	// Hub tells the dashboards' sockets when to push a snapshot. The admin
	// API publishes nothing itself: its writes reach the hub (and the quota
	// guard) through the ledger's commit hook, wired by the server.
	Hub      *live.Hub
	Connect  ConnectFunc // the Connect panel's base URL, keys and models (connect.go)
	Tenants  Tenants     // the Settings tab's tenant edits (tenants.go)
	Archiver Archiver    // the Settings tab's Archive action; nil: the ledger cannot be archived
	Currency string      // the gateway's, beside every amount of money in audit.csv; "": none
	// Evidence applies a provider's figure to a hold (reconcile with
	// from_provider); nil: no upstream can be asked.
	Evidence  ProviderEvidence
	Presenter Presenter // POST /admin/api/show; nil: there is no window to show
	Logger    *slog.Logger
	Coalesce  time.Duration // minimum gap between two pushed snapshots; default 100ms
	Refresh   time.Duration // a snapshot at least this often (uptime, keepalive); default 5s
	// Idle closes a dashboard socket that has answered no ping for this long
	// (a peer that vanished without a close); pings go out at half of it.
	// Default 60s.
	Idle time.Duration
}

// Actor is recorded in the audit trail for changes made through this API.
var Actor = ledger.ActorAdmin

// Handler serves /admin/api/* and /admin/ws.
type Handler struct {
	o       Options
	log     *slog.Logger
	origins originPolicy
	token   tokenMatcher
	mux     *http.ServeMux
	up      websocket.Upgrader

	closing chan struct{}
	once    sync.Once
	conns   sync.WaitGroup
}

// New returns the admin handler.
func New(o Options) *Handler {
	for _, r := range []struct {
		name    string
		missing bool
	}{{"State", o.State == nil}, {"Store", o.Store == nil}, {"Canceller", o.Canceller == nil},
		{"Quota", o.Quota == nil}, {"Connect", o.Connect == nil}, {"Tenants", o.Tenants == nil}} {
		if r.missing {
			panic("admin.New: Options." + r.name + " is required")
		}
	}
	if o.Coalesce <= 0 {
		o.Coalesce = 100 * time.Millisecond
	}
	if o.Idle <= 0 {
		o.Idle = 60 * time.Second
	}
	if o.Refresh <= 0 {
		o.Refresh = 5 * time.Second
	}
	if o.Hub == nil {
		o.Hub = live.NewHub(0)
	}
	h := &Handler{
		o:       o,
		log:     o.Logger,
		origins: newOriginPolicy(o.Origins),
		token:   newTokenMatcher(o.Token),
		mux:     http.NewServeMux(),
		closing: make(chan struct{}),
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	h.up = websocket.Upgrader{
		HandshakeTimeout: 10 * time.Second,
		ReadBufferSize:   1024,
		WriteBufferSize:  16 << 10,
		CheckOrigin:      h.origins.checkOrigin,
	}
	h.route("GET /admin/api/state", h.state)
	h.route("GET /admin/api/audit.csv", h.auditCSV)
	h.route("GET /admin/api/audit", h.auditList)
	h.route("GET /admin/api/runs", h.runsList)
	h.route("GET /admin/api/holds", h.holdsList)
	h.route("GET /admin/api/spend", h.spend)
	h.route("GET /admin/api/connect", h.connect)
	h.route("GET /admin/api/tenants", h.tenantSettings)
	h.route("POST /admin/api/tenants", h.tenantSave)
	h.route("POST /admin/api/tenants/discard", h.tenantDiscard)
	h.route("POST /admin/api/tenants/{id}/rotate", h.tenantRotate)
	h.route("POST /admin/api/tenants/{id}/delete", h.tenantDelete)
	h.route("POST /admin/api/holds/{run_id}/reconcile", h.reconcile)
	h.route("POST /admin/api/runs/{id}/cancel", h.cancel)
	h.route("POST /admin/api/quota/{upstream}/{model}/sync", h.quotaSync)
	h.route("POST /admin/api/quota/{upstream}/{model}/balance", h.quotaBalance)
	h.route("POST /admin/api/show", h.show)
	h.route("POST /admin/api/tenants/write-back", h.tenantWriteBack)
	h.route("POST /admin/api/archive", h.archive)
	h.mux.HandleFunc("GET /admin/ws", h.ws)
	h.route("/admin/", func(http.ResponseWriter, *http.Request) error {
		return ledger.Errorf(codeNotFound, "no such admin endpoint")
	})
	return h
}

func (h *Handler) route(pattern string, fn func(http.ResponseWriter, *http.Request) error) {
	h.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		if err := fn(w, r); err != nil {
			writeError(w, h.log, r, err)
		}
	})
}

// ServeHTTP applies the Origin policy, CORS and the token check, then routes.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Add("Vary", "Origin")
	if !h.origins.allows(r) {
		writeError(w, h.log, r, ledger.Errorf(ledger.CodeForbidden, "this origin may not use the admin API"))
		return
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		// Exact echo of an allowed origin, never "*": the Wails webview
		// (wails://wails) is cross-origin to http://127.0.0.1.
		w.Header().Set("Access-Control-Allow-Origin", origin)
		w.Header().Set("Access-Control-Expose-Headers", "Content-Disposition, Retry-After")
	}
	if r.Method == http.MethodOptions { // preflight: carries no token by design
		w.Header().Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
		w.Header().Set("Access-Control-Allow-Headers", "Authorization, Content-Type")
		w.Header().Set("Access-Control-Max-Age", "600")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if !h.token.matches(presentedToken(r, r.URL.Path == "/admin/ws")) {
		writeError(w, h.log, r, ledger.Errorf(ledger.CodeInvalidAPIKey,
			"admin token missing or wrong; open the dashboard from the URL quotagate printed"))
		return
	}
	h.mux.ServeHTTP(w, r)
}

// Close disconnects every WebSocket and waits for their loops to end.
func (h *Handler) Close() {
	h.once.Do(func() { close(h.closing) })
	h.conns.Wait()
}

func (h *Handler) snapshot(ctx context.Context) (State, error) {
	s, err := h.o.State.State(ctx)
	if err != nil {
		return State{}, err
	}
	s.Normalize()
	return s, nil
}

func (h *Handler) state(w http.ResponseWriter, r *http.Request) error {
	s, err := h.snapshot(r.Context())
	return answer(w, http.StatusOK, s, err)
}

type reconcileBody struct {
	Units    *ledger.Units `json:"units"`
	Evidence string        `json:"evidence"`
	// Cost is the provider's bill, a decimal string in the gateway's
	// currency; without it the ledger prices the units at the run's prices.
	Cost *string `json:"cost"`
	// FromProvider reconciles with the figure the run's provider gave
	// (GET …/state's evidence), instead of units typed in.
	FromProvider bool `json:"from_provider"`
}

func (h *Handler) reconcile(w http.ResponseWriter, r *http.Request) error {
	var b reconcileBody
	if err := decodeJSON(w, r, &b); err != nil {
		return err
	}
	if b.FromProvider {
		return h.reconcileFromProvider(w, r, b)
	}
	if b.Units == nil {
		return ledger.Errorf(ledger.CodeInvalidRequest, "units is required").Because(ledger.ReasonUnitsRequired, nil)
	}
	c := ledger.Reconciliation{Units: *b.Units, Evidence: b.Evidence}
	if b.Cost != nil {
		m, err := price.ParseMicros(*b.Cost)
		if err != nil {
			return ledger.Errorf(ledger.CodeInvalidRequest, "cost: %v", err)
		}
		c.CostMicros, c.HasCost = m, true
	}
	run, err := h.o.Store.ReconcileCost(r.Context(), ledger.RunID(r.PathValue("run_id")), c, Actor)
	return answer(w, http.StatusOK, run, err)
}

// reconcileFromProvider applies the provider's figure; the clicking
// operator is the actor, the provider the evidence's source.
func (h *Handler) reconcileFromProvider(w http.ResponseWriter, r *http.Request, b reconcileBody) error {
	if b.Units != nil || b.Cost != nil || b.Evidence != "" {
		return ledger.Errorf(ledger.CodeInvalidRequest, "from_provider takes the provider's figure: give no units, cost or evidence with it")
	}
	if h.o.Evidence == nil {
		return ledger.Errorf(ledger.CodeInvalidRequest, "no upstream has a usage_lookup: there is no provider figure to apply")
	}
	run, err := h.o.Evidence.Apply(r.Context(), ledger.RunID(r.PathValue("run_id")), Actor)
	return answer(w, http.StatusOK, run, err)
}

func (h *Handler) cancel(w http.ResponseWriter, r *http.Request) error {
	run, err := h.o.Canceller.Cancel(r.Context(), ledger.RunID(r.PathValue("id")), Actor)
	return answer(w, http.StatusAccepted, run, err)
}

func (h *Handler) quotaSync(w http.ResponseWriter, r *http.Request) error {
	up, model := r.PathValue("upstream"), r.PathValue("model")
	snap, err := h.o.Quota.Sync(r.Context(), up, model)
	return answer(w, http.StatusOK, snap, err)
}

func (h *Handler) quotaBalance(w http.ResponseWriter, r *http.Request) error {
	var b BalanceReading
	if err := decodeJSON(w, r, &b); err != nil {
		return err
	}
	if (b.Balance == nil) == (b.B0 == nil) {
		return ledger.Errorf(ledger.CodeInvalidRequest, `send exactly one of {"balance": N} or {"b0": N}`).
			Because(ledger.ReasonBalanceOneOf, nil)
	}
	for _, u := range []*ledger.Units{b.Balance, b.B0} {
		if u != nil {
			if err := ledger.CheckUnits("balance", *u); err != nil {
				return err
			}
		}
	}
	up, model := r.PathValue("upstream"), r.PathValue("model")
	snap, err := h.o.Quota.RecordBalance(r.Context(), up, model, b)
	return answer(w, http.StatusOK, snap, err)
}

func (h *Handler) auditCSV(w http.ResponseWriter, r *http.Request) error {
	f, err := audit.ParseQuery(r.URL.Query(), nil)
	if err != nil {
		return err
	}
	f.Currency = h.o.Currency
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="`+audit.FileName(f)+`"`)
	w.Header().Set("Cache-Control", "no-store")
	cw := &countingWriter{w: w}
	if err := audit.WriteCSV(r.Context(), cw, h.o.Store, f); err != nil {
		if cw.n == 0 {
			w.Header().Del("Content-Disposition")
			return err
		}
		// After the first byte the status is sent; cut the body so the
		// client sees a truncated download rather than a complete-looking one.
		h.log.Error("audit export cut", "err", err)
		panic(http.ErrAbortHandler)
	}
	return nil
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// maxBodyBytes bounds admin request bodies; they are a few numbers and a sentence.
const maxBodyBytes = 64 << 10

// decodeJSON reads one JSON object. Non-JSON content types are refused with
// 415 before the body is read: browsers send text/plain and form bodies
// cross-site without a preflight (CSRF).
func decodeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return ledger.Errorf(codeUnsupportedMediaType, "send the body as application/json")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return ledger.Errorf(ledger.CodeRequestTooLarge, "body over %d bytes", maxBodyBytes).
				Because(ledger.ReasonBodyTooLarge, map[string]any{"max_bytes": maxBodyBytes})
		}
		return ledger.Errorf(ledger.CodeInvalidRequest, "read the body: %v", err).Because(ledger.ReasonBodyMalformed, nil)
	}
	if k, err := duplicateKey(body); err == nil && k != "" {
		return ledger.Errorf(ledger.CodeInvalidRequest, "the body names %q twice; send each field once", k).
			Because(ledger.ReasonBodyDuplicateKey, map[string]any{"key": k})
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return ledger.Errorf(ledger.CodeInvalidRequest, "malformed JSON body: %v", err).Because(ledger.ReasonBodyMalformed, nil)
	}
	if dec.More() {
		return ledger.Errorf(ledger.CodeInvalidRequest, "send one JSON object").Because(ledger.ReasonBodyMalformed, nil)
	}
	return nil
}
