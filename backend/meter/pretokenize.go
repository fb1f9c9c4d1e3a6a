package meter

import (
	"unicode"
	"unicode/utf8"
)

// The pre-tokenizers of cl100k_base and o200k_base, written out: regexp2,
// a backtracking engine over []rune, was ~70 % of counting a
// conversation's first send. Each follows its pattern (patternCL100k,
// patternO200k) alternative by alternative, in the pattern's order, with
// the backtracking the pattern implies spelled out; FuzzPretokenize holds
// the pieces to regexp2's matches of the same pattern, and the BPE tests to
// tiktoken-go's counts.

// A rune's classes, as the patterns name them.
type runeClass uint8

const (
	clL  runeClass = 1 << iota // \p{L}
	clN                        // \p{N}
	clS                        // \s (regexp2: unicode.IsSpace)
	clA                        // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
	clB                        // [\p{Ll}\p{Lm}\p{Lo}\p{M}]
	clNL                       // \r or \n
)

var asciiClasses = func() (t [utf8.RuneSelf]runeClass) {
	for r := range t {
		t[r] = classifySlow(rune(r))
	}
	return t
}()

func classify(r rune) runeClass {
	switch {
	case r < utf8.RuneSelf:
		return asciiClasses[r]
	case 0x4E00 <= r && r <= 0x9FFF: // CJK Unified Ideographs: all Lo
		return clL | clA | clB
	}
	return classifySlow(r)
}

func classifySlow(r rune) runeClass {
	var c runeClass
	switch {
	case unicode.IsLetter(r):
		c = clL
		if !unicode.Is(unicode.Ll, r) {
			c |= clA
		}
		if !unicode.Is(unicode.Lu, r) && !unicode.Is(unicode.Lt, r) {
			c |= clB
		}
	case unicode.IsMark(r):
		c = clA | clB
	case unicode.IsNumber(r):
		c = clN
	case unicode.IsSpace(r):
		c = clS
		if r == '\r' || r == '\n' {
			c |= clNL
		}
	}
	return c
}

// pretokenizer splits one valid UTF-8 text into the pattern's pieces.
type pretokenizer struct {
	o200k bool
	rs    []rune
	cl    []runeClass
	off   []int // byte offset of rune i; off[len(rs)] = len(text)
}

// split calls piece with the byte bounds of each piece of text, in order.
func (p *pretokenizer) split(text string, piece func(from, to int)) {
	p.rs, p.cl, p.off = p.rs[:0], p.cl[:0], p.off[:0]
	for i, r := range text {
		p.rs = append(p.rs, r)
		p.cl = append(p.cl, classify(r))
		p.off = append(p.off, i)
	}
	p.off = append(p.off, len(text))
	for i, n := 0, len(p.rs); i < n; {
		e := p.next(i)
		piece(p.off[i], p.off[e])
		i = e
	}
}

// other is [^\s\p{L}\p{N}].
func (p *pretokenizer) other(i int) bool {
	return i < len(p.rs) && p.cl[i]&(clL|clN|clS) == 0
}

// next returns the end of the piece that starts at rune i: the pattern's
// alternatives in its order — a word, a number, punctuation, whitespace.
func (p *pretokenizer) next(i int) int {
	n, c, r := len(p.rs), p.cl[i], p.rs[i]
	// [^\r\n\p{L}\p{N}]: the one-rune prefix of a word.
	prefix := c&(clL|clN) == 0 && c&clNL == 0
	if p.o200k {
		// [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+('s|…)?
		// then the same with + and * swapped; the prefix is tried first.
		if prefix {
			if e := p.word(i+1, true); e > 0 {
				return e
			}
		}
		if e := p.word(i, true); e > 0 {
			return e
		}
		if prefix {
			if e := p.word(i+1, false); e > 0 {
				return e
			}
		}
		if e := p.word(i, false); e > 0 {
			return e
		}
	} else {
		// (?i:'s|'t|'re|'ve|'m|'ll|'d)
		if e := p.contraction(i); e > 0 {
			return e
		}
		// [^\r\n\p{L}\p{N}]?\p{L}+
		j := i
		if prefix && i+1 < n && p.cl[i+1]&clL != 0 {
			j = i + 1
		}
		if p.cl[j]&clL != 0 {
			return p.run(j, clL)
		}
	}
	// \p{N}{1,3}
	if c&clN != 0 {
		e := i + 1
		for e < n && e-i < 3 && p.cl[e]&clN != 0 {
			e++
		}
		return e
	}
	// ` ?[^\s\p{L}\p{N}]+[\r\n]*` (o200k: [\r\n/]*)
	j := i
	if r == ' ' && p.other(i+1) {
		j = i + 1
	}
	if p.other(j) {
		e := j + 1
		for p.other(e) {
			e++
		}
		for e < n && (p.cl[e]&clNL != 0 || p.o200k && p.rs[e] == '/') {
			e++
		}
		return e
	}
	return p.spaces(i)
}

// spaces matches what is left, which starts with whitespace: the run to
// its last newline (\s*[\r\n]+); else the run but its last rune when more
// follows (\s+(?!\S)); else the one rune (\s+).
func (p *pretokenizer) spaces(i int) int {
	n := len(p.rs)
	w, lastNL := i, -1
	for w < n && p.cl[w]&clS != 0 {
		if p.cl[w]&clNL != 0 {
			lastNL = w
		}
		w++
	}
	switch {
	case lastNL >= 0:
		return lastNL + 1
	case w == n || w-i == 1:
		return w
	}
	return w - 1
}

// run returns the end of the run of runes of class want from i.
func (p *pretokenizer) run(i int, want runeClass) int {
	for i < len(p.rs) && p.cl[i]&want != 0 {
		i++
	}
	return i
}

// word matches o200k's word at rune j, or returns -1: with lowerFirst,
// A*B+ (the first alternative), else A+B* (the second), each with an
// optional contraction after it (A and B are clA and clB).
func (p *pretokenizer) word(j int, lowerFirst bool) int {
	n := len(p.rs)
	if j >= n {
		return -1
	}
	a := p.run(j, clA)
	if !lowerFirst {
		if a == j {
			return -1
		}
		return p.optContraction(p.run(a, clB))
	}
	if a < n && p.cl[a]&clB != 0 {
		return p.optContraction(p.run(a, clB))
	}
	// A* gives back runes until B+ can take one: the last B in the A run.
	for k := a - 1; k >= j; k-- {
		if p.cl[k]&clB != 0 {
			return p.optContraction(k + 1)
		}
	}
	return -1
}

func (p *pretokenizer) optContraction(e int) int {
	if x := p.contraction(e); x > 0 {
		return x
	}
	return e
}

// contraction matches (?i:'s|'t|'re|'ve|'m|'ll|'d) at rune i, or returns
// -1. regexp2 compares case-insensitively through unicode.ToLower.
func (p *pretokenizer) contraction(i int) int {
	n := len(p.rs)
	if i+1 >= n || p.rs[i] != '\'' {
		return -1
	}
	switch unicode.ToLower(p.rs[i+1]) {
	case 's', 't', 'm', 'd':
		return i + 2
	case 'r', 'v':
		if i+2 < n && unicode.ToLower(p.rs[i+2]) == 'e' {
			return i + 3
		}
	case 'l':
		if i+2 < n && unicode.ToLower(p.rs[i+2]) == 'l' {
			return i + 3
		}
	}
	return -1
}
