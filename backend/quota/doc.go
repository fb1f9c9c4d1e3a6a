// Package quota is the quota guard of seed 002: it keeps a guarded upstream
// model inside the provider's free daily quota, so that it is never billed,
// while leaving as little of that free quota unused as the evidence allows.
//
// # The limit
//
// A provider balance reading lags the true balance by Δ (≈14 min in seed 002
// §4.2): balance(t) ≈ B0 − usage(t − Δ). So the day's starting pool is
//
//	B0 ≈ balance_at_sync + usage_today(t_sync − Δ)
//
// and the guard's cumulative limit is min(daily_cap, B0 − small_buffer).
// v6's limit, min(cap, balance_at_sync + usage_at_sync − small_buffer),
// equals B0 + L − small_buffer where L is the usage still unsettled at the
// sync; it is computed beside ours so that the difference is visible.
//
// Δ is estimated online: the Δ in [MinLag, MaxLag] whose usage windows best
// explain the balance drops between successive snapshots (larger Δ on ties:
// it gives the smaller, safer B0). Each lagged reading since the last rise of
// the balance (a rise can only be a refund) yields one B0 estimate; the guard
// takes the smallest, because a reading taken while the lag was longer than
// Δ overstates B0 by exactly the consumption v6 forgets. A manual B0 for the
// day (read from the provider console) takes precedence.
//
// Free packages expire after 30 days. When the source lists expiries, the
// units that the packages expiring within ExpiryHorizon still hold — less
// what today's usage has drawn from them since the listing, since the oldest
// packages are consumed first — are left out of the limit at every Check.
//
// # Admission and eviction
//
// Admission is the ledger's atomic check usage_today + held_in_flight +
// reserve ≤ limit (ledger.QuotaCheck); the guard only supplies the day and
// the limit. Soft eviction (seed 002 §7.6) refuses a model at once, before
// any token counting: evicted while usage ≥ min(limit, usage_wall), or while
// balance_at_sync < balance_wall and usage > 0; restored exactly when neither
// holds, so eviction and restore cannot flap against each other.
//
// # What is deliberately absent
//
// No limit is ever derived from yesterday's collection (v3), and no
// remaining balance is ever used as a cumulative limit (v4). Without any
// balance reading the limit is 0: the guard fails closed.
package quota
