package wire

import (
	"encoding/json"
	"strings"
)

// Turn is one prompt turn with its text flattened, in the shape a meter
// counts. Each format gives its request's turns in this shape, so that admission (the reserve's input part) and the format's
// count-tokens door count the same body with the same meter call and
// arrive at the same figure.
type Turn struct {
	Role string // "system", "user", "assistant" or "tool"
	// Name is the participant's name a chat-completions message may carry
	// (billed as prompt); the other formats have none.
	Name string
	// Text is the turn's text, joined without separator (as a translation
	// sends it, so that a byte count agrees): every meter counts it.
	Text string
	// Calls is the turn's earlier tool calls (name and arguments JSON) and
	// thinking: billed by the provider as prompt, counted by token rules
	// only.
	Calls string
	// Images counts image parts, OtherParts parts of other media. Each
	// costs the configured media units and is never fetched.
	Images, OtherParts int
}

// TurnWriter gathers a Turn while a format reads the turn's parts.
type TurnWriter struct {
	turn        Turn
	text, calls strings.Builder
}

// NewTurnWriter starts a turn of role.
func NewTurnWriter(role string) *TurnWriter { return &TurnWriter{turn: Turn{Role: role}} }

// Text adds text the turn says.
func (w *TurnWriter) Text(s string) { w.text.WriteString(s) }

// JSON adds a JSON value the turn says (a tool's result object), compacted.
func (w *TurnWriter) JSON(raw json.RawMessage) { w.text.Write(Compact(raw)) }

// Call adds an earlier tool call: its name and its arguments, compacted.
func (w *TurnWriter) Call(name string, args json.RawMessage) {
	w.calls.WriteString(name)
	w.calls.Write(Compact(args))
}

// Thinking adds text the model thought.
func (w *TurnWriter) Thinking(s string) { w.calls.WriteString(s) }

// Media counts a media part: an image, or media of another kind.
func (w *TurnWriter) Media(image bool) {
	if image {
		w.turn.Images++
	} else {
		w.turn.OtherParts++
	}
}

// Turn is the turn gathered.
func (w *TurnWriter) Turn() Turn {
	t := w.turn
	t.Text, t.Calls = w.text.String(), w.calls.String()
	return t
}
