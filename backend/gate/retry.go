package gate

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RetryPolicy decides whether the gateway calls an upstream again after it
// answered 429 or 503 BEFORE any output (seed 003: at most 2 retries, at most
// 15 s in all, honouring the upstream's Retry-After). It is pure: the caller
// sleeps and counts. Never consult it once output has started — a retried
// stream would repeat text the client already has and bill it twice.
type RetryPolicy struct {
	MaxRetries int           // retries after the first attempt; 0: never retry
	MaxTotal   time.Duration // elapsed since the first attempt began, plus the next wait, stays within this
	Backoff    time.Duration // wait before retry n when no usable Retry-After: Backoff·2^(n−1)
	Now        func() time.Time
}

// DefaultRetryPolicy retries an upstream 429 or 503 answered before any
// output at most twice within 15 s, so that a busy upstream costs a caller
// seconds, not the conversation (seed 003).
var DefaultRetryPolicy = RetryPolicy{MaxRetries: 2, MaxTotal: 15 * time.Second, Backoff: time.Second}

// Retryable reports whether an upstream status is worth a retry: the
// provider said "too many" or "unavailable" and, by answering with a status,
// proved it did no work.
func Retryable(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable
}

// Next is asked after attempt number attempt (1 for the first call) failed
// with status and the upstream's Retry-After header value, elapsed after the
// first attempt began. It returns how long to wait before the next attempt,
// or ok false when the error should go to the client now: not a retryable
// status, no retries left, or a wait that would end past MaxTotal.
func (p RetryPolicy) Next(attempt int, status int, retryAfterHeader string, elapsed time.Duration) (wait time.Duration, ok bool) {
	if !Retryable(status) || attempt < 1 || attempt > p.MaxRetries {
		return 0, false
	}
	now := time.Now
	if p.Now != nil {
		now = p.Now
	}
	wait, ok = ParseRetryAfter(retryAfterHeader, now())
	if !ok {
		wait = p.Backoff << (attempt - 1)
	}
	if elapsed < 0 || wait < 0 || elapsed+wait > p.MaxTotal {
		return 0, false
	}
	return wait, true
}

// ParseRetryAfter reads a Retry-After value (RFC 9110 §10.2.3): delay
// seconds, or an HTTP-date, which counts from now and is 0 when already past.
// ok is false for an absent or malformed value. Delays too long to represent
// are capped at a day; any policy will refuse to wait that long.
func ParseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	const maxDelay = 24 * time.Hour
	if v[0] >= '0' && v[0] <= '9' {
		for _, c := range v {
			if c < '0' || c > '9' {
				return 0, false
			}
		}
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil || s > uint64(maxDelay/time.Second) {
			return maxDelay, true // only digits, so the error is overflow
		}
		return time.Duration(s) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	d := t.Sub(now)
	switch {
	case d < 0:
		return 0, true
	case d > maxDelay:
		return maxDelay, true
	}
	return d, true
}

// Answer is one upstream answer Do saw with a retryable status: evidence
// for the hold's release when the call finally fails.
type Answer struct {
	Status     int
	RetryAfter string        // the header as sent, "" when absent
	Waited     time.Duration // the wait Do took after it; 0 for the final answer
}

func (a Answer) String() string {
	s := strconv.Itoa(a.Status)
	if a.RetryAfter != "" {
		s += " Retry-After=" + a.RetryAfter
	}
	if a.Waited > 0 {
		s += " waited=" + a.Waited.String()
	}
	return s
}

// Do runs attempt until its answer is final: a status that is not
// retryable, no retry left under p, or ctx ending during a wait (then Do
// returns an error wrapping ctx.Err()). attempt returns the HTTP status,
// the Retry-After header and discard, which Do calls only on an answer it
// retries past (drain and close the body); the final answer stays the
// caller's. An error from attempt ends Do at once with that error. answers
// lists every retryable answer seen, the final one included.
//
// Do must only wrap the part of a call before any output reached the
// client (see RetryPolicy).
func (p RetryPolicy) Do(ctx context.Context, attempt func(ctx context.Context) (status int, retryAfter string, discard func(), err error)) (answers []Answer, err error) {
	start := time.Now()
	for n := 1; ; n++ {
		status, ra, discard, err := attempt(ctx)
		if err != nil {
			return answers, err
		}
		if !Retryable(status) {
			return answers, nil
		}
		answers = append(answers, Answer{Status: status, RetryAfter: ra})
		wait, ok := p.Next(n, status, ra, time.Since(start))
		if !ok {
			return answers, nil
		}
		if discard != nil {
			discard()
		}
		answers[len(answers)-1].Waited = wait
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return answers, fmt.Errorf("waiting %v to retry the upstream: %w", wait, ctx.Err())
			}
		}
	}
}

// Evidence joins answers for an audit row: "429 Retry-After=1 waited=1s; 429; 429".
func Evidence(answers []Answer) string {
	parts := make([]string, len(answers))
	for i, a := range answers {
		parts[i] = a.String()
	}
	return strings.Join(parts, "; ")
}
