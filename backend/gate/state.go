package gate

import (
	"slices"
	"time"
)

// State is one gate as the admin snapshot shows it (CONTRACTS.md "gates";
// cancelled is an addition). Counters are totals since start.
type State struct {
	Upstream      string `json:"upstream"`
	MaxConcurrent int    `json:"max_concurrent"`
	InFlight      int    `json:"in_flight"`
	Queued        int    `json:"queued"`
	MaxWaiters    int    `json:"max_waiters"`
	MaxWaitMS     int64  `json:"max_wait_ms"`
	Admitted      uint64 `json:"admitted"`
	Rejected      uint64 `json:"rejected"` // queue full at arrival
	TimedOut      uint64 `json:"timed_out"`
	Cancelled     uint64 `json:"cancelled"`   // gave up while waiting
	WaitP95MS     int64  `json:"wait_p95_ms"` // over the last 512 admitted calls, queued or not

	// For the Prometheus histogram; not in the JSON.
	WaitBucketCounts []uint64      `json:"-"` // non-cumulative, one per WaitBuckets bound plus +Inf
	WaitSum          time.Duration `json:"-"`
}

// State returns the gate's figures at one instant.
func (g *Gate) State() State {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := State{
		Upstream:         g.name,
		MaxConcurrent:    g.opts.MaxConcurrent,
		InFlight:         g.inFlight,
		Queued:           g.queue.Len(),
		MaxWaiters:       g.opts.MaxWaiters,
		MaxWaitMS:        g.opts.MaxWait.Milliseconds(),
		Admitted:         g.admitted,
		Rejected:         g.rejected,
		TimedOut:         g.timedOut,
		Cancelled:        g.cancelled,
		WaitBucketCounts: slices.Clone(g.waitCounts[:]),
		WaitSum:          g.waitSum,
	}
	n := min(g.recentN, recentWaits)
	if n > 0 {
		w := slices.Clone(g.recent[:n])
		slices.Sort(w)
		// Nearest rank: the smallest wait at or above 95 % of the samples.
		s.WaitP95MS = w[(95*n+99)/100-1].Milliseconds()
	}
	return s
}
