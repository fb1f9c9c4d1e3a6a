package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/quotagate/quotagate/backend/admin"
	"github.com/quotagate/quotagate/backend/alert/dispatch"
	"github.com/quotagate/quotagate/backend/audit"
	"github.com/quotagate/quotagate/backend/clock"
	"github.com/quotagate/quotagate/backend/config"
	"github.com/quotagate/quotagate/backend/datadir"
	"github.com/quotagate/quotagate/backend/evidence"
	"github.com/quotagate/quotagate/backend/gate"
	"github.com/quotagate/quotagate/backend/gateway"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/live"
	"github.com/quotagate/quotagate/backend/price"
	"github.com/quotagate/quotagate/backend/scrub"
	"github.com/quotagate/quotagate/backend/sqlite"
	"github.com/quotagate/quotagate/backend/upstream/demo"
)

// Options configure Open. DataDir is required; everything else has a default.
type Options struct {
	Config  *config.Config // nil: config.Default()
	DataDir string
	Addr    string // overrides Config.Addr when not empty; port 0 picks a free port (tests)
	Version string
	// ConfigPath is the YAML file Config was loaded from ("" for the
	// embedded default): the Settings panel writes its overrides back there.
	ConfigPath string
	Frontend   fs.FS // the built dashboard (frontend.FS()); nil or unbuilt: a placeholder page
	Logger     *slog.Logger
	// Clock is the time every part of the gateway reads — the ledger's
	// periods and run and audit times, quota days, rate windows, the
	// dashboard's now. The zero Clock is real time; the command line sets
	// it from QUOTAGATE_CLOCK_OFFSET (clock.FromEnv).
	Clock clock.Clock
}

// parts are what the server has opened, handed to assemble.
type parts struct {
	Config   *config.Config
	Store    ledger.Store
	Gates    *gate.Gates
	Hub      *live.Hub
	Registry *prometheus.Registry
	Logger   *slog.Logger
	URL      string // where this server answers, e.g. http://127.0.0.1:8787
	TopUpKey string // the quota top-up tenant's key; empty when no top-up spends
	// Scrub masks every configured secret (and key-shaped strings) in what
	// an upstream or a balance source says, before it is stored or shown.
	Scrub *scrub.Scrubber
	Fence *tenantFence  // the gateway's admissions of a tenant being deleted
	Money gateway.Money // the currency and every model's price in it
	Now   clock.Func    // the gateway's clock (Options.Clock)
}

// Server is a running quotagate backend.
type Server struct {
	opts     Options
	cfg      *config.Config
	log      *slog.Logger
	started  time.Time // on the gateway's clock
	token    string
	keys     map[string]string // tenant → generated key, printed by `serve`
	topUpKey string            // the system tenant of the quota top-up job, never printed
	store    ledger.Store
	commits  *commits             // the store's commit hook: live hub, alerts and quota guard
	alerts   *dispatch.Dispatcher // nil without the alerts key
	evidence *evidence.Worker     // nil when no upstream has a usage_lookup
	gates    *gate.Gates
	hub      *live.Hub
	admin    *admin.Handler
	assembly *assembly     // the gateway and what it runs on
	money    gateway.Money // the currency and the price of every model
	registry *prometheus.Registry
	requests *prometheus.CounterVec
	lock     *datadir.Lock // the data dir, ours for the process's life
	ln       net.Listener
	http     *http.Server
	served   chan struct{}

	presenter presenter // the window, once the desktop app registers it

	mu      sync.Mutex
	tenants []config.Tenant // configured policy, as last applied to the ledger
	fence   *tenantFence    // admissions of a tenant being deleted (tenantdelete.go)
	// lastBooks is the ledger's part of the admin state as last read, shown
	// while a shared ledger is unreachable.
	lastBooks admin.State

	closeOnce sync.Once
	closeErr  error
}

// Open prepares the data dir and secrets, assembles the parts, listens on the
// loopback address and starts serving. It fails, rather than falling back to
// another port, when the address is taken.
func Open(ctx context.Context, o Options) (_ *Server, err error) {
	cfg := o.Config
	if cfg == nil {
		cfg = config.Default()
	}
	addr := cmp.Or(o.Addr, cfg.Addr)
	if err := checkLoopback(addr); err != nil {
		return nil, err
	}
	s := &Server{fence: newTenantFence(),
		opts:    o,
		cfg:     cfg,
		log:     cmp.Or(o.Logger, slog.New(slog.DiscardHandler)),
		started: o.Clock.Now().UTC(),
		keys:    map[string]string{},
		hub:     live.NewHub(0),
		gates:   gate.NewGates(),
		served:  make(chan struct{}),
		tenants: append([]config.Tenant(nil), cfg.Tenants...),
	}
	if err := prepareDataDir(o.DataDir); err != nil {
		return nil, err
	}
	// Before anything in the data dir is read or written: a second process
	// must not recover (interrupt) the first one's live runs.
	if s.lock, err = datadir.Acquire(o.DataDir); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			s.lock.Release()
		}
	}()
	if err := s.prepareSecrets(); err != nil {
		return nil, err
	}
	if err := s.loadPrices(); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	if err := s.openLedger(ctx, addr); err != nil {
		return nil, err
	}
	if s.ln, err = listen(addr); err != nil {
		return nil, err
	}
	if err := s.lock.Announce(s.URL()); err != nil {
		s.log.Warn("data dir lock: record the URL", "err", err)
	}
	if err := s.start(ctx, addr); err != nil {
		return nil, err
	}
	s.log.Info("quotagate listening", "url", s.URL(), "data_dir", o.DataDir, "version", o.Version)
	if o.Clock.Shifted() {
		s.log.Warn("the gateway's clock runs off real time ("+clock.EnvOffset+"): periods, quota days and run times are shifted",
			"offset", o.Clock.Offset().String(), "now", o.Clock.Now().UTC().Format(time.RFC3339))
	}
	return s, nil
}

// prepareSecrets loads (or creates) the admin token and the keys of keyless
// tenants, and adds the top-up's tenant when its job spends.
func (s *Server) prepareSecrets() (err error) {
	if s.token = s.cfg.AdminToken; s.token == "" {
		if s.token, err = loadOrCreateSecret(filepath.Join(s.opts.DataDir, AdminTokenFile), func() string { return randomSecret(32) }); err != nil {
			return fmt.Errorf("admin token: %w", err)
		}
	}
	if err := s.ensureTenantKeys(); err != nil {
		return err
	}
	if topUpSpends(s.cfg) {
		return s.addTopUpTenant()
	}
	return nil
}

// loadPrices reads the price table — the data dir's prices.json when
// `quotagate prices update` wrote one, else the embedded table; a broken
// file refuses the start rather than pricing with other prices — and
// resolves every configured model's price in the gateway's currency.
func (s *Server) loadPrices() error {
	table, from, err := price.Load(s.opts.DataDir)
	if err != nil {
		return fmt.Errorf("price table: %w", err)
	}
	s.money = gatewayMoney(s.cfg, table)
	if s.cfg.Money != nil {
		s.log.Info("prices", "table", from, "currency", s.money.Currency, "usd_rate", s.cfg.Money.USDRate, "priced_models", len(s.money.Prices))
	}
	return nil
}

// openLedger opens the configured ledger, recovers the runs the last exit
// interrupted, applies the configured tenants and sets the upstreams' gates.
func (s *Server) openLedger(ctx context.Context, addr string) (err error) {
	if s.store, err = configuredLedger(s.cfg, addr, s.opts.Clock.Now, s.log)(ctx, s.opts.DataDir); err != nil {
		return fmt.Errorf("open ledger: %w", err)
	}
	s.commits = &commits{hub: s.hub, log: s.log}
	s.store.OnCommit(s.commits.committed)
	s.startAlerts()
	if n, err := s.store.RecoverInterrupted(ctx, ledger.ActorRecovery); err != nil {
		return fmt.Errorf("recover runs interrupted by the last exit: %w", err)
	} else if n > 0 {
		s.log.Warn("runs interrupted by the last exit keep their holds; reconcile them on the dashboard", "runs", n)
	}
	if err := s.store.ApplyTenants(ctx, tenantsForLedger(s.tenants), ledger.ActorConfig); err != nil {
		return fmt.Errorf("apply configured tenants: %w", err)
	}
	for _, u := range s.cfg.Upstreams {
		s.gates.Set(u.Name, gateOptions(u))
	}
	s.registry = newRegistry(s)
	return nil
}

// listen takes addr, saying so when another process holds it.
func listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("listen on %s: the address is in use (another quotagate?); pick another with --addr: %w", addr, err)
	}
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return ln, nil
}

// start assembles the gateway, joins the other gateways of a shared ledger,
// builds the admin API and serves on s.ln.
func (s *Server) start(ctx context.Context, addr string) (err error) {
	port := s.ln.Addr().(*net.TCPAddr).Port
	if s.assembly, err = assemble(parts{Config: s.cfg, Store: s.store, Gates: s.gates, Hub: s.hub, Registry: s.registry,
		Logger: s.log, URL: s.URL(), TopUpKey: s.topUpKey, Scrub: scrub.New(s.secrets()...), Fence: s.fence, Money: s.money, Now: s.opts.Clock.Now}); err != nil {
		return fmt.Errorf("gateway: %w", err)
	}
	var quotaActions admin.Quota = unguarded{}
	if g := s.assembly.guard; g != nil {
		quotaActions = quotaAdmin{g}
		s.commits.setGuard(g)
	}
	if err := s.joinPeers(ctx); err != nil {
		return fmt.Errorf("join the other gateways: %w", err)
	}
	if err := s.startEvidence(ctx, scrub.New(s.secrets()...)); err != nil {
		return fmt.Errorf("usage lookups: %w", err)
	}
	s.admin = admin.New(admin.Options{
		Token:     s.token,
		Origins:   admin.AllowedOrigins(addr, port),
		State:     admin.StateFunc(s.State),
		Store:     s.store,
		Canceller: s.assembly,
		Quota:     quotaActions,
		Hub:       s.hub,
		Presenter: &s.presenter,
		Logger:    s.log,
		Connect:   s.connectInfo,
		Tenants:   tenantAdmin{s},
		Archiver:  s.archiveActions(),
		Currency:  s.money.Currency,
		Evidence:  providerEvidence{s},
	})
	s.http = &http.Server{
		Handler:           hostCheck(allowedHosts(addr, port), s.routes(s.assembly.gateway)),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	go func() {
		defer close(s.served)
		if err := s.http.Serve(s.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("http server stopped", "err", err)
		}
	}()
	return nil
}

func (s *Server) routes(gw http.Handler) http.Handler {
	mux := http.NewServeMux()
	count := s.instrument
	mux.Handle("GET /healthz", count("healthz", http.HandlerFunc(s.healthz)))
	mux.Handle("GET /metrics", count("metrics", s.metrics()))
	mux.Handle("/admin/", count("admin", s.admin))
	mux.Handle("/v1/", count("v1", gw))
	// The Gemini API: its clients' base URL is the origin, their paths /v1beta/….
	mux.Handle("/v1beta/", count("v1", gw))
	for _, p := range gateway.MissingV1Paths { // a base URL without /v1
		mux.Handle(p, count("v1", http.HandlerFunc(gateway.MissingV1)))
	}
	mux.Handle("/", count("dashboard", dashboard(s.opts.Frontend)))
	return mux
}

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	status, pending := "ok", s.assembly.gateway.PendingEnds()
	if pending > 0 {
		status = "degraded" // run ends the ledger has not taken yet: retried until it does
	}
	fmt.Fprintf(w, "{\"status\":%q,\"version\":%q,\"pending_run_ends\":%d}\n", status, s.opts.Version, pending)
}

// checkLoopback refuses to listen anywhere but loopback (RELIABILITY T22).
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("address %q: want host:port, e.g. 127.0.0.1:8787", addr)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("address %q: quotagate listens on loopback only (127.0.0.1, ::1 or localhost)", addr)
	}
	return nil
}

// URL is the base URL the server answers at, e.g. http://127.0.0.1:8787.
func (s *Server) URL() string {
	a := s.ln.Addr().(*net.TCPAddr)
	host := a.IP.String()
	if a.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, strconv.Itoa(a.Port))
}

// DashboardURL is URL with the admin token in the fragment, which browsers
// never send to a server or put in a Referer.
func (s *Server) DashboardURL() string { return s.URL() + "/#token=" + s.token }

// AdminToken returns the admin API's bearer token.
func (s *Server) AdminToken() string { return s.token }

// DataDir returns the data directory.
func (s *Server) DataDir() string { return s.opts.DataDir }

// GeneratedKeys returns tenant → API key for the keys this server generated
// for keyless tenants (the embedded default's `local`), to be shown once.
func (s *Server) GeneratedKeys() map[string]string {
	out := make(map[string]string, len(s.keys))
	for k, v := range s.keys {
		out[k] = v
	}
	return out
}

// Hub returns the live hub; producers publish their changes there.
func (s *Server) Hub() *live.Hub { return s.hub }

// Demo returns the built-in demo upstream serving upstream name, or nil: its
// Stats tell tests and the load smoke what the upstream observed.
func (s *Server) Demo(upstream string) *demo.Server {
	return s.assembly.demos[upstream]
}

// Store returns the ledger.
func (s *Server) Store() ledger.Store { return s.store }

// Currency is the gateway's currency ("" when its books are in units
// only), which the audit export writes beside each amount of money.
func (s *Server) Currency() string { return s.money.Currency }

// WriteAuditCSV streams the audit export, as GET /admin/api/audit.csv does;
// the desktop's save dialog uses it.
func (s *Server) WriteAuditCSV(ctx context.Context, w io.Writer, from, to, tenant string) error {
	q, err := audit.ParseQuery(url.Values{"from": {from}, "to": {to}, "tenant": {tenant}}, nil)
	if err != nil {
		return err
	}
	q.Currency = s.money.Currency
	return audit.WriteCSV(ctx, w, s.store, q)
}

// Close disconnects dashboards, stops the listener (waiting up to 5 s for
// requests in flight) and closes the ledger. Safe to call more than once.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		if s.admin != nil {
			s.admin.Close()
		}
		if s.http != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := s.http.Shutdown(ctx); err != nil {
				s.closeErr = fmt.Errorf("shut down http: %w", err)
				_ = s.http.Close()
			}
			<-s.served
		} else if s.ln != nil {
			_ = s.ln.Close()
		}
		if s.assembly != nil {
			s.assembly.close()
		}
		if s.alerts != nil {
			s.alerts.Close() // records what it was told, before the ledger closes
		}
		if s.evidence != nil {
			s.evidence.Close() // records what it found, before the ledger closes
		}
		if s.store != nil {
			if err := s.store.Close(); err != nil && s.closeErr == nil {
				s.closeErr = fmt.Errorf("close ledger: %w", err)
			}
		}
		_ = s.lock.Release() // last: the ledger is closed
	})
	return s.closeErr
}

// LedgerFile is the SQLite ledger's file name in the data dir.
const LedgerFile = "ledger.db"

// OpenLedger opens (creating if needed) the SQLite ledger in dataDir.
func OpenLedger(ctx context.Context, dataDir string) (ledger.Store, error) {
	return openLedgerAt(nil)(ctx, dataDir)
}

// openLedgerAt is OpenLedger with the ledger's clock now (nil: real time).
func openLedgerAt(now clock.Func) func(context.Context, string) (ledger.Store, error) {
	return func(_ context.Context, dataDir string) (ledger.Store, error) {
		return sqlite.Open(filepath.Join(dataDir, LedgerFile), sqlite.Options{Now: now})
	}
}

// Verify opens the ledger in o.DataDir and recomputes every balance from the
// runs and the audit trail, replaying what came after the last checkpoint
// and leaving a new one (`quotagate verify`); empty means consistent.
func Verify(ctx context.Context, o Options) ([]string, error) {
	return VerifyWith(ctx, o, ledger.VerifyOptions{Checkpoint: true})
}

// VerifyOptions says how much of the history a verify replays (see
// ledger.VerifyOptions).
type VerifyOptions = ledger.VerifyOptions

// VerifyWith is Verify with opts: `quotagate verify --full` replays the
// whole history.
func VerifyWith(ctx context.Context, o Options, opts VerifyOptions) ([]string, error) {
	cfg := o.Config
	if cfg == nil {
		cfg = config.Default()
	}
	return verifyConfigured(ctx, cfg, o.DataDir, opts)
}
