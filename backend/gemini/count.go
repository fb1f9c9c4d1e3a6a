package gemini

import (
	"encoding/json"

	"github.com/quotagate/quotagate/backend/wire"
)

// Turn is a prompt turn of a generateContent request, in the shape the
// meter counts: Role is "system", "user" or "assistant" (Gemini's
// "model"); Text the turn's text parts (thoughts left out) and its function
// responses as compact JSON; Calls its earlier function calls and thought
// text. Images counts image parts, OtherParts every other inline, file or
// unknown part.
type Turn = wire.Turn

// Turns returns the system instruction (when there is one) as a first
// "system" turn, then every turn.
func (r *Request) Turns() []Turn {
	out := make([]Turn, 0, len(r.Contents)+1)
	if r.System != nil {
		out = append(out, r.System.turn())
	}
	for _, c := range r.Contents {
		out = append(out, c.turn())
	}
	return out
}

// turn is the content in the shape the meter counts; Gemini's "model" is
// the assistant, and a system instruction's role is already "system".
func (c Content) turn() Turn {
	role := c.Role
	if role == "model" {
		role = "assistant"
	}
	w := wire.NewTurnWriter(role)
	for _, p := range c.Parts {
		switch p.Kind {
		case PartText:
			if p.Thought {
				w.Thinking(p.Text)
			} else {
				w.Text(p.Text)
			}
		case PartFunctionResponse:
			w.JSON(p.Response)
		case PartFunctionCall:
			w.Call(p.Name, p.Args)
		default:
			// Inline and file data by their MIME type; a part of another
			// kind (executableCode, …) has none and counts as other media.
			w.Media(p.Image())
		}
	}
	return w.Turn()
}

// ToolsJSON is the function declarations as one JSON array — what a
// provider bills as prompt under token rules — or nil without tools.
func (r *Request) ToolsJSON() []byte {
	return wire.CompactArray(r.Tools, func(t Tool) json.RawMessage { return t.Raw })
}
