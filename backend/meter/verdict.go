package meter

import (
	"fmt"
	"strings"

	"github.com/quotagate/quotagate/backend/ledger"
)

// PromptBand is how far an upstream's figures may stray from the gateway's
// own counts under the tiktoken meter and still be trusted:
//
//	|prompt − own| ≤ own × Percent / 100 + Slack + the request's uncertain
//	                 units (tool definitions, media)
//	completion ≥ relayed × (100 − OutputShortfallPercent) / 100
//
// For OpenAI models the meter counts with the model's own encoding and the
// band is narrow (DefaultPromptBand). Models with their own tokenizer
// (DeepSeek, Doubao, Qwen, …) are counted with cl100k_base, which gives
// Chinese text up to about twice the tokens those tokenizers do, so their
// band must be wide on both sides (ForeignPromptBand); BandFor picks one.
type PromptBand struct {
	Percent int64
	Slack   ledger.Units
	// OutputShortfallPercent is how far completion_tokens may fall below
	// the gateway's count of the relayed text (0: not at all).
	OutputShortfallPercent int64
}

var (
	// DefaultPromptBand suits OpenAI models counted with their own encoding.
	DefaultPromptBand = PromptBand{Percent: 10, Slack: 16}
	// ForeignPromptBand suits models whose tokenizer the meter does not
	// have: the provider may count 40 %–160 % of the gateway's prompt and
	// as little as 40 % of its count of the relayed text. A zero
	// completion for text that was relayed is still refused.
	ForeignPromptBand = PromptBand{Percent: 60, Slack: 32, OutputShortfallPercent: 60}
)

// BandFor returns DefaultPromptBand for models the tiktoken meter counts
// with their own encoding (OpenAI's gpt-3.5/gpt-4/gpt-4o/gpt-4.1/gpt-5 and
// o-series families) and ForeignPromptBand for every other model.
func BandFor(model string) PromptBand {
	if EncodingForModel(model) == EncodingO200k {
		return DefaultPromptBand
	}
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	if strings.HasPrefix(m, "gpt-4") || strings.HasPrefix(m, "gpt-3.5") {
		return DefaultPromptBand // cl100k_base is their own encoding
	}
	return ForeignPromptBand
}

// Allows reports whether prompt is within the band around own.
func (b PromptBand) Allows(own, uncertain ledger.Units, prompt int64) bool {
	tol := addUnits(addUnits(mulUnits(own, b.Percent)/100, b.Slack), uncertain)
	d := ledger.Units(prompt) - own
	if d < 0 {
		d = -d
	}
	return d <= tol
}

// OutputFloor is the least completion_tokens that can be trusted for
// relayed text the gateway counted as relayed tokens.
func (b PromptBand) OutputFloor(relayed ledger.Units) ledger.Units {
	p := min(max(b.OutputShortfallPercent, 0), 100)
	if p == 0 {
		return relayed
	}
	return mulUnits(relayed, 100-p) / 100
}

// Judgement is everything the verdict depends on, gathered by the gateway
// once a run's response has ended.
type Judgement struct {
	Meter Meter  // the configured meter; its Name selects the rule
	Model string // the model asked for (selects the tiktoken encoding)
	// InputUnits is the gateway's count of the prompt (Reserve's input);
	// UncertainUnits is the part of it a provider may count differently
	// (Estimate.UncertainUnits).
	InputUnits     ledger.Units
	UncertainUnits ledger.Units
	// Output is the text the gateway relayed (Chunk.Text of every chunk, in
	// order, or Completion.Text). Under tiktoken it is counted as a whole:
	// tokens of pieces do not add up to tokens of the text.
	Output string
	// OutputUnits, when OutputCounted, replaces counting Output (e.g. bytes
	// summed chunk by chunk under utf8-bytes-v1).
	OutputUnits   ledger.Units
	OutputCounted bool
	// Usage is the upstream's usage; nil when none arrived.
	Usage *Usage
	// UsageProblem is set when the evidence is unusable though present (a
	// bad usage object, a chunk that did not parse, data after [DONE]).
	UsageProblem string
	Stream       bool
	SawDone      bool // streams: the terminal marker ([DONE]) arrived after the usage
	// EndMarker names the terminal marker in sentences ("" is "[DONE]").
	EndMarker string
	Complete  bool // non-streaming: the whole JSON body arrived and parsed
	Band      PromptBand
	// ReserveUnits, when > 0, is the run's reserve; a trusted spend above it
	// sets Verdict.ExceedsReserve (ledger.Store.Settle charges the reserve and keeps the rest as overrun).
	ReserveUnits ledger.Units
}

// Reasons a verdict gives; Trusted verdicts say ReasonTrusted.
const (
	ReasonTrusted         = "trusted_usage"
	ReasonNoUsage         = "no_usage_evidence"
	ReasonNoDone          = "no_end_marker"
	ReasonIncomplete      = "incomplete_body"
	ReasonBadEvidence     = "bad_evidence"       // a bad usage object, a chunk that did not parse, data after [DONE]
	ReasonInconsistent    = "inconsistent_usage" // total ≠ prompt + completion, reasoning > completion
	ReasonMismatch        = "usage_mismatch"     // usage contradicts what the gateway measured
	ReasonPromptOutOfBand = "prompt_out_of_band"
	ReasonUnknownMeter    = "unknown_meter"
)

// Verdict is the outcome: settle SpendUnits when Trusted, else keep the hold.
type Verdict struct {
	Trusted    bool
	SpendUnits ledger.Units // what to settle; 0 unless Trusted
	// MeasuredUnits is the gateway's own figure (input + relayed output
	// under the run's meter), shown as an estimate on unknown runs and never
	// settled by itself.
	MeasuredUnits ledger.Units
	// RelayedUnits is the output part of MeasuredUnits: what the gateway
	// relayed, under the run's meter (a provider's later figure with less
	// output contradicts it).
	RelayedUnits ledger.Units
	Reason       string // one of the Reason* constants
	Detail       string // a sentence for the audit row and the dashboard
	// ExceedsReserve: trusted usage is above the run's reserve (a reasoning
	// model past its floor, a prompt the gateway under-counted). The ledger
	// cannot settle more than the reserve; the caller decides (settle the
	// reserve and record the excess in the evidence, or keep the hold).
	ExceedsReserve bool
	// CachedTokens is the trusted usage's cached prompt tokens (ledger.Usage
	// CachedTokens, when within the prompt), for ledger.Store.SettleUsage; 0
	// unless Trusted.
	CachedTokens int64
}

// Evidence is the verdict in one line, for ledger.Store.Settle / KeepHold.
func (v Verdict) Evidence() string { return v.Reason + ": " + v.Detail }

// Judge applies DESIGN.md's settlement rule for the judgement's meter.
//
// utf8-bytes-v1: spend the gateway's own measure (input bytes + relayed
// output bytes), trusted only when usage is present (streams: and [DONE]
// arrived; otherwise a complete body) and prompt_tokens equals the input
// bytes and completion_tokens the output bytes.
//
// tiktoken: spend prompt_tokens + completion_tokens, trusted only when usage
// is present (streams: and [DONE]), non-negative, total = prompt +
// completion when total is given, reasoning ≤ completion, completion ≥ the
// tokens of the relayed text, and prompt within j.Band of the own count.
func Judge(j Judgement) Verdict {
	var v Verdict
	if j.Meter == nil {
		v.Reason, v.Detail = ReasonUnknownMeter, "no meter was configured for this run"
		return v
	}
	out, slack := j.OutputUnits, ledger.Units(0)
	if !j.OutputCounted {
		if tm, ok := j.Meter.(*tiktokenMeter); ok {
			var forced int
			out, forced = tm.count(j.Model, j.Output)
			slack = ledger.Units(forced) // a forced cut may add a token
		} else {
			out = j.Meter.Count(j.Model, j.Output)
		}
	}
	v.MeasuredUnits, v.RelayedUnits = addUnits(j.InputUnits, out), out
	if held, ok := j.unusable(v); ok {
		return held
	}
	v, held := j.spend(v, out, slack)
	if held {
		return v
	}
	return j.trust(v)
}

// unusable holds v when the evidence is absent, incomplete or
// inconsistent in itself, whatever the meter.
func (j *Judgement) unusable(v Verdict) (Verdict, bool) {
	u := j.Usage
	switch {
	case !j.Stream && !j.Complete:
		return v.hold(ReasonIncomplete, "the response body did not arrive complete"), true
	case j.UsageProblem != "":
		return v.hold(ReasonBadEvidence, "the upstream's evidence is not usable: %s", j.UsageProblem), true
	case u == nil:
		return v.hold(ReasonNoUsage, "the upstream sent no usage object"), true
	case j.Stream && !j.SawDone:
		return v.hold(ReasonNoDone, "the stream ended without %s", j.endMarker()), true
	case u.PromptTokens < 0 || u.CompletionTokens < 0 || u.TotalTokens < 0 || u.ReasoningTokens < 0:
		return v.hold(ReasonBadEvidence, "the usage has a negative count"), true
	case u.PromptTokens > int64(ledger.MaxUnits) || u.CompletionTokens > int64(ledger.MaxUnits)-u.PromptTokens:
		return v.hold(ReasonBadEvidence, "the usage counts are too large"), true
	case u.HasTotal && u.TotalTokens != u.PromptTokens+u.CompletionTokens:
		return v.hold(ReasonInconsistent, "total_tokens %d ≠ prompt_tokens %d + completion_tokens %d",
			u.TotalTokens, u.PromptTokens, u.CompletionTokens), true
	case u.ReasoningTokens > u.CompletionTokens:
		return v.hold(ReasonInconsistent, "reasoning_tokens %d exceed completion_tokens %d",
			u.ReasoningTokens, u.CompletionTokens), true
	}
	return v, false
}

// spend applies the meter's own rule to usable evidence: it sets v's
// spend, or holds v when the usage contradicts the gateway's measure (out
// relayed units, slack of them possibly added by a forced cut).
func (j *Judgement) spend(v Verdict, out, slack ledger.Units) (Verdict, bool) {
	u := j.Usage
	switch j.Meter.Name() {
	case NameUTF8Bytes:
		if u.PromptTokens != int64(j.InputUnits) || u.CompletionTokens != int64(out) {
			return v.hold(ReasonMismatch, "usage says %d in + %d out, the gateway measured %d in + %d out bytes",
				u.PromptTokens, u.CompletionTokens, j.InputUnits, out), true
		}
		v.SpendUnits = v.MeasuredUnits
	case NameTiktoken:
		if floor := j.Band.OutputFloor(out) - slack; u.CompletionTokens < int64(floor) {
			return v.hold(ReasonMismatch, "completion_tokens %d are fewer than the %d the gateway's count of the relayed text (%d) allows",
				u.CompletionTokens, floor, out), true
		}
		if !j.Band.Allows(j.InputUnits, j.UncertainUnits, u.PromptTokens) {
			return v.hold(ReasonPromptOutOfBand, "prompt_tokens %d are outside the band around the gateway's count %d",
				u.PromptTokens, j.InputUnits), true
		}
		v.SpendUnits = ledger.Units(u.PromptTokens + u.CompletionTokens)
	default:
		return v.hold(ReasonUnknownMeter, "no settlement rule for meter %q", j.Meter.Name()), true
	}
	return v, false
}

// trust makes v, whose spend is set, the trusted verdict: its detail names
// the usage, the cache figures within the prompt, and a spend above the
// reserve.
func (j *Judgement) trust(v Verdict) Verdict {
	u := j.Usage
	v.Trusted = true
	v.Reason = ReasonTrusted
	v.Detail = fmt.Sprintf("usage %d in + %d out under %s", u.PromptTokens, u.CompletionTokens, j.Meter.Name())
	if u.CachedTokens >= 0 && u.CacheCreationTokens >= 0 && u.CachedTokens+u.CacheCreationTokens > 0 &&
		u.CachedTokens+u.CacheCreationTokens <= u.PromptTokens {
		cache := fmt.Sprintf("%d cached", u.CachedTokens)
		if u.CacheCreationTokens > 0 {
			cache += fmt.Sprintf(", %d written to the cache", u.CacheCreationTokens)
		}
		v.Detail = fmt.Sprintf("usage %d in (%s) + %d out under %s", u.PromptTokens, cache, u.CompletionTokens, j.Meter.Name())
		v.CachedTokens = u.CachedTokens
	}
	if _, over := ledger.SplitOverrun(j.ReserveUnits, v.SpendUnits); j.ReserveUnits > 0 && over > 0 {
		v.ExceedsReserve = true
		v.Detail += fmt.Sprintf(", %d above the reserve of %d", over, j.ReserveUnits)
	}
	return v
}

func (j Judgement) endMarker() string {
	if j.EndMarker == "" {
		return "[DONE]"
	}
	return j.EndMarker
}

func (v Verdict) hold(reason, format string, args ...any) Verdict {
	v.Trusted, v.SpendUnits = false, 0
	v.Reason, v.Detail = reason, fmt.Sprintf(format, args...)
	return v
}
