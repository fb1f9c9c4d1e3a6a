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
// and the guard's cumulative limit is min(daily_cap, B0 − small_buffer) —
// B0 − residue when the source lists its packages' expiries and the
// model's calls are known to stay within their reserves, since the expiry
// horizon below then covers the buffer's other part.
// v6's limit, min(cap, balance_at_sync + usage_at_sync − small_buffer),
// equals B0 + L − small_buffer where L is the usage still unsettled at the
// sync; it is computed beside ours so that the difference is visible.
//
// Δ is estimated online: the Δ in [MinLag, MaxLag] whose usage windows best
// explain the balance drops between successive snapshots (larger Δ on ties:
// it gives the smaller, safer B0); the readings either side of an unmoved
// balance pair up across it, since a stalled API shows no drop while usage
// goes on, and the catch-up after it would otherwise read as a longer lag. Each lagged reading yields one B0
// estimate; the guard takes the smallest, because a reading taken while the
// lag was longer than Δ overstates B0 by exactly the consumption v6 forgets
// — until a settled reading, one taken after four hours without any usage
// of the model, whose B0 is exact whatever the lag up to that long: the
// smallest starts afresh from it.
// A rise of the balance (a refund) raises the estimate by at most the rise
// seen between the two readings. A manual B0 for the day (read from the
// provider console) is taken when it is no higher than what the readings
// support, and cut down to that otherwise: an overstated B0 bills.
//
// Free packages expire after 30 days. When the source lists expiries, the
// units that the packages expiring within ExpiryHorizon still hold — less
// what today's usage has drawn from them since the listing and before their
// expiry, since the oldest packages are consumed first — are left out of the
// limit at every Check.
//
// # Rooms
//
// guard.go is admission (Check) and observation (Observe); sync.go the
// balance readings and the loop; state.go the dashboard's read-only view
// (State never writes); overrun.go the learned overrun; topup.go and
// filler.go the nightly top-up, which sees the guard through a small
// interface and calls quotagate's own /v1 through a ChatSender.
//
// # Admission and eviction
//
// Admission is the ledger's atomic check usage_today + held_in_flight +
// reserve ≤ limit (ledger.QuotaCheck); the guard only supplies the day and
// the limit — AdmitLimit, which leaves room for yesterday's runs that settle
// after midnight (they are paid from today's pool but count in yesterday's
// quota day) and scales the holds by the model's learned overrun k (a high
// quantile of its calls' usage over reserve, plus the largest single
// excess beyond it held back once), so that usage + carry + tail + k·(held
// + reserve) ≤ limit holds for what the provider really consumes. Soft eviction (seed 002 §7.6) refuses a model at once, before
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
