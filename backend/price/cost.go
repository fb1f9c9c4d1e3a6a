package price

import "fmt"

// picoPerMicroMillion turns Σ tokens × (10⁻¹² per 1M tokens) into micros:
// 10⁻¹² / 10⁶ tokens is 10⁻¹⁸ per token, and a micro is 10¹² of those.
const picoPerMicroMillion = 1_000_000_000_000

// Cost is what a run with usage t costs at p, in micros of the gateway's
// currency: uncached input, cache reads, cache writes and output each at
// their own price, added exactly and rounded up to a whole micro once —
// never per part, so four parts of a fraction of a micro cost one micro,
// not four.
func (p Price) Cost(t Tokens) (Micros, error) {
	if t.Input < 0 || t.CacheRead < 0 || t.CacheWrite < 0 || t.Output < 0 {
		return 0, fmt.Errorf("cost: a token count is below 0 (%d input, %d cached, %d cache-write, %d output)", t.Input, t.CacheRead, t.CacheWrite, t.Output)
	}
	if max(p.Input.v.hi, p.CachedInput.v.hi, p.CacheWrite.v.hi, p.Output.v.hi) > perMillionMax {
		return 0, fmt.Errorf("cost: a price is too large (%s input, %s cached, %s cache-write, %s output)", p.Input, p.CachedInput, p.CacheWrite, p.Output)
	}
	var sum u192
	sum.addMul(uint64(t.Input), p.Input.v)
	sum.addMul(uint64(t.CacheRead), p.CachedInput.v)
	sum.addMul(uint64(t.CacheWrite), p.CacheWrite.v)
	sum.addMul(uint64(t.Output), p.Output.v)
	m, ok := sum.ceilDiv(picoPerMicroMillion)
	if !ok {
		return 0, fmt.Errorf("cost: %d input, %d cached, %d cache-write and %d output tokens cost more than %s", t.Input, t.CacheRead, t.CacheWrite, t.Output, Micros(1<<63-1))
	}
	return Micros(m), nil
}

// ReserveCost is what admitting a run reserves at p: its counted input at
// the input price (the cache is not known before the call, so the reserve
// assumes none) and its output cap, the reasoning floor included, at the
// output price; rounded up once.
func (p Price) ReserveCost(input, outputCap int64) (Micros, error) {
	return p.Cost(Tokens{Input: input, Output: outputCap})
}
