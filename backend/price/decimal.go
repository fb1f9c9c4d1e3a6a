package price

import (
	"fmt"
	"math"
	"strings"
)

// Micros is an amount of money in millionths (10⁻⁶) of the gateway's
// currency: a cost, a budget, or a price per 1M tokens as written.
type Micros int64

// microsPerUnit is one whole unit of a currency in micros.
const microsPerUnit = 1_000_000

// ParseMicros reads an amount written as a plain decimal string with at
// most 6 decimal places ("50", "50.00", "0.000125"). It refuses, naming
// the value: an empty string, a sign, an exponent, spaces, separators, more
// than 6 places (a micro is the smallest amount the books keep) and
// anything above the largest int64 of micros.
func ParseMicros(s string) (Micros, error) {
	v, err := parseDecimal(s, 6)
	if err != nil {
		return 0, err
	}
	if v.hi != 0 || v.lo > math.MaxInt64 {
		return 0, fmt.Errorf("%q is too large: at most %s", s, Micros(math.MaxInt64))
	}
	return Micros(v.lo), nil
}

// String writes m exactly, with at least 2 decimal places: "50.00",
// "0.001234", "-1.50".
func (m Micros) String() string {
	u, sign := uint64(m), ""
	if m < 0 {
		u, sign = -u, "-" // two's complement: right for math.MinInt64 too
	}
	return sign + formatScaled(u128{0, u}, 6)
}

// parseDecimal reads s as a non-negative decimal with at most places
// decimal places, scaled by 10^places.
func parseDecimal(s string, places int) (u128, error) {
	if s == "" {
		return u128{}, fmt.Errorf(`"" is not a decimal number: it is empty`)
	}
	if s[0] == '-' {
		return u128{}, fmt.Errorf("%q is negative: money and prices are 0 or more", s)
	}
	whole, frac, point := strings.Cut(s, ".")
	if whole == "" || (point && frac == "") || !digits(whole) || !digits(frac) {
		return u128{}, fmt.Errorf(`%q is not a plain decimal number such as "2.50" (digits and at most one point; no sign, exponent, spaces or separators)`, s)
	}
	if len(frac) > places {
		return u128{}, fmt.Errorf("%q has %d decimal places: at most %d", s, len(frac), places)
	}
	var v u128
	var over bool
	for i := 0; i < len(whole)+places; i++ {
		d := uint64(0)
		if i < len(whole) {
			d = uint64(whole[i] - '0')
		} else if j := i - len(whole); j < len(frac) {
			d = uint64(frac[j] - '0')
		}
		if v, over = v.mulAdd10(d); over {
			return u128{}, fmt.Errorf("%q is too large", s)
		}
	}
	return v, nil
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// formatScaled writes v/10^places exactly, trimming trailing zeros of the
// fraction down to 2 places (a currency's usual look).
func formatScaled(v u128, places int) string {
	var buf [48]byte // 2¹²⁸ has 39 digits; a point and leading zeros fit
	i := len(buf)
	for n := 0; n <= places || v != (u128{}); n++ {
		if n == places {
			i--
			buf[i] = '.'
		}
		var d uint64
		v, d = v.divmod(10)
		i--
		buf[i] = byte('0' + d)
	}
	s := string(buf[i:])
	whole, frac, _ := strings.Cut(s, ".")
	frac = strings.TrimRight(frac, "0")
	for len(frac) < 2 {
		frac += "0"
	}
	return whole + "." + frac
}
