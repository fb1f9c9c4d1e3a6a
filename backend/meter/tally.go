package meter

import (
	"strings"

	"github.com/quotagate/quotagate/backend/ledger"
)

// Observation is what one upstream event (or a whole non-streaming body)
// says to the meter, in no protocol's terms: a door reads its protocol's
// event and fills it.
type Observation struct {
	// Text is the generated text in the event that is relayed to the client
	// (content, reasoning, tool-call names and arguments): the metered
	// output. Text that looks like usage JSON is text.
	Text string
	// Usage is the usage evidence the event carries; nil when none. The
	// last one wins (some providers repeat a running usage).
	Usage *Usage
	// End is the protocol's terminal marker (chat's [DONE], the Messages
	// API's message_stop, the Responses API's response.completed).
	End bool
	// Problem says why the event's evidence cannot be used (a usage object
	// that is present but bad, a payload that does not parse); the verdict
	// then keeps the hold. With Unreadable, nothing else of the event
	// counts: not its text, its marker nor its usage (and a body that is
	// unreadable is incomplete).
	Problem    string
	Unreadable bool
	// UpstreamError is the message of an in-stream error object.
	UpstreamError string
	// ProviderID is the provider's id of the call when the event names it
	// (a chat chunk's id, a Responses response id, a Messages message id,
	// a Gemini responseId); the first one seen is the run's.
	ProviderID string
}

// Tally gathers, observation by observation, what the gateway relayed of
// one answer and the evidence the upstream gave, for Judge. The zero value
// is ready; it is not safe for concurrent use (one reader goroutine
// observes, and Judgement is taken after that goroutine is done).
type Tally struct {
	output  strings.Builder
	usage   *Usage
	sawDone bool
	problem string
	// unreadable: an observation could not be read at all.
	unreadable bool
	// EndMarker names the terminal marker in sentences ("[DONE]" when empty).
	EndMarker string
	// UpstreamError is the message of the last in-stream error object.
	UpstreamError string
	// Events counts observations.
	Events int
	// ProviderID is the first provider id observed ("" when none).
	ProviderID string
}

// MaxProviderIDBytes bounds a kept provider id: ids are tens of bytes; a
// longer one is no id the gateway can ask the provider about.
const MaxProviderIDBytes = 256

// Observe takes one event's observation. Data after the terminal marker is
// a problem: the verdict will keep the hold.
func (t *Tally) Observe(o Observation) {
	t.Events++
	if o.Unreadable {
		t.unreadable = true
		t.setProblem(o.Problem)
		return
	}
	t.output.WriteString(o.Text)
	if t.ProviderID == "" && o.ProviderID != "" && len(o.ProviderID) <= MaxProviderIDBytes {
		t.ProviderID = o.ProviderID
	}
	if o.UpstreamError != "" {
		t.UpstreamError = o.UpstreamError
	}
	switch {
	case t.sawDone:
		t.setProblem("data arrived after " + t.marker())
	case o.End:
		t.sawDone = true
	}
	if o.Problem != "" {
		t.setProblem(o.Problem)
		return
	}
	if o.Usage != nil {
		t.usage = o.Usage
	}
}

func (t *Tally) marker() string {
	if t.EndMarker == "" {
		return "[DONE]"
	}
	return t.EndMarker
}

func (t *Tally) setProblem(p string) {
	if t.problem == "" {
		t.problem = p
	}
}

// Output is the text relayed so far (content, reasoning and tool-call text).
func (t *Tally) Output() string { return t.output.String() }

// Usage is the last usage object seen, or nil.
func (t *Tally) Usage() *Usage { return t.usage }

// SawDone reports whether the terminal marker arrived.
func (t *Tally) SawDone() bool { return t.sawDone }

// Judgement returns the stream's judgement for Judge, with the run's meter,
// model, input estimate and band.
func (t *Tally) Judgement(m Meter, model string, inputUnits, uncertainUnits ledger.Units, band PromptBand) Judgement {
	return Judgement{
		Meter: m, Model: model,
		InputUnits: inputUnits, UncertainUnits: uncertainUnits,
		Output: t.output.String(),
		Usage:  t.usage, UsageProblem: t.problem,
		Stream: true, SawDone: t.sawDone, EndMarker: t.EndMarker,
		Band: band,
	}
}
