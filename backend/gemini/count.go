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
		out = append(out, flatten("system", r.System.Parts))
	}
	for _, c := range r.Contents {
		role := c.Role
		if role == "model" {
			role = "assistant"
		}
		out = append(out, flatten(role, c.Parts))
	}
	return out
}

func flatten(role string, parts []Part) Turn {
	w := wire.NewTurnWriter(role)
	for _, p := range parts {
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
		case PartInlineData, PartFileData:
			if p.Image() {
				w.Image()
			} else {
				w.Other()
			}
		default:
			w.Other()
		}
	}
	return w.Turn()
}

// ToolsJSON is the function declarations as one JSON array — what a
// provider bills as prompt under token rules — or nil without tools.
func (r *Request) ToolsJSON() []byte {
	return wire.CompactArray(r.Tools, func(t Tool) json.RawMessage { return t.Raw })
}
