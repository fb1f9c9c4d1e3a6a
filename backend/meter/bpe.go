package meter

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"hash/maphash"
	"math"
	"runtime/debug"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/pkoukk/tiktoken-go-loader/assets"
)

// bpe is one tiktoken encoding, built on first use from the BPE file
// embedded by tiktoken-go-loader and shared by every meter.
//
// Why not tiktoken-go's own encoder at run time: it keeps, per
// encoding, the loader's map[string]int, a reverse map[int]string and a
// sorted copy of every token — 42 MB for the two encodings, a quarter of
// the process's RSS with 1,000 slow streams — and it converts every text
// to []rune and every piece to a new string. Counting needs only the
// ranks: here they take one byte string and two uint32 arrays (≈ 2.8 MB
// for cl100k_base), and an encoding no configured model uses is never
// loaded. The pre-tokenizer is the library's pattern written out
// (pretokenize.go, held to regexp2's matches of the pattern by
// FuzzPretokenize), and the merge is the library's algorithm; the BPE
// tests and FuzzBPE hold the counts to tiktoken-go's.
type bpe struct {
	name    string // the asset's name: "cl100k_base"
	pattern string // what pretokenize.go spells out (its tests use it)

	once sync.Once
	tab  *rankTable
	err  error
}

// The pre-tokenizer patterns, as tiktoken-go v0.1.8 (and OpenAI's
// tiktoken) define them.
const (
	patternCL100k = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	patternO200k  = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
		`|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
		`|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

var (
	bpeCL100k = &bpe{name: EncodingCL100k, pattern: patternCL100k}
	bpeO200k  = &bpe{name: EncodingO200k, pattern: patternO200k}
)

// load builds the encoding once. The files are part of the binary, so an
// error here is a broken build; TestEncodingsLoad loads both.
func (e *bpe) load() error {
	e.once.Do(func() {
		if e.tab, e.err = loadRanks(e.name + ".tiktoken"); e.err != nil {
			e.err = fmt.Errorf("meter: load %s: %w", e.name, e.err)
			return
		}
		// Reading the file leaves a few MB of garbage the runtime would
		// keep mapped for minutes: give it back now, once per encoding.
		debug.FreeOSMemory()
	})
	return e.err
}

// available reports whether the encoding's file is in the binary, without
// building it (New calls it so a broken build fails at start).
func (e *bpe) available() error {
	f, err := assets.Assets.Open(e.name + ".tiktoken")
	if err != nil {
		return fmt.Errorf("meter: %s is not embedded: %w", e.name, err)
	}
	return f.Close()
}

// tokens counts the tokens of text as tiktoken-go's EncodeOrdinary would:
// the pattern splits it into pieces; a piece that is a token is one, any
// other is byte-pair merged. It panics only if the embedded file is
// broken (see load).
func (e *bpe) tokens(text string) int {
	if err := e.load(); err != nil {
		panic(err)
	}
	if !utf8.ValidString(text) {
		// tiktoken-go goes through []rune, which turns each invalid byte
		// into U+FFFD: count what it counts.
		text = string([]rune(text))
	}
	p := pretokenizers.Get().(*pretokenizer)
	defer pretokenizers.Put(p)
	p.o200k = e == bpeO200k
	n := 0
	p.split(text, func(from, to int) { n += e.tab.pieceTokens(text[from:to]) })
	return n
}

var pretokenizers = sync.Pool{New: func() any { return new(pretokenizer) }}

// rankTable holds an encoding's mergeable ranks: token r is
// data[start[r]:start[r+1]], found by an open-addressing hash table.
type rankTable struct {
	data  string
	start []uint32 // len = tokens + 1
	slots []uint32 // rank+1; 0 is an empty slot
	mask  uint64
	seed  maphash.Seed
}

const noRank = math.MaxUint32

// loadRanks reads a .tiktoken file ("base64-token rank" per line, ranks
// 0, 1, 2, … in order, as in OpenAI's files).
func loadRanks(file string) (*rankTable, error) {
	f, err := assets.Assets.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var data []byte
	start := []uint32{0}
	sc := bufio.NewScanner(f)
	var tok [256]byte
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			continue
		}
		sp := -1
		for i, c := range line {
			if c == ' ' {
				sp = i
				break
			}
		}
		if sp < 0 {
			return nil, fmt.Errorf("line %d: no rank", len(start))
		}
		rank, err := strconv.Atoi(string(line[sp+1:]))
		if err != nil || rank != len(start)-1 {
			return nil, fmt.Errorf("line %d: rank %q, want %d", len(start), line[sp+1:], len(start)-1)
		}
		if base64.StdEncoding.DecodedLen(sp) > len(tok) {
			return nil, fmt.Errorf("line %d: token longer than %d bytes", len(start), len(tok))
		}
		n, err := base64.StdEncoding.Decode(tok[:], line[:sp])
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", len(start), err)
		}
		data = append(data, tok[:n]...)
		start = append(start, uint32(len(data)))
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	t := &rankTable{data: string(data), start: start[:len(start):len(start)], seed: maphash.MakeSeed()}
	size := 1
	for size < 2*(len(start)-1) { // load factor ≤ ½: short probes
		size <<= 1
	}
	t.slots = make([]uint32, size)
	t.mask = uint64(size - 1)
	for r := 0; r < len(start)-1; r++ {
		tokenText := t.data[start[r]:start[r+1]]
		i := maphash.String(t.seed, tokenText) & t.mask
		for t.slots[i] != 0 {
			if t.token(t.slots[i]-1) == tokenText {
				return nil, fmt.Errorf("token %d repeats token %d", r, t.slots[i]-1)
			}
			i = (i + 1) & t.mask
		}
		t.slots[i] = uint32(r) + 1
	}
	return t, nil
}

func (t *rankTable) token(r uint32) string { return t.data[t.start[r]:t.start[r+1]] }

// rank returns the rank of the token b, or noRank.
func (t *rankTable) rank(b string) uint32 {
	i := maphash.String(t.seed, b) & t.mask
	for {
		s := t.slots[i]
		if s == 0 {
			return noRank
		}
		if t.token(s-1) == b {
			return s - 1
		}
		i = (i + 1) & t.mask
	}
}

// pieceTokens is the number of tokens byte-pair merging gives piece, by
// tiktoken-go's bytePairMerge: repeatedly merge the adjacent pair whose
// joined bytes have the lowest rank (the leftmost on a tie).
func (t *rankTable) pieceTokens(piece string) int {
	if len(piece) <= 1 {
		return len(piece) // every byte is a token
	}
	if t.rank(piece) != noRank {
		return 1
	}
	type part struct {
		at   int
		rank uint32
	}
	var buf [64]part
	parts := buf[:0]
	if len(piece)+1 > len(buf) {
		parts = make([]part, 0, len(piece)+1)
	}
	for i := 0; i <= len(piece); i++ {
		parts = append(parts, part{i, noRank})
	}
	// rankAt: the rank of the bytes from part i to part i+skip+2.
	rankAt := func(i, skip int) uint32 {
		if i+skip+2 < len(parts) {
			return t.rank(piece[parts[i].at:parts[i+skip+2].at])
		}
		return noRank
	}
	for i := 0; i < len(parts)-2; i++ {
		parts[i].rank = rankAt(i, 0)
	}
	for len(parts) > 1 {
		minRank, i := uint32(noRank), -1
		for j := 0; j < len(parts)-1; j++ {
			if parts[j].rank < minRank {
				minRank, i = parts[j].rank, j
			}
		}
		if i < 0 {
			break
		}
		parts[i].rank = rankAt(i, 1)
		if i > 0 {
			parts[i-1].rank = rankAt(i-1, 1)
		}
		parts = append(parts[:i+1], parts[i+2:]...)
	}
	return len(parts) - 1
}
