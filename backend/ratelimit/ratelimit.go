package ratelimit

import (
	"sort"
	"sync"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
)

// Window lengths. They are fixed by the config's vocabulary (per_minute,
// per_hour), not tunable.
const (
	Minute = time.Minute
	Hour   = time.Hour
)

// Limits are one tenant's two windows; 0 switches a window off.
type Limits struct {
	PerMinute int `json:"per_minute"`
	PerHour   int `json:"per_hour"`
}

// Off reports whether neither window limits anything.
func (l Limits) Off() bool { return l.PerMinute <= 0 && l.PerHour <= 0 }

// longest is the longest active window; only stamps younger than it matter.
func (l Limits) longest() time.Duration {
	if l.PerHour > 0 {
		return Hour
	}
	return Minute
}

// Options configure a Limiter.
type Options struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Limiter holds every limited tenant's call log. The zero value is not
// usable; call New.
type Limiter struct {
	now func() time.Time

	mu      sync.RWMutex
	tenants map[string]*tenantLog
}

// tenantLog is one tenant's sliding log: instants of admitted calls, oldest
// first, all younger than the longest active window (after prune).
type tenantLog struct {
	mu       sync.Mutex
	limits   Limits
	stamps   []time.Time
	admitted uint64
	refused  uint64
}

// New returns a Limiter with no tenant limited.
func New(opts Options) *Limiter {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	return &Limiter{now: now, tenants: make(map[string]*tenantLog)}
}

// SetLimits sets one tenant's limits. Limits that are Off forget the tenant.
// Lowering a limit keeps the newest stamps, so the tenant stays limited by
// the calls it actually made.
func (l *Limiter) SetLimits(tenantID string, lim Limits) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.setLocked(tenantID, lim)
}

// Replace sets the limits of every tenant in all and forgets tenants absent
// from it (a config reload).
func (l *Limiter) Replace(all map[string]Limits) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for id := range l.tenants {
		if _, ok := all[id]; !ok {
			delete(l.tenants, id)
		}
	}
	for id, lim := range all {
		l.setLocked(id, lim)
	}
}

func (l *Limiter) setLocked(tenantID string, lim Limits) {
	if lim.PerMinute < 0 {
		lim.PerMinute = 0
	}
	if lim.PerHour < 0 {
		lim.PerHour = 0
	}
	if lim.Off() {
		delete(l.tenants, tenantID)
		return
	}
	t := l.tenants[tenantID]
	if t == nil {
		l.tenants[tenantID] = &tenantLog{limits: lim}
		return
	}
	t.mu.Lock()
	t.limits = lim
	if c := max(lim.PerMinute, lim.PerHour); len(t.stamps) > c {
		t.stamps = append([]time.Time(nil), t.stamps[len(t.stamps)-c:]...)
	}
	t.mu.Unlock()
}

// Allow reports whether tenantID may make a call now, and logs the call if
// so. When it may not, retryAfter is the whole number of seconds (rounded up,
// at least one) until both windows admit again; the refusal is not logged.
// Tenants without limits are always allowed.
func (l *Limiter) Allow(tenantID string) (retryAfter time.Duration, ok bool) {
	l.mu.RLock()
	t := l.tenants[tenantID]
	l.mu.RUnlock()
	if t == nil {
		return 0, true
	}
	now := l.now()

	t.mu.Lock()
	defer t.mu.Unlock()
	t.prune(now)
	var reopen time.Time // the earliest instant every window has room again
	if n := t.limits.PerMinute; n > 0 {
		if at, full := t.reopens(now, Minute, n); full && at.After(reopen) {
			reopen = at
		}
	}
	if n := t.limits.PerHour; n > 0 {
		if at, full := t.reopens(now, Hour, n); full && at.After(reopen) {
			reopen = at
		}
	}
	if reopen.IsZero() {
		t.stamps = append(t.stamps, now)
		t.admitted++
		return 0, true
	}
	t.refused++
	return ceilSeconds(reopen.Sub(now)), false
}

// prune drops stamps older than the longest active window.
func (t *tenantLog) prune(now time.Time) {
	w := t.limits.longest()
	i := sort.Search(len(t.stamps), func(i int) bool { return now.Sub(t.stamps[i]) < w })
	if i > 0 {
		t.stamps = t.stamps[i:]
	}
}

// reopens reports whether the window of length w holding at most limit calls
// is full at now and, if so, the instant it has room again: when the
// limit-th newest stamp ages out (a stamp counts while now − stamp < w).
func (t *tenantLog) reopens(now time.Time, w time.Duration, limit int) (time.Time, bool) {
	first := sort.Search(len(t.stamps), func(i int) bool { return now.Sub(t.stamps[i]) < w })
	if len(t.stamps)-first < limit {
		return time.Time{}, false
	}
	return t.stamps[len(t.stamps)-limit].Add(w), true
}

// ceilSeconds rounds d up to whole seconds, at least one (Retry-After: 0
// would invite an immediate retry that is certain to fail).
func ceilSeconds(d time.Duration) time.Duration {
	s := (d + time.Second - 1) / time.Second
	if s < 1 {
		s = 1
	}
	return s * time.Second
}

// TenantState is one limited tenant's position, for the admin snapshot and
// metrics.
type TenantState struct {
	Tenant     string `json:"tenant"`
	PerMinute  int    `json:"per_minute"`
	PerHour    int    `json:"per_hour"`
	LastMinute int    `json:"last_minute"` // admitted calls younger than a minute
	LastHour   int    `json:"last_hour"`   // admitted calls younger than an hour (0 when the hour window is off)
	Admitted   uint64 `json:"admitted"`
	Refused    uint64 `json:"refused"`
}

// State returns every limited tenant's position, sorted by tenant.
func (l *Limiter) State() []TenantState {
	now := l.now()
	l.mu.RLock()
	out := make([]TenantState, 0, len(l.tenants))
	for id, t := range l.tenants {
		t.mu.Lock()
		t.prune(now)
		s := TenantState{Tenant: id, PerMinute: t.limits.PerMinute, PerHour: t.limits.PerHour,
			Admitted: t.admitted, Refused: t.refused}
		s.LastMinute = len(t.stamps) - sort.Search(len(t.stamps), func(i int) bool { return now.Sub(t.stamps[i]) < Minute })
		if t.limits.PerHour > 0 {
			s.LastHour = len(t.stamps)
		}
		t.mu.Unlock()
		out = append(out, s)
	}
	l.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Tenant < out[j].Tenant })
	return out
}

// Refusal is the domain error for a refused call: 429 rate_limited with
// Retry-After.
func Refusal(tenantID string, retryAfter time.Duration) *ledger.Error {
	e := ledger.Errorf(ledger.CodeRateLimited,
		"tenant %s has made too many requests; try again in %d s", tenantID, int64(retryAfter/time.Second))
	e.RetryAfter = retryAfter
	return e
}
