package responses

import "github.com/quotagate/quotagate/backend/ledger"

// Rule is how input is counted for the reserve: the tiktoken meter's rule or
// utf8-bytes-v1's.
type Rule int

const (
	// RuleTokens (tiktoken): instructions, message text, function outputs,
	// tool definitions, earlier calls, and the per-message overhead.
	RuleTokens Rule = iota
	// RuleBytes (utf8-bytes-v1): the UTF-8 bytes of instructions, of every
	// message's text parts and of every *_call_output; nothing else (seed 000).
	RuleBytes
)

// Tiktoken overhead, the same figures the chat door uses (OpenAI cookbook,
// "How to count tokens with tiktoken"): 3 per message plus its role, 3 to
// prime the reply.
const (
	tokensPerMessage = 3
	tokensReplyPrime = 3
)

// InputCount is the counted input of a request.
type InputCount struct {
	// TextUnits is instructions + message text + call outputs (+ overhead
	// under RuleTokens): what every meter agrees on.
	TextUnits ledger.Units
	// ToolUnits is tool definitions and earlier calls' names and arguments
	// (RuleTokens only): billed as prompt, counted differently by providers.
	ToolUnits ledger.Units
	// MediaParts counts input_image and input_file parts, which are never
	// fetched to be measured (the caller reserves a configured figure each).
	MediaParts int
}

// Units is TextUnits + ToolUnits, saturating at ledger.MaxUnits.
func (c InputCount) Units() ledger.Units { return addUnits(c.TextUnits, c.ToolUnits) }

// CountInput counts the request's input with count (the meter, bound to the
// model) under rule.
func (r *Request) CountInput(rule Rule, count func(text string) ledger.Units) InputCount {
	var c InputCount
	text := func(s string) {
		if s != "" {
			c.TextUnits = addUnits(c.TextUnits, count(s))
		}
	}
	tool := func(s string) {
		if s != "" && rule == RuleTokens {
			c.ToolUnits = addUnits(c.ToolUnits, count(s))
		}
	}
	over := func(role string) {
		if rule == RuleTokens {
			c.TextUnits = addUnits(c.TextUnits, tokensPerMessage+count(role))
		}
	}
	if r.Instructions != "" {
		over("system")
		text(r.Instructions)
	}
	for _, it := range r.Input {
		switch {
		case it.Type == "message":
			over(it.Role)
			for _, p := range it.Parts {
				if p.IsText() {
					text(p.Text)
				} else if p.Type == "input_image" || p.Type == "input_file" {
					c.MediaParts++
				}
			}
		case it.IsCallOutput():
			over("tool")
			text(it.Output)
			for _, p := range it.Parts {
				if p.Type == "input_image" || p.Type == "input_file" {
					c.MediaParts++
				}
			}
		case it.Type == "function_call" || it.Type == "custom_tool_call":
			tool(it.Name)
			tool(it.Arguments)
		}
	}
	if rule == RuleTokens {
		c.TextUnits = addUnits(c.TextUnits, tokensReplyPrime)
		if len(r.ToolsJSON) > 0 {
			tool(string(r.ToolsJSON))
		}
	}
	return c
}

// addUnits saturates at ledger.MaxUnits: an absurd request then reserves more
// than any budget (402) instead of wrapping around.
func addUnits(a, b ledger.Units) ledger.Units {
	a, b = max(a, 0), max(b, 0)
	if a > ledger.MaxUnits-b {
		return ledger.MaxUnits
	}
	return a + b
}
