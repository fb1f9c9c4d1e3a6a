package meter

import (
	"cmp"

	"github.com/quotagate/quotagate/backend/ledger"
)

// Defaults of the reserve policy (the config's limits.default_output_units,
// reasoning_floor_units and image_units), applied by WithDefaults.
const (
	DefaultOutputUnits         ledger.Units = 4096
	DefaultReasoningFloorUnits ledger.Units = 4096 // seed 002: a reasoning model's hidden output
	DefaultImageUnits          ledger.Units = 1024
)

// ReservePolicy is how much a run holds at admission beyond its input.
type ReservePolicy struct {
	// DefaultOutputUnits is the output cap when the client gives none.
	DefaultOutputUnits ledger.Units
	// ReasoningFloorUnits is the least output a reasoning model is reserved
	// for: its hidden reasoning is billed and not bounded by max_tokens
	// (seed 002: 18 input + max(16, 4096) = 4,114).
	ReasoningFloorUnits ledger.Units
	// ImageUnits is reserved per image (and per other media part); media is
	// never downloaded to be measured.
	ImageUnits ledger.Units
	// ReasoningModels are model names that get the floor; an entry ending in
	// '*' matches by prefix ("deepseek-r1*").
	ReasoningModels []string
}

// WithDefaults is p with its figures left zero set to the defaults. The
// zero policy itself is meaningful, input only (count_tokens measures with
// it), so Reserve does not apply them: the server does, once, for the
// gateway's policy. The bound of every figure is ledger.CheckUnits's, which
// the config checks.
func (p ReservePolicy) WithDefaults() ReservePolicy {
	p.DefaultOutputUnits = cmp.Or(p.DefaultOutputUnits, DefaultOutputUnits)
	p.ReasoningFloorUnits = cmp.Or(p.ReasoningFloorUnits, DefaultReasoningFloorUnits)
	p.ImageUnits = cmp.Or(p.ImageUnits, DefaultImageUnits)
	return p
}

// IsReasoning reports whether model is one of p.ReasoningModels.
func (p ReservePolicy) IsReasoning(model string) bool {
	for _, m := range p.ReasoningModels {
		if m == model {
			return true
		}
		if n := len(m); n > 0 && m[n-1] == '*' && len(model) >= n-1 && model[:n-1] == m[:n-1] {
			return true
		}
	}
	return false
}

// Request is what the meter reads of a client's request, whatever its
// protocol: a door fills it from its own wire format (the chat door from
// openai.ChatRequest), so counting and the reserve know no protocol.
type Request struct {
	Model    string
	Stream   bool
	Messages []Message
	// ToolsJSON is the raw tool definitions, which the provider bills as
	// prompt tokens; nil when absent.
	ToolsJSON []byte
	// OutputCap is the client's output cap when HasOutputCap; else the
	// policy's DefaultOutputUnits.
	OutputCap    int64
	HasOutputCap bool
	// N is the number of answers asked for (0 is 1); each may produce up to
	// the output cap, so the reserve multiplies by N.
	N int64
	// Plain: the input is text as it is, not a conversation (a completions
	// prompt and suffix, embedding inputs): Texts are counted each alone,
	// with none of chat's per-message and reply-priming tokens, and
	// CountedUnits (inputs given as token ids: one unit an id) are added as
	// they are. Messages and ToolsJSON are then not read.
	Plain        bool
	Texts        []string
	CountedUnits ledger.Units
	// ReasoningBudget is the client's own thinking budget (Gemini's
	// thinkingBudget), 0 when none: for a reasoning model it raises the
	// reasoning floor when it is larger.
	ReasoningBudget int64
}

// Message is one prompt message with its text flattened.
type Message struct {
	Role string
	Name string
	// Text is the message's content: its text, or its text parts joined
	// without separator. Media parts are counted, never fetched.
	Text string
	// ToolCalls is the function names and arguments of an assistant's
	// earlier tool calls, concatenated; the provider bills them as prompt
	// tokens.
	ToolCalls string
	// Images counts image parts; OtherParts counts parts that are neither
	// text nor image (audio, files, …).
	Images     int
	OtherParts int
}

// Estimate is the breakdown behind a reserve.
type Estimate struct {
	// InputUnits is the gateway's own count of the prompt: TextUnits +
	// ToolUnits + MediaUnits (+ per-message overhead under tiktoken).
	InputUnits ledger.Units
	TextUnits  ledger.Units // message contents
	ToolUnits  ledger.Units // tool definitions and earlier tool calls (tiktoken only)
	MediaUnits ledger.Units // ImageUnits × media parts
	// UncertainUnits is the part of InputUnits a provider may count quite
	// differently (tool definitions, media); PromptBand widens by it.
	UncertainUnits ledger.Units
	OutputUnits    ledger.Units // output cap × n, floored for reasoning models
	ReserveUnits   ledger.Units // InputUnits + OutputUnits, at most ledger.MaxUnits
}

// Reserve returns the gateway's count of the request's input and the units
// to hold at admission: input + output cap (Request.OutputCap, else
// p.DefaultOutputUnits), the cap raised to
// p.ReasoningFloorUnits for reasoning models, times n.
func (p ReservePolicy) Reserve(m Meter, req Request) (inputUnits, reserveUnits ledger.Units) {
	e := p.Estimate(m, req)
	return e.InputUnits, e.ReserveUnits
}

// Tiktoken message overhead, from OpenAI's cookbook ("How to count tokens
// with tiktoken"): each message costs 3 tokens plus its role (and name plus
// 1), and every reply is primed with 3 more. Under utf8-bytes-v1 only
// message contents count (DESIGN.md, seed 000: "hi" is 2).
const (
	tokensPerMessage = 3
	tokensPerName    = 1
	tokensReplyPrime = 3
)

// Estimate is Reserve with its breakdown.
func (p ReservePolicy) Estimate(m Meter, req Request) Estimate {
	var e Estimate
	if req.Plain {
		for _, t := range req.Texts {
			e.TextUnits = addUnits(e.TextUnits, m.Count(req.Model, t))
		}
		e.TextUnits = addUnits(e.TextUnits, req.CountedUnits)
		return p.withOutput(e, req)
	}
	tiktokenRules := m.Name() != NameUTF8Bytes
	media := 0
	for _, msg := range req.Messages {
		e.TextUnits = addUnits(e.TextUnits, m.Count(req.Model, msg.Text))
		media += msg.Images + msg.OtherParts
		if tiktokenRules {
			over := ledger.Units(tokensPerMessage) + m.Count(req.Model, msg.Role)
			if msg.Name != "" {
				over += tokensPerName + m.Count(req.Model, msg.Name)
			}
			e.TextUnits = addUnits(e.TextUnits, over)
			e.ToolUnits = addUnits(e.ToolUnits, m.Count(req.Model, msg.ToolCalls))
		}
	}
	if tiktokenRules {
		e.TextUnits = addUnits(e.TextUnits, tokensReplyPrime)
		if len(req.ToolsJSON) > 0 {
			e.ToolUnits = addUnits(e.ToolUnits, m.Count(req.Model, string(req.ToolsJSON)))
		}
	}
	e.MediaUnits = mulUnits(p.ImageUnits, int64(media))
	e.UncertainUnits = addUnits(e.ToolUnits, e.MediaUnits)
	return p.withOutput(e, req)
}

// withOutput completes e, whose input parts are counted: the input, the
// output cap and the reserve.
func (p ReservePolicy) withOutput(e Estimate, req Request) Estimate {
	e.InputUnits = addUnits(addUnits(e.TextUnits, e.ToolUnits), e.MediaUnits)
	out := p.DefaultOutputUnits
	if req.HasOutputCap {
		out = ledger.Units(req.OutputCap)
	}
	// An embedding generates nothing, so no hidden reasoning either: the
	// floor is for answers.
	if p.IsReasoning(req.Model) && !(req.Plain && out == 0) {
		out = max(out, p.ReasoningFloorUnits, ledger.Units(max(req.ReasoningBudget, 0)))
	}
	n := req.N
	if n < 1 {
		n = 1
	}
	e.OutputUnits = mulUnits(out, n)
	e.ReserveUnits = addUnits(e.InputUnits, e.OutputUnits)
	return e
}

// addUnits and mulUnits saturate at ledger.MaxUnits: an absurd request then
// reserves more than any budget (402) instead of wrapping around.
func addUnits(a, b ledger.Units) ledger.Units {
	if a < 0 {
		a = 0
	}
	if b < 0 {
		b = 0
	}
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
