package price

import (
	"errors"
	"fmt"
)

// Rate is usd_rate: how much of the gateway's currency one US dollar buys,
// in micros ("7.1" for CNY is 7_100_000).
type Rate int64

// OneToOne is the rate of a gateway that keeps its books in US dollars.
const OneToOne Rate = microsPerUnit

// ParseRate reads usd_rate: a decimal string above 0 with at most 6
// decimal places.
func ParseRate(s string) (Rate, error) {
	m, err := ParseMicros(s)
	if err != nil {
		return 0, err
	}
	if m == 0 {
		return 0, fmt.Errorf("%q is 0: a rate converts dollars into the currency, so it is above 0", s)
	}
	return Rate(m), nil
}

func (r Rate) String() string { return Micros(r).String() }

// PerMillion is the price of 1,000,000 tokens in 10⁻¹² of the gateway's
// currency. A price written with 6 decimal places times a usd_rate with 6
// more has 12, so conversion is exact; a run's cost is rounded up to a
// micro once, at the end (Price.Cost). It stays below 2¹²⁶, so a run's
// four products add up without overflow (u192).
type PerMillion struct{ v u128 }

const (
	perMillionPlaces = 12
	perMillionMax    = 1<<62 - 1 // of the high word: below 2¹²⁶
)

// ParsePerMillion reads a price per 1M tokens with at most 12 decimal
// places, as String writes a converted one (a price recorded on a run).
// Prices people write are Quotes, with at most 6 (ParseMicros).
func ParsePerMillion(s string) (PerMillion, error) {
	v, err := parseDecimal(s, perMillionPlaces)
	if err != nil {
		return PerMillion{}, err
	}
	if v.hi > perMillionMax {
		return PerMillion{}, fmt.Errorf("%q is too large for a price per 1M tokens", s)
	}
	return PerMillion{v}, nil
}

// String writes p exactly ("14.20", "0.8875").
func (p PerMillion) String() string { return formatScaled(p.v, perMillionPlaces) }

// Price is a model's prices per 1M tokens in the gateway's currency: what
// a run is charged (Cost) and reserved (ReserveCost) at.
type Price struct {
	Input       PerMillion // an uncached input token
	CachedInput PerMillion // an input token read from the provider's cache
	CacheWrite  PerMillion // an input token written to the provider's cache
	Output      PerMillion // an output token, reasoning included
}

// Quote is a model's prices per 1M tokens as written — a decimal string
// with at most 6 places each, in micros — in US dollars (the price table)
// or in the gateway's currency (a configured price).
type Quote struct {
	Input, CachedInput, CacheWrite, Output Micros
}

// In converts a Quote in US dollars into the gateway's currency, exactly.
func (q Quote) In(r Rate) Price {
	at := func(m Micros) PerMillion { return PerMillion{mul64(uint64(m), uint64(r))} }
	return Price{Input: at(q.Input), CachedInput: at(q.CachedInput), CacheWrite: at(q.CacheWrite), Output: at(q.Output)}
}

// Price is a Quote already in the gateway's currency (a configured price).
func (q Quote) Price() Price { return q.In(OneToOne) }

// QuoteText is a Quote as the price file and the configuration write it.
// All four are required: a provider with no separate cache price repeats
// the input price, so nothing is assumed.
type QuoteText struct {
	Input       string `json:"input" yaml:"input"`
	CachedInput string `json:"cached_input" yaml:"cached_input"`
	CacheWrite  string `json:"cache_write" yaml:"cache_write"`
	Output      string `json:"output" yaml:"output"`
}

// Quote parses t; an error names the field and the value.
func (t QuoteText) Quote() (Quote, error) {
	var q Quote
	var errs []error
	for _, f := range []struct {
		name, text string
		into       *Micros
	}{{"input", t.Input, &q.Input}, {"cached_input", t.CachedInput, &q.CachedInput},
		{"cache_write", t.CacheWrite, &q.CacheWrite}, {"output", t.Output, &q.Output}} {
		if f.text == "" {
			errs = append(errs, fmt.Errorf("%s is missing (give all four of input, cached_input, cache_write and output; without a separate cache price, repeat input)", f.name))
			continue
		}
		m, err := ParseMicros(f.text)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", f.name, err))
		}
		*f.into = m
	}
	return q, errors.Join(errs...)
}

// Text writes q as QuoteText.
func (q Quote) Text() QuoteText {
	return QuoteText{Input: q.Input.String(), CachedInput: q.CachedInput.String(),
		CacheWrite: q.CacheWrite.String(), Output: q.Output.String()}
}
