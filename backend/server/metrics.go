package server

import (
	"bufio"
	"net"
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
)

// newRegistry is the server's own registry (not the global default, so tests
// can open many servers in one process).
func newRegistry(s *Server) *prometheus.Registry {
	r := prometheus.NewRegistry()
	r.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name:        "quotagate_build_info",
			Help:        "Always 1; the version is a label.",
			ConstLabels: prometheus.Labels{"version": s.opts.Version},
		}, func() float64 { return 1 }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "quotagate_live_subscribers",
			Help: "Dashboards connected to the live hub.",
		}, func() float64 { return float64(s.hub.Len()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "quotagate_live_changes_total",
			Help: "State changes published to the live hub.",
		}, func() float64 { p, _ := s.hub.Stats(); return float64(p) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "quotagate_live_dropped_total",
			Help: "Dashboard subscribers dropped for reading too slowly.",
		}, func() float64 { _, d := s.hub.Stats(); return float64(d) }),
	)
	if st, ok := s.store.(interface{ AuditTextLag() int64 }); ok {
		r.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "quotagate_audit_text_lag_rows",
			Help: "Audit rows written but not yet in the text search index (SQLite indexes them after commit; search reads them one by one meanwhile).",
		}, func() float64 { return float64(st.AuditTextLag()) }))
	}
	s.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "quotagate_http_requests_total",
		Help: "HTTP requests by route group and status code.",
	}, []string{"group", "code"})
	r.MustRegister(s.requests)
	return r
}

func metricsHandler(r *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(r, promhttp.HandlerOpts{Registry: r})
}

// metrics serves /metrics: everything to the admin token, and without it
// nothing that names a tenant: any process on the machine can read it, and
// tenant names are the operator's business.
func (s *Server) metrics() http.Handler {
	full := metricsHandler(s.registry)
	public := promhttp.HandlerFor(withoutLabel{s.registry, "tenant"}, promhttp.HandlerOpts{Registry: s.registry})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		if s.admin.Authorized(r) {
			full.ServeHTTP(w, r)
			return
		}
		public.ServeHTTP(w, r)
	})
}

// withoutLabel gathers g's metrics except the series carrying label.
type withoutLabel struct {
	g     prometheus.Gatherer
	label string
}

func (w withoutLabel) Gather() ([]*dto.MetricFamily, error) {
	mfs, err := w.g.Gather()
	out := mfs[:0]
	for _, mf := range mfs {
		kept := mf.Metric[:0]
		for _, m := range mf.Metric {
			if !hasLabel(m, w.label) {
				kept = append(kept, m)
			}
		}
		if len(kept) > 0 {
			mf.Metric = kept
			out = append(out, mf)
		}
	}
	return out, err
}

func hasLabel(m *dto.Metric, name string) bool {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return true
		}
	}
	return false
}

// instrument counts requests per group and status code. It does not use
// promhttp's wrapper: that one implements Flush() without an error, so a
// failed flush (a client that stopped reading, past its write deadline)
// would look like a success to http.ResponseController. statusRecorder
// only unwraps, so the controller reaches the real connection.
func (s *Server) instrument(group string, h http.Handler) http.Handler {
	counter := s.requests.MustCurryWith(prometheus.Labels{"group": group})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w}
		defer func() {
			if rec.code == 0 {
				rec.code = http.StatusOK
			}
			counter.WithLabelValues(strconv.Itoa(rec.code)).Inc()
		}()
		h.ServeHTTP(rec, r)
	})
}

// statusRecorder remembers the status code. Flush reaches the underlying
// writer through Unwrap (http.ResponseController), with its error; Hijack is
// implemented because gorilla/websocket asserts http.Hijacker directly.
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func (r *statusRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if r.code == 0 {
		r.code = http.StatusSwitchingProtocols
	}
	return http.NewResponseController(r.ResponseWriter).Hijack()
}
