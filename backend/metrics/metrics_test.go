package metrics_test

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"

	"github.com/quotagate/quotagate/backend/gate"
	"github.com/quotagate/quotagate/backend/metrics"
	"github.com/quotagate/quotagate/backend/ratelimit"
)

// series indexes gathered metrics by name and sorted label pairs.
type series map[string]*dto.Metric

func key(name string, labels ...string) string {
	k := name
	for i := 0; i+1 < len(labels); i += 2 {
		k += "|" + labels[i] + "=" + labels[i+1]
	}
	return k
}

func gather(t *testing.T, reg *prometheus.Registry) series {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := series{}
	for _, mf := range mfs {
		for _, m := range mf.Metric {
			var labels []string
			for _, lp := range m.Label { // Gather sorts labels by name
				labels = append(labels, lp.GetName(), lp.GetValue())
			}
			out[key(mf.GetName(), labels...)] = m
		}
	}
	// promlint checks names, units and help texts against Prometheus conventions.
	problems, err := promlint.NewWithMetricFamilies(mfs).Lint()
	if err != nil || len(problems) > 0 {
		t.Fatalf("promlint: %v %+v", err, problems)
	}
	return out
}

func value(t *testing.T, s series, name string, labels ...string) float64 {
	t.Helper()
	m := s[key(name, labels...)]
	if m == nil {
		t.Fatalf("no series %s; have %v", key(name, labels...), slices.Sorted(maps.Keys(s)))
	}
	switch {
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Counter != nil:
		return m.Counter.GetValue()
	}
	t.Fatalf("%s is neither gauge nor counter", name)
	return 0
}

func TestGateMetrics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gs := gate.NewGates()
		g := gs.Set("demo", gate.Options{MaxConcurrent: 1, MaxWaiters: 1, MaxWait: 8 * time.Second})
		gs.Set("ark", gate.Options{})
		reg := prometheus.NewRegistry()
		if err := metrics.Register(reg, gs, nil); err != nil {
			t.Fatal(err)
		}

		hold, _ := g.Acquire(t.Context())
		waited := make(chan func())
		go func() {
			rel, err := g.Acquire(t.Context())
			if err != nil {
				t.Error(err)
			}
			waited <- rel
		}()
		synctest.Wait()
		if _, err := g.Acquire(t.Context()); err == nil { // queue full
			t.Fatal("third call admitted past max_waiters 1")
		}
		s := gather(t, reg)
		for _, c := range []struct {
			name   string
			reason string
			want   float64
		}{
			{"quotagate_gate_in_flight", "", 1},
			{"quotagate_gate_queued", "", 1},
			{"quotagate_gate_max_concurrent", "", 1},
			{"quotagate_gate_max_waiters", "", 1},
			{"quotagate_gate_admitted_total", "", 1},
			{"quotagate_gate_rejections_total", metrics.ReasonQueueFull, 1},
			{"quotagate_gate_rejections_total", metrics.ReasonMaxWait, 0},
		} {
			labels := []string{"upstream", "demo"}
			if c.reason != "" {
				labels = []string{"reason", c.reason, "upstream", "demo"}
			}
			if got := value(t, s, c.name, labels...); got != c.want {
				t.Errorf("%s%v = %v, want %v", c.name, labels, got, c.want)
			}
		}

		time.Sleep(3 * time.Second)
		hold()
		(<-waited)()
		// Nobody releases the next holder: a waiter runs out its 8 s.
		hold, _ = g.Acquire(t.Context())
		if _, err := g.Acquire(t.Context()); err == nil {
			t.Fatal("waiter admitted with the slot held throughout")
		}
		hold()

		s = gather(t, reg)
		if got := value(t, s, "quotagate_gate_rejections_total", "reason", metrics.ReasonMaxWait, "upstream", "demo"); got != 1 {
			t.Errorf("max_wait rejections = %v, want 1", got)
		}
		if got := value(t, s, "quotagate_gate_in_flight", "upstream", "demo"); got != 0 {
			t.Errorf("in_flight after everything finished = %v", got)
		}
		h := s[key("quotagate_gate_wait_seconds", "upstream", "demo")].GetHistogram()
		if h.GetSampleCount() != 3 || h.GetSampleSum() != 3 {
			t.Fatalf("wait histogram count %d sum %v, want 3 waits summing 3 s", h.GetSampleCount(), h.GetSampleSum())
		}
		cum := map[float64]uint64{}
		for _, b := range h.Bucket {
			cum[b.GetUpperBound()] = b.GetCumulativeCount()
		}
		if cum[0.001] != 2 || cum[2] != 2 || cum[4] != 3 || cum[30] != 3 {
			t.Fatalf("cumulative buckets %v, want 2 at ≤1 ms and ≤2 s, 3 from ≤4 s", cum)
		}
		if got := value(t, s, "quotagate_gate_max_concurrent", "upstream", "ark"); got != 2 {
			t.Errorf("ark max_concurrent = %v, want the default 2", got)
		}
	})
}

func TestRateLimitMetrics(t *testing.T) {
	now := time.Date(2026, 10, 14, 9, 0, 0, 0, time.UTC)
	l := ratelimit.New(ratelimit.Options{Now: func() time.Time { return now }})
	l.SetLimits("alice", ratelimit.Limits{PerMinute: 2, PerHour: 10})
	l.SetLimits("bob", ratelimit.Limits{PerHour: 1})
	for range 5 {
		l.Allow("alice")
	}
	l.Allow("bob")
	reg := prometheus.NewRegistry()
	if err := metrics.Register(reg, nil, l); err != nil {
		t.Fatal(err)
	}
	s := gather(t, reg)
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"quotagate_ratelimit_admitted_total", []string{"tenant", "alice"}, 2},
		{"quotagate_ratelimit_refusals_total", []string{"tenant", "alice"}, 3},
		{"quotagate_ratelimit_window_calls", []string{"tenant", "alice", "window", "minute"}, 2},
		{"quotagate_ratelimit_window_calls", []string{"tenant", "alice", "window", "hour"}, 2},
		{"quotagate_ratelimit_window_limit", []string{"tenant", "alice", "window", "minute"}, 2},
		{"quotagate_ratelimit_window_limit", []string{"tenant", "bob", "window", "hour"}, 1},
		{"quotagate_ratelimit_refusals_total", []string{"tenant", "bob"}, 0},
	} {
		if got := value(t, s, c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if _, ok := s[key("quotagate_ratelimit_window_limit", "tenant", "bob", "window", "minute")]; ok {
		t.Error("bob's minute window is off but exported")
	}
}

func TestOwnRegistryOnly(t *testing.T) {
	gs := gate.NewGates()
	gs.Set("demo", gate.Options{})
	reg := prometheus.NewRegistry()
	if err := metrics.Register(reg, gs, ratelimit.New(ratelimit.Options{})); err != nil {
		t.Fatal(err)
	}
	if err := metrics.Register(reg, gs, nil); err == nil {
		t.Fatal("registering twice on one registry succeeded")
	}
	mfs, _ := prometheus.DefaultGatherer.Gather()
	for _, mf := range mfs {
		if len(mf.GetName()) > 10 && mf.GetName()[:10] == "quotagate_" {
			t.Fatalf("%s leaked onto the default registry", mf.GetName())
		}
	}
}

// Each tenant's spend reads the ledger at scrape time: units always, the
// money series only with a currency, labelled with it.
func TestSpendMetrics(t *testing.T) {
	spends := []metrics.Spend{{Tenant: "a", Units: 1237, Micros: 4_948}, {Tenant: "b"}}
	read := func() ([]metrics.Spend, error) { return spends, nil }
	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics.NewSpendCollector(read, "USD"))
	s := gather(t, reg)
	if v := value(t, s, "quotagate_spent_units_total", "tenant", "a"); v != 1237 {
		t.Errorf("units of a = %v", v)
	}
	if v := value(t, s, "quotagate_spent_micros_total", "currency", "USD", "tenant", "a"); v != 4948 {
		t.Errorf("micros of a = %v", v)
	}
	if v := value(t, s, "quotagate_spent_micros_total", "currency", "USD", "tenant", "b"); v != 0 {
		t.Errorf("micros of b = %v", v)
	}
	unitsOnly := prometheus.NewRegistry()
	unitsOnly.MustRegister(metrics.NewSpendCollector(read, ""))
	for k := range gather(t, unitsOnly) {
		if strings.HasPrefix(k, "quotagate_spent_micros_total") {
			t.Errorf("a gateway without a currency has %s", k)
		}
	}
	broken := prometheus.NewRegistry()
	broken.MustRegister(metrics.NewSpendCollector(func() ([]metrics.Spend, error) { return nil, errors.New("ledger closed") }, "USD"))
	if _, err := broken.Gather(); err == nil || !strings.Contains(err.Error(), "ledger closed") {
		t.Errorf("an unreadable ledger gathers %v", err)
	}
}
