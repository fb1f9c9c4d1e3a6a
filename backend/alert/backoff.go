package alert

import (
	"math/rand/v2"
	"time"
)

const (
	// DefaultFirstRetry is the wait after a delivery's first failure.
	DefaultFirstRetry = time.Second
	// DefaultMaxRetry caps the wait: a receiver that comes back is reached
	// within minutes, and one that stays down costs a request per few minutes.
	DefaultMaxRetry = 5 * time.Minute
)

// Backoff is the schedule of waits between deliveries of one alert: the
// wait doubles with each failure up to Max, and is jittered so that
// gateways retrying the same receiver do not arrive together. Delivery
// never gives up: the outbox keeps the alert until a 2xx.
type Backoff struct {
	First, Max time.Duration // zero: DefaultFirstRetry, DefaultMaxRetry
	// Jitter answers a fraction in [0, 1); nil draws one at random. A test
	// gives a constant and gets a fixed schedule.
	Jitter func() float64
}

// Delay is the wait after the failures-th failed delivery (1 for the
// first): with d = min(First×2^(failures−1), Max), a wait in [d/2, d] —
// never more than Max, never less than half the schedule's step. No
// failure yet is no wait.
func (b Backoff) Delay(failures int) time.Duration {
	if failures < 1 {
		return 0
	}
	first, limit := b.First, b.Max
	if first <= 0 {
		first = DefaultFirstRetry
	}
	if limit <= 0 {
		limit = DefaultMaxRetry
	}
	d := min(first, limit)
	for i := 1; i < failures && d < limit; i++ {
		if d > limit/2 {
			d = limit
		} else {
			d *= 2
		}
	}
	jitter := rand.Float64
	if b.Jitter != nil {
		jitter = b.Jitter
	}
	f := min(max(jitter(), 0), 1)
	return d/2 + time.Duration(f*float64(d/2))
}
