// Package sim is a provider simulator for the quota guard (seed 002): free
// token packages consumed first-in first-out and expiring after 30 days, a
// T+1 refund of yesterday's collection (≤ the daily cap) at a random morning
// time, a balance API that lags by a varying delay (with stalls), and billing
// of whatever is consumed beyond the free balance. Bursty traffic drives it
// for many simulated days under two policies — seed 002's v6 and quotagate's
// guard — with identical traffic and provider randomness, so that the
// difference in units billed, free quota used and requests refused while free
// quota remained is the policies' alone.
package sim
