package meter

import (
	"strings"
	"testing"
)

// bpeTexts are the cases where a hand-made tokenizer usually goes wrong:
// contractions, case changes, digits in threes, runs of spaces before a
// word, newlines, CJK, marks, emoji, special-token text, invalid UTF-8.
var bpeTexts = append([]string{
	"",
	"a",
	"<|endoftext|> is text here, and so is <|endofprompt|>",
	"I'M HERE, you'RE there, THEY'LL go; 'tis 's 'S",
	"1234567890 12 123 1234 ١٢٣٤٥ ૧૨૩",
	"    indented\n\n\n    code\r\n\t\ttabs  \n  ",
	"trailing spaces   ",
	"   ",
	"\n",
	"HTTPServerError JSONParser iPhone McDonald's",
	"naïve café résumé Ωμέγα привет мир",
	"مرحبا بالعالم שלום עולם",
	"こんにちは世界、カタカナとひらがな。한국어 텍스트",
	"path/to/file.go:12:3 a/b//c ///",
	"???!!!...,,,;;;::: --- +++ === ***\n/",
	"\xff\xfe invalid \xc3 bytes \xe4\xb8",
	strings.Repeat("ab", 200),
	strings.Repeat("中", 120),
	strings.Repeat(" ", 50) + "x",
}, boundaryTexts...)

// TestBPECountsEqualTiktoken: the meter's compact encodings count every
// text exactly as tiktoken-go's own encoders do, in both encodings.
func TestBPECountsEqualTiktoken(t *testing.T) {
	for _, model := range []string{"gpt-4o", "gpt-3.5-turbo"} {
		lib := library(t, model)
		e := bpeCL100k
		if EncodingForModel(model) == EncodingO200k {
			e = bpeO200k
		}
		for _, s := range append(bpeTexts, mixedMessage(0)) {
			if got, want := e.tokens(s), len(lib.EncodeOrdinary(s)); got != want {
				t.Errorf("%s %q: %d tokens, tiktoken-go %d", e.name, s, got, want)
			}
		}
	}
}

func TestEncodingsLoad(t *testing.T) {
	for _, e := range []*bpe{bpeCL100k, bpeO200k} {
		if err := e.load(); err != nil {
			t.Fatal(err)
		}
		want := map[string]int{EncodingCL100k: 100256, EncodingO200k: 199998}[e.name]
		if n := len(e.tab.start) - 1; n != want {
			t.Errorf("%s: %d tokens, want %d", e.name, n, want)
		}
		for _, r := range []uint32{0, 1000, uint32(want - 1)} {
			if got := e.tab.rank(e.tab.token(r)); got != r {
				t.Errorf("%s: token %d found as %d", e.name, r, got)
			}
		}
	}
}

// FuzzBPE: any text, valid UTF-8 or not, counts as tiktoken-go counts it.
func FuzzBPE(f *testing.F) {
	for _, s := range bpeTexts {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 400 { // tiktoken-go's merge is quadratic in a piece
			return
		}
		for _, model := range []string{"gpt-4o", "gpt-3.5-turbo"} {
			e := bpeCL100k
			if EncodingForModel(model) == EncodingO200k {
				e = bpeO200k
			}
			if got, want := e.tokens(s), len(library(t, model).EncodeOrdinary(s)); got != want {
				t.Fatalf("%s %q: %d tokens, tiktoken-go %d", e.name, s, got, want)
			}
		}
	})
}
