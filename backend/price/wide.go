package price

import "math/bits"

// u128 is an unsigned 128-bit integer. A price converted by usd_rate is a
// price in micros times a rate in micros, up to 2¹²⁶, which int64 cannot
// hold; Go has no wider integer, and math/big would allocate on every run.
type u128 struct{ hi, lo uint64 }

func mul64(a, b uint64) u128 {
	hi, lo := bits.Mul64(a, b)
	return u128{hi, lo}
}

// mulAdd10 is x×10 + d, and whether it overflowed.
func (x u128) mulAdd10(d uint64) (u128, bool) {
	hh, hl := bits.Mul64(x.hi, 10)
	lh, ll := bits.Mul64(x.lo, 10)
	hi, c := bits.Add64(hl, lh, 0)
	lo, c2 := bits.Add64(ll, d, 0)
	hi, c3 := bits.Add64(hi, 0, c2)
	return u128{hi, lo}, hh != 0 || c != 0 || c3 != 0
}

// divmod is x/d and x%d for a 64-bit d.
func (x u128) divmod(d uint64) (q u128, r uint64) {
	q.hi, r = bits.Div64(0, x.hi, d)
	q.lo, r = bits.Div64(r, x.lo, d)
	return q, r
}

// u192 accumulates a run's cost before its one rounding: four products of
// a token count (< 2⁶³) and a price (< 2¹²⁶) stay below 2¹⁹¹.
type u192 [3]uint64 // little-endian words

// addMul adds t×p.
func (a *u192) addMul(t uint64, p u128) {
	h0, l0 := bits.Mul64(t, p.lo)
	h1, l1 := bits.Mul64(t, p.hi)
	mid, c := bits.Add64(h0, l1, 0)
	top := h1 + c // t×p < 2¹⁹², so this cannot wrap
	var carry uint64
	a[0], carry = bits.Add64(a[0], l0, 0)
	a[1], carry = bits.Add64(a[1], mid, carry)
	a[2], _ = bits.Add64(a[2], top, carry)
}

// ceilDiv is ⌈a/d⌉ if it fits in an int64.
func (a u192) ceilDiv(d uint64) (int64, bool) {
	var q u192
	var r uint64
	for i := 2; i >= 0; i-- {
		q[i], r = bits.Div64(r, a[i], d)
	}
	if r != 0 {
		q[0]++
		if q[0] == 0 { // wrapped: the quotient is at least 2⁶⁴
			return 0, false
		}
	}
	if q[2] != 0 || q[1] != 0 || q[0] > 1<<63-1 {
		return 0, false
	}
	return int64(q[0]), true
}
