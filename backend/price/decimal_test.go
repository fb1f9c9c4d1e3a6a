package price

import (
	"math/big"
	"strconv"
	"strings"
	"testing"
)

func TestParseMicros(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Micros
		out  string
	}{
		{"0", 0, "0.00"},
		{"50", 50_000_000, "50.00"},
		{"50.00", 50_000_000, "50.00"},
		{"0.000001", 1, "0.000001"},
		{"2.5", 2_500_000, "2.50"},
		{"0.0028", 2_800, "0.0028"},
		{"007.10", 7_100_000, "7.10"},
		{"9223372036854.775807", 1<<63 - 1, "9223372036854.775807"},
	} {
		got, err := ParseMicros(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseMicros(%q) = %d, %v; want %d", c.in, got, err, c.want)
			continue
		}
		if s := got.String(); s != c.out {
			t.Errorf("%d.String() = %q, want %q", got, s, c.out)
		}
	}
	if s := Micros(-1_500_000).String(); s != "-1.50" {
		t.Errorf("negative micros: %q", s)
	}
	if s := Micros(-1 << 63).String(); s != "-9223372036854.775808" {
		t.Errorf("the smallest micros: %q", s)
	}
}

// TestParseMicrosRefuses: each refusal names the value and what is wrong.
func TestParseMicrosRefuses(t *testing.T) {
	for _, c := range []struct{ in, says string }{
		{"", "empty"},
		{"-1", "negative"},
		{"-0.5", "negative"},
		{"+1", "not a plain decimal"},
		{"1e3", "not a plain decimal"},
		{"1E-6", "not a plain decimal"},
		{" 1", "not a plain decimal"},
		{"1,000.00", "not a plain decimal"},
		{"1_000", "not a plain decimal"},
		{".5", "not a plain decimal"},
		{"5.", "not a plain decimal"},
		{"1.2.3", "not a plain decimal"},
		{"NaN", "not a plain decimal"},
		{"Inf", "not a plain decimal"},
		{"0x10", "not a plain decimal"},
		{"١", "not a plain decimal"}, // a digit, but not an ASCII one
		{"0.1234567", "7 decimal places: at most 6"},
		{"9223372036854.775808", "too large"},
		{"99999999999999999999999999999999999999999999", "too large"},
	} {
		_, err := ParseMicros(c.in)
		if err == nil {
			t.Errorf("ParseMicros(%q) accepted", c.in)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, c.says) || !strings.Contains(msg, `"`+c.in+`"`) {
			t.Errorf("ParseMicros(%q): %q should say %q and quote the value", c.in, msg, c.says)
		}
	}
}

func TestParseRate(t *testing.T) {
	if r, err := ParseRate("7.1"); err != nil || r != 7_100_000 {
		t.Fatalf("ParseRate(7.1) = %d, %v", r, err)
	}
	for _, bad := range []string{"0", "0.000000", "-7.1", "7.1234567", "1e2"} {
		if _, err := ParseRate(bad); err == nil || !strings.Contains(err.Error(), `"`+bad+`"`) {
			t.Errorf("ParseRate(%q): %v", bad, err)
		}
	}
}

func TestPerMillionRoundTrip(t *testing.T) {
	for _, s := range []string{"0.00", "14.20", "0.000000000001", "0.8875", "85070591730234615865843651.857942052863"} {
		p, err := ParsePerMillion(s)
		if err != nil || p.String() != s {
			t.Errorf("ParsePerMillion(%q) = %s, %v", s, p, err)
		}
	}
	for _, bad := range []string{"0.0000000000001", "85070591730234615865843651.857942052864", "-1"} {
		if _, err := ParsePerMillion(bad); err == nil {
			t.Errorf("ParsePerMillion(%q) accepted", bad)
		}
	}
}

// FuzzParseMicros: whatever the text, ParseMicros either refuses it naming
// it, or reads exactly the decimal that math/big reads, and String writes
// a text that reads back the same.
func FuzzParseMicros(f *testing.F) {
	for _, s := range []string{"0", "2.50", "0.000001", "1e3", "-1", "9223372036854.775807", "9223372036854.775808", ".5", "1.", "0.1234567"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseMicros(s)
		if err != nil {
			if !strings.Contains(err.Error(), strconv.Quote(s)) {
				t.Fatalf("error %q does not name %q", err, s)
			}
			return
		}
		if m < 0 {
			t.Fatalf("%q parsed to %d", s, m)
		}
		want, ok := new(big.Rat).SetString(s)
		if !ok || new(big.Rat).SetFrac64(int64(m), microsPerUnit).Cmp(want) != 0 {
			t.Fatalf("%q parsed to %d micros; math/big reads %v", s, m, want)
		}
		if back, err := ParseMicros(m.String()); err != nil || back != m {
			t.Fatalf("%d wrote %q, which reads %d, %v", m, m.String(), back, err)
		}
		p, err := ParsePerMillion(s) // the same text, with room for 12 places
		if err != nil || p.String() != m.String() {
			t.Fatalf("ParsePerMillion(%q) = %s, %v; ParseMicros gives %s", s, p, err, m)
		}
	})
}
