package anthropic

import (
	"github.com/quotagate/quotagate/backend/ledger"
)

// Segments is what of a request counts as input, before any meter counts
// it. Admission (the reserve's input part) and POST
// /v1/messages/count_tokens both go through Request.CountInput, which uses
// Segments, so the two figures are equal for the same body (issue 11).
type Segments struct {
	// Text is counted as it is: system text, text blocks, tool_result text
	// (and under the token rules each turn's role).
	Text []string
	// Uncertain is counted under the token rules only: tool definitions,
	// earlier tool calls and thinking — billed by a provider, but counted by
	// it in ways the gateway cannot reproduce (a wider band, see meter.PromptBand).
	Uncertain []string
	// OverheadUnits is the per-turn framing under the token rules.
	OverheadUnits ledger.Units
	// Media counts image blocks and blocks of unknown types (documents,
	// search results, …); each costs Counter.MediaUnits and is never fetched.
	Media int
}

// Token-rule framing, as the chat door counts it (OpenAI's cookbook): 3 per
// turn plus its role, and 3 to prime the reply. Anthropic publishes no
// tokenizer; the same rule keeps both doors' reserves comparable.
const (
	tokensPerTurn    = 3
	tokensReplyPrime = 3
)

// Segments returns the request's input segments. tokens selects the token
// rules (meter tiktoken); otherwise the utf8-bytes-v1 rule of issue 11
// applies: the UTF-8 bytes of system text, of every message's text blocks
// and of tool_result text — tools and thinking are not counted.
func (r *Request) Segments(tokens bool) Segments {
	var s Segments
	if len(r.System) > 0 && tokens {
		s.Text = append(s.Text, "system")
		s.OverheadUnits += tokensPerTurn
	}
	for _, b := range r.System {
		s.add(b, tokens)
	}
	for _, m := range r.Messages {
		if tokens {
			s.Text = append(s.Text, m.Role)
			s.OverheadUnits += tokensPerTurn
		}
		for _, b := range m.Content {
			s.add(b, tokens)
		}
	}
	if tokens {
		s.OverheadUnits += tokensReplyPrime
		for _, t := range r.Tools {
			if t.Custom() {
				s.Uncertain = append(s.Uncertain, t.Name, t.Description, string(t.InputSchema))
			} else {
				s.Uncertain = append(s.Uncertain, string(t.Raw))
			}
		}
	}
	return s
}

func (s *Segments) add(b Block, tokens bool) {
	switch b.Type {
	case BlockText:
		s.Text = append(s.Text, b.Text)
	case BlockToolResult:
		s.Text = append(s.Text, b.Text)
		for _, c := range b.Content {
			if c.Type != BlockText {
				s.Media++
			}
		}
	case BlockToolUse:
		if tokens {
			s.Uncertain = append(s.Uncertain, b.Name, string(b.Input))
		}
	case BlockThinking:
		if tokens {
			s.Uncertain = append(s.Uncertain, b.Text)
		}
	case BlockRedactedThinking:
		// Opaque to every meter; the provider decrypts and bills it, which
		// the band's uncertainty covers no better than nothing.
	default:
		s.Media++
	}
}

// Counter is how a meter counts: Count for text (meter.Meter.Count with
// the request's model), Tokens for the token rules, MediaUnits per media
// block (meter.ReservePolicy.ImageUnits).
type Counter struct {
	Tokens     bool
	Count      func(text string) ledger.Units
	MediaUnits ledger.Units
}

// InputCount is the gateway's count of a request's input.
type InputCount struct {
	InputUnits ledger.Units
	// UncertainUnits is the part of InputUnits a provider may count quite
	// differently (tools, tool calls, thinking, media).
	UncertainUnits ledger.Units
}

// CountInput counts the request's input with c: the one function behind
// both the reserve and count_tokens.
func (r *Request) CountInput(c Counter) InputCount {
	s := r.Segments(c.Tokens)
	var n InputCount
	for _, t := range s.Text {
		n.InputUnits = addUnits(n.InputUnits, c.Count(t))
	}
	for _, t := range s.Uncertain {
		n.UncertainUnits = addUnits(n.UncertainUnits, c.Count(t))
	}
	n.UncertainUnits = addUnits(n.UncertainUnits, mulUnits(c.MediaUnits, int64(s.Media)))
	n.InputUnits = addUnits(addUnits(n.InputUnits, s.OverheadUnits), n.UncertainUnits)
	return n
}

// addUnits and mulUnits saturate at ledger.MaxUnits: an absurd request then
// reserves more than any budget (402) instead of wrapping around.
func addUnits(a, b ledger.Units) ledger.Units {
	a, b = max(a, 0), max(b, 0)
	if a > ledger.MaxUnits-b {
		return ledger.MaxUnits
	}
	return a + b
}

func mulUnits(a ledger.Units, n int64) ledger.Units {
	if a <= 0 || n <= 0 {
		return 0
	}
	if a > ledger.MaxUnits/ledger.Units(n) {
		return ledger.MaxUnits
	}
	return a * ledger.Units(n)
}
