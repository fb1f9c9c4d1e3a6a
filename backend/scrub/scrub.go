// Package scrub removes secrets from text an upstream sent before quotagate
// stores, shows or relays it: a provider answering 401
// "Incorrect API key provided: sk-…" must not put the operator's key in a
// tenant's error, in run evidence, in /admin/api/state or in audit.csv.
//
// Two nets: every configured secret (upstream keys, balance-source keys,
// the admin token, configured tenant keys) wherever it appears, and
// key-shaped strings whatever their origin (sk-… keys, cloud access keys,
// Bearer credentials, key=… parameters, long opaque tokens).
package scrub

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// Mask replaces what is scrubbed.
const Mask = "[redacted]"

// MinSecretLen is the shortest configured secret that is scrubbed by value:
// a shorter one would mask ordinary words.
const MinSecretLen = 8

// prefixLen is how much of a long secret's start is enough to mask (an
// upstream that echoes "sk-abcdefgh…wxyz").
const prefixLen = 12

// Scrubber masks a fixed set of secrets and key-shaped strings. The zero
// value and nil mask key-shaped strings only. Safe for concurrent use.
type Scrubber struct {
	secrets  []string         // longest first, so a secret containing another goes whole
	prefixes []*regexp.Regexp // the start of a long secret and the token it begins
}

// New returns a scrubber for secrets; empty and short ones are ignored.
func New(secrets ...string) *Scrubber {
	s := &Scrubber{}
	seen := map[string]bool{}
	add := func(v string) {
		// A secret the mask itself holds ("redacted") cannot be masked:
		// every mask would be masked again on the next pass.
		if len(v) >= MinSecretLen && !seen[v] && !strings.Contains(Mask, v) {
			seen[v] = true
			s.secrets = append(s.secrets, v)
		}
	}
	for _, v := range secrets {
		v = strings.TrimSpace(v)
		add(v)
		if len(v) >= 2*prefixLen {
			if re, err := regexp.Compile(regexp.QuoteMeta(v[:prefixLen]) + tokenChars + `*`); err == nil {
				s.prefixes = append(s.prefixes, re) // (a prefix cut inside a UTF-8 sequence does not compile)
			}
		}
	}
	slices.SortFunc(s.secrets, func(a, b string) int { return len(b) - len(a) })
	return s
}

// tokenChars are the characters of a key (base64, base64url, masks).
const tokenChars = `[A-Za-z0-9_\-*+/=]`

var (
	// keyed parameters and fields: api_key=…, "token": "…", secret_key: …
	keyed = regexp.MustCompile(`(?i)((?:api[_-]?key|access[_-]?key(?:[_-]?id)?|secret(?:[_-]?(?:access[_-]?)?key)?|token|password|passwd|key)["']?\s*[:=]\s*["']?)[^\s"'&,;}]{6,}`)
	// an Authorization credential
	bearer = regexp.MustCompile(`(?i)\b(bearer|basic)(\s+)[A-Za-z0-9_\-.=+/~]{8,}`)
	// provider key shapes: OpenAI/Anthropic/DeepSeek sk-, Volcengine AKLT,
	// AWS AKIA, Google AIza, GitHub/Groq/xAI/Hugging Face prefixes
	shaped = regexp.MustCompile(`\b(?:(?:sk|rk|pk)[-_][A-Za-z0-9_\-*]{6,}|AKLT[A-Za-z0-9_\-]{10,}|AKIA[0-9A-Z]{12,}|AIza[0-9A-Za-z_\-]{20,}|(?:ghp|gho|ghs|ghu|gsk|hf)_[A-Za-z0-9]{10,}|xai-[A-Za-z0-9]{10,})`)
	// long opaque tokens (base64, hex) with letters and digits
	opaque = regexp.MustCompile(`[A-Za-z0-9_+/]{32,}={0,2}`)
)

// String returns in with every secret and key-shaped string masked.
func (s *Scrubber) String(in string) string {
	out := in
	if s != nil {
		// Repeat until stable: masking one occurrence cannot make another,
		// but overlapping occurrences of a secret need a second pass.
		for range 4 {
			before := out
			for _, v := range s.secrets {
				out = strings.ReplaceAll(out, v, Mask)
			}
			for _, re := range s.prefixes {
				out = re.ReplaceAllString(out, Mask)
			}
			if out == before {
				break
			}
		}
	}
	out = keyed.ReplaceAllString(out, "${1}"+Mask)
	out = bearer.ReplaceAllString(out, "${1}${2}"+Mask)
	out = shaped.ReplaceAllString(out, Mask)
	out = opaque.ReplaceAllStringFunc(out, func(tok string) string {
		if looksRandom(tok) {
			return Mask
		}
		return tok
	})
	return out
}

// Bytes is String for a byte slice.
func (s *Scrubber) Bytes(b []byte) []byte { return []byte(s.String(string(b))) }

// Contains reports whether in holds a configured secret (tests, assertions).
func (s *Scrubber) Contains(in string) bool {
	if s == nil {
		return false
	}
	for _, v := range s.secrets {
		if strings.Contains(in, v) {
			return true
		}
	}
	return false
}

// looksRandom: both letters and digits, or both cases — not a long word or
// a run of one character.
func looksRandom(tok string) bool {
	var digit, upper, lower bool
	for _, r := range tok {
		switch {
		case unicode.IsDigit(r):
			digit = true
		case unicode.IsUpper(r):
			upper = true
		case unicode.IsLower(r):
			lower = true
		}
	}
	return (digit && (upper || lower)) || (upper && lower)
}
