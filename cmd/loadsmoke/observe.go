package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/quotagate/quotagate/cmd/internal/child"
)

// RSS is the gateway's resident memory over a run, from /proc/<pid>/status.
type RSS struct {
	PID     int    `json:"pid"`
	Source  string `json:"source"` // "child process", "-pid", "in-process", or why not measured
	StartKB int64  `json:"start_kb"`
	PeakKB  int64  `json:"peak_kb"` // highest VmRSS sampled (every 100 ms) during the run
	EndKB   int64  `json:"end_kb"`
	HWMKB   int64  `json:"hwm_kb"` // the kernel's VmHWM at the end: peak since the process started
}

// readStatusKB reads one "Key:   123 kB" field of /proc/<pid>/status.
func readStatusKB(pid int, key string) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), key+":"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("/proc/%d/status has no %s", pid, key)
}

// sampleRSS samples pid's VmRSS until stop is called, which returns the figures.
func sampleRSS(pid int, source string) (stop func() RSS) {
	r := RSS{PID: pid, Source: source}
	if pid <= 0 {
		return func() RSS { return r }
	}
	var mu sync.Mutex
	r.StartKB, _ = readStatusKB(pid, "VmRSS")
	r.PeakKB = r.StartKB
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if kb, err := readStatusKB(pid, "VmRSS"); err == nil {
					mu.Lock()
					r.PeakKB = max(r.PeakKB, kb)
					mu.Unlock()
				}
			}
		}
	}()
	return func() RSS {
		close(done)
		<-finished
		mu.Lock()
		defer mu.Unlock()
		r.EndKB, _ = readStatusKB(pid, "VmRSS")
		r.PeakKB = max(r.PeakKB, r.EndKB)
		r.HWMKB, _ = readStatusKB(pid, "VmHWM")
		return r
	}
}

// GateState is the part of the admin snapshot's "gates" entries the report uses.
type GateState struct {
	Upstream  string `json:"upstream"`
	InFlight  int    `json:"in_flight"`
	Queued    int    `json:"queued"`
	Admitted  int64  `json:"admitted"`
	Rejected  int64  `json:"rejected"`
	TimedOut  int64  `json:"timed_out"`
	WaitP95MS int64  `json:"wait_p95_ms"`
}

// gateStates reads GET /admin/api/state; nil when no admin token was given
// or the call failed (the report then says nothing of the gates).
func gateStates(ctx context.Context, c *http.Client, base, token string) []GateState {
	if token == "" {
		return nil
	}
	var s struct {
		Gates []GateState `json:"gates"`
	}
	if status, err := child.GetJSON(ctx, c, base+"/admin/api/state", token, &s); err != nil || status != http.StatusOK {
		return nil
	}
	return s.Gates
}

// waitHealthy polls GET /healthz until it answers 200 or ctx ends.
func waitHealthy(ctx context.Context, c *http.Client, base string) error {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/healthz", nil)
		if resp, err := c.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("gateway at %s not healthy: %w", base, ctx.Err())
		case <-t.C:
		}
	}
}
