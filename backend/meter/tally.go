package meter

import (
	"errors"
	"strings"

	"github.com/quotagate/quotagate/backend/ledger"
)

// Tally gathers, event by event, what the gateway relayed of one stream
// and the evidence the upstream gave, for Judge. The zero value is ready;
// it is not safe for concurrent use (one reader goroutine observes, and
// Judgement is taken after that goroutine is done).
type Tally struct {
	output  strings.Builder
	usage   *Usage
	sawDone bool
	problem string
	// UpstreamError is the message of the last in-stream error object.
	UpstreamError string
	// Events counts events with data.
	Events int
}

// Observe takes one event, as relayed to the client, and returns its parsed
// chunk (the zero Chunk for comments and events without data). The last
// usage object wins (some providers repeat a running usage in every chunk).
// An error means the event says something the tally cannot account for; the
// tally has recorded it and the verdict will keep the hold.
func (t *Tally) Observe(ev Event) (Chunk, error) {
	if !ev.HasData() {
		return Chunk{}, nil
	}
	t.Events++
	c, err := ParseChunk(ev.Data)
	if ev.Incomplete {
		// Cut before its blank line (often mid-JSON): a client drops such an
		// event and the gateway does not relay it, so neither its text nor
		// its [DONE] nor its usage counts — and its half JSON is no problem.
		return c, nil
	}
	if err != nil && !errors.Is(err, ErrBadUsage) {
		t.setProblem("a data event did not parse: " + err.Error())
		return c, err
	}
	t.output.WriteString(c.Text())
	if c.Error != "" {
		t.UpstreamError = c.Error
	}
	switch {
	case t.sawDone:
		t.setProblem("data arrived after [DONE]")
	case c.Done:
		t.sawDone = true
	}
	if err != nil {
		t.setProblem(err.Error())
		return c, err
	}
	if c.Usage != nil {
		t.usage = c.Usage
	}
	return c, nil
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

// SawDone reports whether a complete [DONE] event arrived.
func (t *Tally) SawDone() bool { return t.sawDone }

// Judgement returns the stream's judgement for Judge, with the run's meter,
// model, input estimate and band.
func (t *Tally) Judgement(m Meter, model string, inputUnits, uncertainUnits ledger.Units, band PromptBand) Judgement {
	return Judgement{
		Meter: m, Model: model,
		InputUnits: inputUnits, UncertainUnits: uncertainUnits,
		Output: t.output.String(),
		Usage:  t.usage, UsageProblem: t.problem,
		Stream: true, SawDone: t.sawDone,
		Band: band,
	}
}
