// Package metrics exposes the traffic-shaping state (gates and per-tenant
// rate limits) as Prometheus collectors on a registry the server passes in;
// nothing registers on the global default registry.
//
// The collectors read gate.Gates.State and ratelimit.Limiter.State at scrape
// time, so the figures on /metrics, in the admin snapshot and in the tests
// are one and the same count, kept in one place.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/quotagate/quotagate/backend/gate"
	"github.com/quotagate/quotagate/backend/ratelimit"
)

// Rejection reasons of quotagate_gate_rejections_total.
const (
	ReasonQueueFull = "queue_full" // every slot taken and max_waiters waiting on arrival
	ReasonMaxWait   = "max_wait"   // waited max_wait without a slot
)

var (
	descInFlight = prometheus.NewDesc("quotagate_gate_in_flight",
		"Upstream calls holding a gate slot.", []string{"upstream"}, nil)
	descQueued = prometheus.NewDesc("quotagate_gate_queued",
		"Calls waiting in the gate's FIFO queue (queue depth).", []string{"upstream"}, nil)
	descMaxConcurrent = prometheus.NewDesc("quotagate_gate_max_concurrent",
		"Configured gate slots.", []string{"upstream"}, nil)
	descMaxWaiters = prometheus.NewDesc("quotagate_gate_max_waiters",
		"Configured queue places.", []string{"upstream"}, nil)
	descAdmitted = prometheus.NewDesc("quotagate_gate_admitted_total",
		"Calls that got a gate slot, at once or after waiting.", []string{"upstream"}, nil)
	descRejections = prometheus.NewDesc("quotagate_gate_rejections_total",
		"Calls refused with 429 upstream_busy, by reason.", []string{"upstream", "reason"}, nil)
	descCancelled = prometheus.NewDesc("quotagate_gate_cancelled_total",
		"Calls that gave up while waiting (client gone, run cancelled).", []string{"upstream"}, nil)
	descWait = prometheus.NewDesc("quotagate_gate_wait_seconds",
		"Time admitted calls waited for a gate slot (0 when one was free).", []string{"upstream"}, nil)

	descRateAdmitted = prometheus.NewDesc("quotagate_ratelimit_admitted_total",
		"Calls a tenant's rate limits let through.", []string{"tenant"}, nil)
	descRateRefused = prometheus.NewDesc("quotagate_ratelimit_refusals_total",
		"Calls refused with 429 rate_limited, per tenant.", []string{"tenant"}, nil)
	descRateUsed = prometheus.NewDesc("quotagate_ratelimit_window_calls",
		"Admitted calls inside each sliding window now.", []string{"tenant", "window"}, nil)
	descRateLimit = prometheus.NewDesc("quotagate_ratelimit_window_limit",
		"Configured calls per window (absent when the window is off).", []string{"tenant", "window"}, nil)
)

// GateCollector collects every gate of a gate.Gates.
type GateCollector struct{ gates *gate.Gates }

// NewGateCollector returns a collector over gs.
func NewGateCollector(gs *gate.Gates) *GateCollector { return &GateCollector{gates: gs} }

// Describe implements prometheus.Collector.
func (c *GateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descInFlight, descQueued, descMaxConcurrent, descMaxWaiters,
		descAdmitted, descRejections, descCancelled, descWait} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *GateCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.gates.State() {
		u := s.Upstream
		ch <- prometheus.MustNewConstMetric(descInFlight, prometheus.GaugeValue, float64(s.InFlight), u)
		ch <- prometheus.MustNewConstMetric(descQueued, prometheus.GaugeValue, float64(s.Queued), u)
		ch <- prometheus.MustNewConstMetric(descMaxConcurrent, prometheus.GaugeValue, float64(s.MaxConcurrent), u)
		ch <- prometheus.MustNewConstMetric(descMaxWaiters, prometheus.GaugeValue, float64(s.MaxWaiters), u)
		ch <- prometheus.MustNewConstMetric(descAdmitted, prometheus.CounterValue, float64(s.Admitted), u)
		ch <- prometheus.MustNewConstMetric(descRejections, prometheus.CounterValue, float64(s.Rejected), u, ReasonQueueFull)
		ch <- prometheus.MustNewConstMetric(descRejections, prometheus.CounterValue, float64(s.TimedOut), u, ReasonMaxWait)
		ch <- prometheus.MustNewConstMetric(descCancelled, prometheus.CounterValue, float64(s.Cancelled), u)
		buckets := make(map[float64]uint64, len(gate.WaitBuckets))
		var cum, count uint64
		for i, ub := range gate.WaitBuckets {
			cum += s.WaitBucketCounts[i]
			buckets[ub] = cum
		}
		count = cum + s.WaitBucketCounts[len(gate.WaitBuckets)]
		ch <- prometheus.MustNewConstHistogram(descWait, count, s.WaitSum.Seconds(), buckets, u)
	}
}

// RateLimitCollector collects every limited tenant of a ratelimit.Limiter.
type RateLimitCollector struct{ limiter *ratelimit.Limiter }

// NewRateLimitCollector returns a collector over l.
func NewRateLimitCollector(l *ratelimit.Limiter) *RateLimitCollector {
	return &RateLimitCollector{limiter: l}
}

// Describe implements prometheus.Collector.
func (c *RateLimitCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descRateAdmitted, descRateRefused, descRateUsed, descRateLimit} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *RateLimitCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.limiter.State() {
		ch <- prometheus.MustNewConstMetric(descRateAdmitted, prometheus.CounterValue, float64(s.Admitted), s.Tenant)
		ch <- prometheus.MustNewConstMetric(descRateRefused, prometheus.CounterValue, float64(s.Refused), s.Tenant)
		if s.PerMinute > 0 {
			ch <- prometheus.MustNewConstMetric(descRateUsed, prometheus.GaugeValue, float64(s.LastMinute), s.Tenant, "minute")
			ch <- prometheus.MustNewConstMetric(descRateLimit, prometheus.GaugeValue, float64(s.PerMinute), s.Tenant, "minute")
		}
		if s.PerHour > 0 {
			ch <- prometheus.MustNewConstMetric(descRateUsed, prometheus.GaugeValue, float64(s.LastHour), s.Tenant, "hour")
			ch <- prometheus.MustNewConstMetric(descRateLimit, prometheus.GaugeValue, float64(s.PerHour), s.Tenant, "hour")
		}
	}
}

// Register puts the gate and rate-limit collectors on reg; either source may
// be nil when that control is off.
func Register(reg prometheus.Registerer, gs *gate.Gates, l *ratelimit.Limiter) error {
	if gs != nil {
		if err := reg.Register(NewGateCollector(gs)); err != nil {
			return err
		}
	}
	if l != nil {
		if err := reg.Register(NewRateLimitCollector(l)); err != nil {
			return err
		}
	}
	return nil
}

var (
	descSpentUnits = prometheus.NewDesc("quotagate_spent_units_total",
		"Units charged to a tenant by settled and reconciled runs (the ledger's spent_units).", []string{"tenant"}, nil)
	descSpentMicros = prometheus.NewDesc("quotagate_spent_micros_total",
		"Money charged to a tenant by priced runs, in micros (10⁻⁶) of the gateway's currency (the ledger's spent_micros).",
		[]string{"tenant", "currency"}, nil)
)

// Spend is what one tenant has been charged, as the ledger keeps it.
type Spend struct {
	Tenant string
	Units  int64
	Micros int64
}

// SpendCollector collects each tenant's spend from the ledger at scrape
// time, so /metrics says what the balances say. The money series is there
// only when the gateway has a currency.
type SpendCollector struct {
	spends   func() ([]Spend, error)
	currency string // "": no money
}

// NewSpendCollector returns a collector over spends, in currency ("" when
// the books are in units only).
func NewSpendCollector(spends func() ([]Spend, error), currency string) *SpendCollector {
	return &SpendCollector{spends: spends, currency: currency}
}

// Describe implements prometheus.Collector.
func (c *SpendCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descSpentUnits
	if c.currency != "" {
		ch <- descSpentMicros
	}
}

// Collect implements prometheus.Collector. A ledger that cannot be read
// is an invalid metric, which the scrape reports, rather than zeros.
func (c *SpendCollector) Collect(ch chan<- prometheus.Metric) {
	spends, err := c.spends()
	if err != nil {
		ch <- prometheus.NewInvalidMetric(descSpentUnits, err)
		return
	}
	for _, s := range spends {
		ch <- prometheus.MustNewConstMetric(descSpentUnits, prometheus.CounterValue, float64(s.Units), s.Tenant)
		if c.currency != "" {
			ch <- prometheus.MustNewConstMetric(descSpentMicros, prometheus.CounterValue, float64(s.Micros), s.Tenant, c.currency)
		}
	}
}
