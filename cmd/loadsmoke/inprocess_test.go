package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
)

// End-to-end checks of seed 003's traffic shaping (rate limits, the gate's
// bounded queue, the client's retries) on the in-process assembly (real server,
// SQLite ledger, gateway, demo upstream on loopback sockets).

func startFleet(t *testing.T, o SpawnOptions) *Fleet {
	t.Helper()
	if o.Meter == "" {
		o.Meter = "utf8-bytes-v1"
	}
	f, err := StartInProcess(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.Close(); err != nil {
			t.Error(err)
		}
	})
	return f
}

type answer struct {
	status     int
	code       string
	retryAfter int
	runID      string
	elapsed    time.Duration
}

func chat(ctx context.Context, t *testing.T, f *Fleet, plan string) answer {
	body, _ := json.Marshal(map[string]any{"model": "demo-chat", "stream": true, "max_tokens": 64,
		"messages": []map[string]string{{"role": "user", "content": "/demo " + plan}}})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.BaseURL+"/v1/chat/completions", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+f.Keys[0])
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return answer{elapsed: time.Since(start)}
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	ra, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
	return answer{status: resp.StatusCode, code: errorCode(raw), retryAfter: ra, runID: resp.Header.Get("X-Run-Id"), elapsed: time.Since(start)}
}

// poll waits for cond with a deadline instead of sleeping a guessed time.
func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func runs(t *testing.T, f *Fleet) []ledger.Run {
	t.Helper()
	rs, err := f.store.Runs(context.Background(), ledger.RunFilter{TenantID: "user01"})
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// A call over the tenant's per-minute limit is refused before anything is
// reserved: no run, no hold, no upstream request; the refusal is audited.
func TestRateLimitRefusalTouchesNothing(t *testing.T) {
	f := startFleet(t, SpawnOptions{Users: 1, MaxConcurrent: 2, MaxWaiters: 4, MaxWait: 8 * time.Second,
		PerMinute: 2, TenantMax: 4})
	for i := range 2 {
		if a := chat(t.Context(), t, f, "latency=0s"); a.status != 200 {
			t.Fatalf("call %d within the limit: %+v", i+1, a)
		}
	}
	before, _ := f.store.Balance(t.Context(), "user01")
	a := chat(t.Context(), t, f, "latency=0s")
	if a.status != 429 || a.code != ledger.CodeRateLimited || a.retryAfter < 1 || a.retryAfter > 60 || a.runID != "" {
		t.Fatalf("third call in the minute = %+v, want 429 rate_limited, Retry-After 1..60 s, no run id", a)
	}
	after, _ := f.store.Balance(t.Context(), "user01")
	if after != before {
		t.Fatalf("the refusal moved the balance: %+v → %+v", before, after)
	}
	if n := len(runs(t, f)); n != 2 {
		t.Fatalf("%d runs in the ledger, want the 2 admitted ones", n)
	}
	if n := len(f.demos[0].Stats().Requests); n != 2 {
		t.Fatalf("the upstream saw %d requests, want 2", n)
	}
	audit, err := f.store.Audit(t.Context(), ledger.AuditFilter{TenantID: "user01"})
	if err != nil {
		t.Fatal(err)
	}
	rejects := 0
	for _, e := range audit {
		if e.Kind == ledger.AuditReject && e.Reason == ledger.CodeRateLimited {
			rejects++
		}
	}
	if rejects != 1 {
		t.Fatalf("%d rate_limited rejections audited, want 1", rejects)
	}
}

// With the slot taken and the one queue place used, the next call gets 429
// upstream_busy at once; the waiting call's run is visible as queued and,
// when its client gives up, it is released without reaching the upstream.
func TestGateQueueEndToEnd(t *testing.T) {
	f := startFleet(t, SpawnOptions{Users: 1, MaxConcurrent: 1, MaxWaiters: 1, MaxWait: 8 * time.Second, TenantMax: 4})
	hctx, stopHolder := context.WithCancel(t.Context())
	holder := make(chan answer, 1)
	go func() { holder <- chat(hctx, t, f, "latency=30s") }()
	if err := f.demos[0].WaitRequests(t.Context(), 1); err != nil {
		t.Fatal(err)
	}

	wctx, stopWaiter := context.WithCancel(t.Context())
	waiter := make(chan answer, 1)
	go func() { waiter <- chat(wctx, t, f, "latency=0s") }()
	var queued ledger.Run
	poll(t, "a queued run", func() bool {
		for _, r := range runs(t, f) {
			if r.Status == ledger.RunQueued {
				queued = r
				return true
			}
		}
		return false
	})
	if gs := gateStates(t.Context(), http.DefaultClient, f.BaseURL, f.AdminToken); len(gs) != 1 || gs[0].InFlight != 1 || gs[0].Queued != 1 {
		t.Fatalf("admin gates %+v, want in_flight 1 queued 1", gs)
	}

	a := chat(t.Context(), t, f, "latency=0s")
	if a.status != 429 || a.code != ledger.CodeUpstreamBusy || a.retryAfter < 1 || a.elapsed > 2*time.Second {
		t.Fatalf("call past the full queue = %+v, want 429 upstream_busy with Retry-After at once", a)
	}
	if n := len(runs(t, f)); n != 2 {
		t.Fatalf("%d runs after the refusal, want 2 (holder, waiter)", n)
	}

	stopWaiter()
	<-waiter
	poll(t, "the queued run released", func() bool {
		r, err := f.store.Run(t.Context(), queued.ID)
		return err == nil && r.Status == ledger.RunCancelled && r.Usage == ledger.UsageReleased && r.HeldUnits == 0
	})
	if n := len(f.demos[0].Stats().Requests); n != 1 {
		t.Fatalf("the upstream saw %d requests, want only the holder's", n)
	}
	stopHolder()
	<-holder
	poll(t, "the gate empty", func() bool {
		gs := gateStates(t.Context(), http.DefaultClient, f.BaseURL, f.AdminToken)
		return len(gs) == 1 && gs[0].InFlight == 0 && gs[0].Queued == 0
	})
}
