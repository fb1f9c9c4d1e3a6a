package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/config"
	"github.com/quotagate/quotagate/backend/gate"
)

// A fake gateway on a real socket: every user's first attempt gets 429 with
// Retry-After 0, the second a stream; user 2's stream is cut without [DONE].
func TestLoadRetriesAndClassifies(t *testing.T) {
	var attempts [3]atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user := int(r.Header.Get("Authorization")[len("Bearer k"):][0] - '0')
		if r.Header.Get("X-Demo-Plan") != "latency=0s" {
			t.Errorf("plan header %q", r.Header.Get("X-Demo-Plan"))
		}
		if attempts[user].Add(1) == 1 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"error":{"message":"busy","type":"rate_limit_error","code":"upstream_busy"}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("X-Run-Id", fmt.Sprint("run_", user))
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\n")
		switch user {
		case 2:
			fmt.Fprint(w, "data: {\"error\":{\"message\":\"cut\",\"code\":\"upstream_interrupted\"}}\n\n")
		default:
			fmt.Fprint(w, "data: [DONE]\n\n")
		}
	}))
	defer srv.Close()

	l := Load{BaseURL: srv.URL, Keys: []string{"k0", "k1", "k2"}, Users: 3, Calls: 1, Model: "demo-chat",
		Plan: "latency=0s", Retry: gate.DefaultRetryPolicy, Timeout: 10 * time.Second, Client: srv.Client()}
	calls := l.Run(t.Context())
	r := Summarize(3, 1, calls, time.Second)
	if r.Calls != 3 || r.Attempts != 6 || r.Retried != 3 || r.First429 != 3 || r.Final429 != 0 {
		t.Fatalf("report %+v, want 3 calls, 6 attempts, all retried once, no final 429", r)
	}
	if r.StatusMix["200"] != 2 || r.StatusMix["200-incomplete upstream_interrupted"] != 1 || r.Incomplete != 1 {
		t.Fatalf("status mix %v", r.StatusMix)
	}
	for _, c := range calls {
		if c.TTFB <= 0 || c.TTFB > c.Total || c.RunID == "" {
			t.Fatalf("call %+v: want 0 < ttfb ≤ total and a run id", c)
		}
	}
}

func TestLoadFinal429AfterRetriesRunOut(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, `{"error":{"code":"rate_limited"}}`)
	}))
	defer srv.Close()
	l := Load{BaseURL: srv.URL, Keys: []string{"k"}, Users: 1, Calls: 2, Retry: gate.DefaultRetryPolicy,
		Timeout: 10 * time.Second, Client: srv.Client()}
	r := Summarize(1, 2, l.Run(t.Context()), time.Second)
	if n.Load() != 6 || r.Final429 != 2 || r.StatusMix["429 rate_limited"] != 2 {
		t.Fatalf("%d attempts, report %+v; want 3 attempts per call and 2 final 429s", n.Load(), r)
	}
	if fails := r.Verdict(); len(fails) == 0 || !strings.Contains(fails[0], "final 429 100.0 %") {
		t.Fatalf("verdict %v, want the final-429 line to fail", fails)
	}
}

func TestPercentileAndVerdict(t *testing.T) {
	s := time.Second
	d := []time.Duration{5 * s, 1 * s, 3 * s, 2 * s, 4 * s, 6 * s, 7 * s, 8 * s, 9 * s, 10 * s,
		11 * s, 12 * s, 13 * s, 14 * s, 15 * s, 16 * s, 17 * s, 18 * s, 19 * s, 20 * s}
	for _, tt := range []struct {
		p    int
		want time.Duration
	}{{50, 10 * s}, {95, 19 * s}, {100, 20 * s}, {1, 1 * s}} {
		if got := percentile(d, tt.p); got != tt.want {
			t.Errorf("p%d = %v, want %v", tt.p, got, tt.want)
		}
	}
	if percentile(nil, 95) != 0 {
		t.Error("p95 of nothing")
	}
	// 1 final 429 in 50 calls is 2 %: on the line, passes; 2 in 50 fails.
	calls := make([]Call, 50)
	for i := range calls {
		calls[i] = Call{Final: 200, Complete: true, Statuses: []int{200}, Attempts: 1, TTFB: s, Total: 2 * s}
	}
	calls[0] = Call{Final: 429, Statuses: []int{429, 429, 429}, Attempts: 3}
	if f := Summarize(10, 5, calls, s).Verdict(); len(f) != 0 {
		t.Fatalf("2 %% final 429 failed: %v", f)
	}
	calls[1] = calls[0]
	if f := Summarize(10, 5, calls, s).Verdict(); len(f) != 1 {
		t.Fatalf("4 %% final 429 verdict %v", f)
	}
	calls[1] = Call{Final: 200, Complete: true, Statuses: []int{503, 200}, Attempts: 2, TTFB: s, Total: 2 * s}
	if f := Summarize(10, 5, calls, s).Verdict(); len(f) != 1 || !strings.Contains(f[0], "5xx") {
		t.Fatalf("a retried 503 must still count as a 5xx: %v", f)
	}
}

func TestReadStatusKB(t *testing.T) {
	kb, err := readStatusKB(os.Getpid(), "VmRSS")
	if err != nil || kb <= 0 {
		t.Fatalf("VmRSS of self = %d, %v", kb, err)
	}
	stop := sampleRSS(os.Getpid(), "self")
	r := stop()
	if r.PeakKB < r.StartKB || r.HWMKB < r.EndKB || r.EndKB <= 0 {
		t.Fatalf("rss %+v", r)
	}
}

func TestConfigYAML(t *testing.T) {
	got := configYAML(SpawnOptions{Meter: "utf8-bytes-v1", MaxConcurrent: 2, MaxWaiters: 4, MaxWait: 8 * time.Second,
		PerMinute: 10, PerHour: 120, TenantMax: 2}, "127.0.0.1:9", "tok-0123456789abcdef", []string{"sk-a-123456", "sk-b-123456"})
	for _, want := range []string{"addr: 127.0.0.1:9\n", "  - id: user02\n    key: sk-b-123456\n",
		"rate_limits: {per_minute: 10, per_hour: 120}", "max_concurrent: 2\n    queue: {max_waiters: 4, max_wait: 8s}\n"} {
		if !strings.Contains(got, want) {
			t.Fatalf("config lacks %q:\n%s", want, got)
		}
	}
	cfg, err := config.Parse([]byte(got), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatalf("the generated config does not load: %v\n%s", err, got)
	}
	if len(cfg.Tenants) != 2 || cfg.Tenants[1].RateLimits.PerHour != 120 || cfg.Upstreams[0].Queue.MaxWait != 8*time.Second {
		t.Fatalf("loaded config %+v", cfg)
	}
}

// Both renderings list the status mix in status order.
func TestReportStatusMixOrder(t *testing.T) {
	r := Report{StatusMix: map[string]int{"429 upstream_busy": 1, "200": 3, "200-incomplete": 2}}
	var b strings.Builder
	r.Write(&b)
	if want := "status mix      200: 3, 200-incomplete: 2, 429 upstream_busy: 1\n"; !strings.Contains(b.String(), want) {
		t.Errorf("report lacks %q:\n%s", want, b.String())
	}
	if row, want := r.MarkdownRow(), "| 200×3, 200-incomplete×2, 429 upstream_busy×1 |"; !strings.Contains(row, want) {
		t.Errorf("row %q lacks %q", row, want)
	}
}
