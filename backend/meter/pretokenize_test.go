package meter

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
)

// regexpPieces splits text with regexp2 and the encoding's pattern, as
// tiktoken-go does.
func regexpPieces(t testing.TB, pattern, text string) []string {
	t.Helper()
	re := compiledPatterns[pattern]
	var out []string
	m, err := re.FindStringMatch(text)
	for ; m != nil && err == nil; m, err = re.FindNextMatch(m) {
		out = append(out, m.String())
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

var compiledPatterns = map[string]*regexp2.Regexp{
	patternCL100k: regexp2.MustCompile(patternCL100k, regexp2.None),
	patternO200k:  regexp2.MustCompile(patternO200k, regexp2.None),
}

func ownPieces(o200k bool, text string) []string {
	var out []string
	p := pretokenizer{o200k: o200k}
	p.split(text, func(from, to int) { out = append(out, text[from:to]) })
	return out
}

func checkPieces(t *testing.T, text string) {
	t.Helper()
	for _, e := range []*bpe{bpeCL100k, bpeO200k} {
		want := regexpPieces(t, e.pattern, text)
		got := ownPieces(e == bpeO200k, text)
		if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
			t.Fatalf("%s %q:\n got %q\nwant %q", e.name, text, got, want)
		}
	}
}

// TestPretokenizeEqualsRegexp: the written-out pre-tokenizers split like
// regexp2 with the library's patterns.
func TestPretokenizeEqualsRegexp(t *testing.T) {
	for _, s := range append(bpeTexts, mixedMessage(0), mixedMessage(7)) {
		if utf8.ValidString(s) {
			checkPieces(t, s)
		}
	}
}

// FuzzPretokenize: on any valid UTF-8 text the pieces are regexp2's.
func FuzzPretokenize(f *testing.F) {
	for _, s := range bpeTexts {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return // bpe.tokens makes text valid first, as tiktoken-go does
		}
		checkPieces(t, s)
	})
}

// pretokenizeAlphabet has a rune of every class the patterns tell apart.
var pretokenizeAlphabet = []rune{
	'a', 'z', 'A', 'Z', 's', 'S', 't', 'T', 'r', 'e', 'v', 'm', 'l', 'L', 'd', 'E', // letters of contractions
	'\'', ' ', ' ', '\t', '\n', '\r', '\v', '\f', 0x85, 0xA0, 0x3000, 0x2028, // apostrophe, spaces
	'/', '.', ',', '!', '-', '_', '(', '"', '$', '+', '~', // punctuation and symbols
	'0', '5', '9', '٣', 'Ⅻ', '½', '²', // Nd, Nl, No
	'é', 'Ω', 'ω', 'ǅ', 'ʰ', 'ª', '中', 'ア', 'ㄱ', // Ll, Lu, Lt, Lm, Lo
	0x301, 0x94D, 0x903, 0x20DD, // Mn, Mc, Me
	'😀', 0x1F3FD, 0x200D, 0xFEFF, // emoji, modifier, ZWJ, BOM (Cf)
}

// TestPretokenizeRandomMix: a thousand short strings over that alphabet
// split like regexp2 in both encodings (a byte fuzzer seldom reaches
// these runes).
func TestPretokenizeRandomMix(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 200))
	n := 1000
	if testing.Short() {
		n = 200
	}
	for range n {
		rs := make([]rune, 1+rng.IntN(24))
		for i := range rs {
			rs[i] = pretokenizeAlphabet[rng.IntN(len(pretokenizeAlphabet))]
		}
		checkPieces(t, string(rs))
	}
}

// TestClassifyCJKShortcut: the shortcut for CJK ideographs agrees with the
// Unicode tables.
func TestClassifyCJKShortcut(t *testing.T) {
	for r := rune(0x4E00); r <= 0x9FFF; r++ {
		if got, want := classify(r), classifySlow(r); got != want {
			t.Fatalf("classify(%U) = %b, tables say %b", r, got, want)
		}
	}
}
