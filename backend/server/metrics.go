package server

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
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

// instrument counts requests per group; promhttp's wrapper keeps Flusher and
// Hijacker, which SSE and the WebSocket need.
func (s *Server) instrument(group string, h http.Handler) http.Handler {
	return promhttp.InstrumentHandlerCounter(s.requests.MustCurryWith(prometheus.Labels{"group": group}), h)
}
