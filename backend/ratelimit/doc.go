// Package ratelimit enforces each tenant's request limits over two windows,
// one minute and one hour (config rate_limits {per_minute, per_hour}; 0 turns
// a window off), before any reservation or upstream call (seed 003): a
// refused call never holds a budget or waits for an upstream.
//
// # Windows
//
// Both windows slide: the limiter keeps a log of the instants of admitted
// calls and counts those younger than the window. A fixed window would let a
// tenant make 2×per_minute calls across a minute boundary; the log is exact,
// and its memory is bounded by the limit itself (a tenant never has more
// stamps than its largest active limit, because a call is only logged when
// every window had room for it).
//
// # Refusals consume nothing
//
// Allow logs a call only when both windows admit it. A refused call leaves no
// stamp, so a client hammering a closed window does not push its reopening
// further away. Because of that, once a window reopens it stays open until
// the next admitted call, and the earliest moment both windows admit again is
// the later of their two reopening instants. Retry-After is that wait in whole
// seconds, rounded up, never below one.
//
// # Concurrency
//
// Each tenant has its own lock; the map of tenants is read-locked on the hot
// path and write-locked only when limits are (re)configured. The clock is
// injected (Options.Now) so that tests check Retry-After to the second.
package ratelimit
