package meter

import (
	"fmt"
	"hash/maphash"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/quotagate/quotagate/backend/ledger"
)

// Meter names, as written in the config (`meter:`).
const (
	NameUTF8Bytes = "utf8-bytes-v1"
	NameTiktoken  = "tiktoken"
)

// Encoding names used by the tiktoken meter.
const (
	EncodingO200k  = "o200k_base"
	EncodingCL100k = "cl100k_base"
)

// Meter counts units of text. Count must be safe for concurrent use and
// must never touch the network or the disk beyond embedded files.
type Meter interface {
	Name() string
	// Count returns the units of text for model. It never fails: the tiktoken
	// meter's encodings are files in the binary (New checks they are there).
	Count(model, text string) ledger.Units
}

// New returns the meter called name: "utf8-bytes-v1" or "tiktoken".
func New(name string) (Meter, error) {
	switch name {
	case NameUTF8Bytes:
		return utf8Bytes{}, nil
	case NameTiktoken:
		return newTiktoken()
	}
	return nil, fmt.Errorf("meter: unknown meter %q (want %q or %q)", name, NameTiktoken, NameUTF8Bytes)
}

// utf8Bytes is the teaching contract of seed 000: one unit per UTF-8 byte.
// len(string) is the byte length in Go — never the rune count.
type utf8Bytes struct{}

func (utf8Bytes) Name() string                      { return NameUTF8Bytes }
func (utf8Bytes) Count(_, text string) ledger.Units { return ledger.Units(len(text)) }

// tiktokenMeter counts BPE tokens with OpenAI's encodings, built from the
// files embedded in tiktoken-go-loader the first time a model needs them
// (bpe.go).
type tiktokenMeter struct {
	o200k, cl100k *bpe
	cache         *countCache
}

func (*tiktokenMeter) Name() string { return NameTiktoken }

func (t *tiktokenMeter) Count(model, text string) ledger.Units {
	n, _ := t.count(model, text)
	return n
}

// count returns the tokens of text and how many forced splits the count
// went through; each forced split may add about one token to the count.
func (t *tiktokenMeter) count(model, text string) (ledger.Units, int) {
	if text == "" {
		return 0, 0
	}
	o200k := EncodingForModel(model) == EncodingO200k
	enc := t.cl100k
	if o200k {
		enc = t.o200k
	}
	var key cacheKey
	useCache := t.cache != nil && len(text) >= cacheMinBytes
	if useCache {
		key = t.cache.key(text, o200k)
		if c, ok := t.cache.get(key); ok {
			return c.units, c.forced
		}
	}
	var n ledger.Units
	forced := 0
	for rest := text; rest != ""; {
		seg, tail, cut := nextSegment(rest, segmentBytes)
		if cut {
			forced++
		}
		// EncodeOrdinary: special-token strings such as "<|endoftext|>" in
		// user text are ordinary text (Encode would panic on them).
		n += ledger.Units(enc.tokens(seg))
		rest = tail
	}
	if useCache {
		t.cache.put(key, counted{n, forced})
	}
	return n, forced
}

// segmentBytes bounds the text handed to the encoder at once. tiktoken-go's
// byte-pair merge is quadratic in the length of one pre-token piece (100 KB
// of "a" took 8 s in one piece), so long text is cut where the
// pre-tokenizer of both encodings would cut anyway; only a run with no such
// place (a long word, digits, spaces, unpunctuated CJK) is cut by force.
const segmentBytes = 240 // divisible by 3 (digit runs tokenize in threes), 8 and 16 (long runs of one letter or mark)

// nextSegment splits text into a head of at most max bytes and the rest.
// forced is true when no pre-token boundary was found in the upper half of
// the window and the head ends at an arbitrary rune boundary.
func nextSegment(text string, max int) (head, rest string, forced bool) {
	if len(text) <= max {
		return text, "", false
	}
	for p := max; p >= max/2; p-- {
		if pieceBoundary(text, p) {
			return text[:p], text[p:], false
		}
	}
	p := max
	for p > 0 && !utf8.RuneStart(text[p]) {
		p--
	}
	if p == 0 { // cannot happen for valid or invalid UTF-8 with max ≥ 4
		p = max
	}
	return text[:p], text[p:], true
}

// pieceBoundary reports whether both cl100k_base's and o200k_base's
// pre-tokenizers always start a new piece at byte p of text, judged from
// the runes around p:
//   - after a letter or digit and before a letter: " word" after a word,
//     "abc|123", "123|abc";
//   - a space before a letter, after a non-space: the space leads the word;
//   - punctuation (not an apostrophe) before a letter, after a letter:
//     the punctuation leads the next word ("问，|题" cuts before "，");
//   - after a newline and before a letter.
func pieceBoundary(text string, p int) bool {
	if p <= 0 || p >= len(text) || !utf8.RuneStart(text[p]) {
		return false
	}
	prev, _ := utf8.DecodeLastRuneInString(text[:p])
	cur, size := utf8.DecodeRuneInString(text[p:])
	if prev == utf8.RuneError || cur == utf8.RuneError {
		return false
	}
	nextLetter := func() bool {
		if p+size >= len(text) {
			return false
		}
		r, _ := utf8.DecodeRuneInString(text[p+size:])
		return r != utf8.RuneError && unicode.IsLetter(r)
	}
	switch {
	case prev == '\n':
		return unicode.IsLetter(cur)
	case unicode.IsLetter(prev) && unicode.IsDigit(cur), unicode.IsDigit(prev) && unicode.IsLetter(cur):
		return isPlainLetterOrDigit(prev) && isPlainLetterOrDigit(cur)
	case cur == ' ':
		return !unicode.IsSpace(prev) && nextLetter()
	case unicode.IsLetter(prev) && isPunct(cur):
		return nextLetter()
	}
	return false
}

// isPlainLetterOrDigit excludes the categories the two patterns treat
// differently (letter numbers, modifier letters, marks).
func isPlainLetterOrDigit(r rune) bool {
	return (unicode.IsLetter(r) && !unicode.Is(unicode.Lm, r)) || unicode.Is(unicode.Nd, r)
}

func isPunct(r rune) bool {
	return r != '\'' && r != '\r' && r != '\n' && !unicode.IsSpace(r) &&
		!unicode.IsLetter(r) && !unicode.IsNumber(r) && !unicode.IsMark(r)
}

// newTiktoken checks that both encodings are in the binary; each is built
// when a model first needs it (an encoding costs a few MB and ~50 ms to
// build, and is immutable once built; most configurations use one).
func newTiktoken() (Meter, error) {
	for _, e := range []*bpe{bpeO200k, bpeCL100k} {
		if err := e.available(); err != nil {
			return nil, err
		}
	}
	return &tiktokenMeter{o200k: bpeO200k, cl100k: bpeCL100k, cache: sharedCache}, nil
}

// cacheMinBytes: shorter texts are counted afresh (a few µs); longer ones —
// the earlier turns an agent resends with every request — are remembered.
const (
	cacheMinBytes = 512
	cacheEntries  = 4096 // per generation; two generations are kept
)

var sharedCache = &countCache{seed: maphash.MakeSeed()}

// countCache remembers token counts of long texts, keyed by a 64-bit hash
// and the length (a collision would need both to match). Two generations
// bound its size without tracking recency per entry.
type countCache struct {
	seed     maphash.Seed
	mu       sync.Mutex
	cur, old map[cacheKey]counted
}

type cacheKey struct {
	sum   uint64
	n     int
	o200k bool
}

type counted struct {
	units  ledger.Units
	forced int
}

func (c *countCache) key(text string, o200k bool) cacheKey {
	return cacheKey{sum: maphash.String(c.seed, text), n: len(text), o200k: o200k}
}

func (c *countCache) get(k cacheKey) (counted, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.cur[k]; ok {
		return v, true
	}
	if v, ok := c.old[k]; ok {
		c.putLocked(k, v)
		return v, true
	}
	return counted{}, false
}

func (c *countCache) put(k cacheKey, v counted) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.putLocked(k, v)
}

func (c *countCache) putLocked(k cacheKey, v counted) {
	if c.cur == nil {
		c.cur = make(map[cacheKey]counted)
	}
	if len(c.cur) >= cacheEntries {
		c.old, c.cur = c.cur, make(map[cacheKey]counted)
	}
	c.cur[k] = v
}

// o200kFamilies are the model families that OpenAI tokenizes with o200k_base.
// A family matches the exact name or the name followed by '-' or '.'
// ("gpt-4o", "gpt-4o-mini", "gpt-5.1"), so "o100" is not "o1".
var o200kFamilies = []string{"gpt-4o", "chatgpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "o1", "o3", "o4"}

// EncodingForModel names the tiktoken encoding the meter uses for model:
// o200k_base for gpt-4o*, gpt-4.1*, gpt-5*, o1*, o3*, o4*; cl100k_base for
// every other model, known or not. A provider prefix ("openai/gpt-4o") and
// letter case are ignored.
func EncodingForModel(model string) string {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	for _, f := range o200kFamilies {
		if strings.HasPrefix(m, f) && (len(m) == len(f) || m[len(f)] == '-' || m[len(f)] == '.' || m[len(f)] == ':') {
			return EncodingO200k
		}
	}
	return EncodingCL100k
}

// Usage is an upstream's usage evidence (ledger.Usage); a door maps its
// protocol's usage object onto it.
type Usage = ledger.Usage
