package meter

import (
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"

	"github.com/quotagate/quotagate/backend/ledger"
)

func tiktokenForTest(t testing.TB) *tiktokenMeter {
	t.Helper()
	m, err := New(NameTiktoken)
	if err != nil {
		t.Fatal(err)
	}
	tm := m.(*tiktokenMeter)
	for _, e := range []*bpe{tm.o200k, tm.cl100k} { // built before any timing
		if err := e.load(); err != nil {
			t.Fatal(err)
		}
	}
	return tm
}

// libraryEncoders are tiktoken-go's own encoders, the reference every count
// here is held to (the meter counts with its compact copy, bpe.go).
var libraryEncoders = sync.OnceValues(func() (map[string]*tiktoken.Tiktoken, error) {
	tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
	encs := map[string]*tiktoken.Tiktoken{}
	for _, name := range []string{EncodingO200k, EncodingCL100k} {
		enc, err := tiktoken.GetEncoding(name)
		if err != nil {
			return nil, err
		}
		encs[name] = enc
	}
	return encs, nil
})

func library(t testing.TB, model string) *tiktoken.Tiktoken {
	t.Helper()
	encs, err := libraryEncoders()
	if err != nil {
		t.Fatal(err)
	}
	return encs[EncodingForModel(model)]
}

// direct counts text in one piece with tiktoken-go itself.
func direct(m *tiktokenMeter, model, text string) ledger.Units {
	encs, err := libraryEncoders()
	if err != nil {
		panic(err)
	}
	return ledger.Units(len(encs[EncodingForModel(model)].EncodeOrdinary(text)))
}

// checkBoundaries asserts that every place pieceBoundary accepts is one
// where splitting the text does not change its count, in both encodings.
func checkBoundaries(t *testing.T, m *tiktokenMeter, text string) {
	t.Helper()
	for _, model := range []string{"gpt-4o", "gpt-3.5-turbo"} {
		whole := direct(m, model, text)
		for p := 1; p < len(text); p++ {
			if !pieceBoundary(text, p) {
				continue
			}
			if got := direct(m, model, text[:p]) + direct(m, model, text[p:]); got != whole {
				t.Errorf("%s: boundary %d in %q: %d+… = %d tokens, whole text %d", model, p, text, direct(m, model, text[:p]), got, whole)
			}
		}
	}
}

var boundaryTexts = []string{
	"Hello world, this is a test.",
	"foo. bar! baz? qux",
	"abc123def 456 ghi",
	"问题，你好。今天天气怎么样？我们去公园吧",
	"line one\nline two\n\nline three\r\nline four",
	"   leading spaces and  double  spaces",
	"don't won't it's I'm you're we've they'll he'd",
	"CamelCaseWords and UPPERCASE then lowercase",
	"e\u0301 combining accent and ñ",
	"tabs\there\tand\tthere",
	"x = foo(bar, baz) + 1_000_000;\n\treturn x/2",
	"http://example.com/path?query=1&x=y",
	"mixed 中文 and English, 混合 text 123 数字",
	"ⅫⅠ roman ² superscript ½ half",
	"emoji 😀 smile 👍🏽 thumbs",
	"ʰmodifier ʲletters",
	"!!! ??? ... --- ___",
	"a'b c'd",
}

func TestPieceBoundariesKeepCounts(t *testing.T) {
	m := tiktokenForTest(t)
	for _, s := range boundaryTexts {
		checkBoundaries(t, m, s)
	}
}

func TestSegmentedCountEqualsDirectOnNaturalText(t *testing.T) {
	m := tiktokenForTest(t)
	for _, para := range boundaryTexts {
		long := strings.Repeat(para+" ", 40)
		for _, model := range []string{"gpt-4o", "deepseek-chat"} {
			got, forced := m.count(model, long)
			want := direct(m, model, long)
			if forced == 0 && got != want {
				t.Errorf("%s %q×40: segmented %d, direct %d", model, para, got, want)
			}
			if forced > 0 && (got < want-ledger.Units(forced) || got > want+ledger.Units(forced)) {
				t.Errorf("%s %q×40: segmented %d with %d forced cuts, direct %d", model, para, got, forced, want)
			}
		}
	}
}

func FuzzMeterSegments(f *testing.F) {
	for _, s := range boundaryTexts {
		f.Add(s)
	}
	m := tiktokenForTest(f)
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 600 || !utf8.ValidString(s) {
			return
		}
		checkBoundaries(t, m, s)
	})
}
