package gemini

import (
	"encoding/json"
	"strings"

	"github.com/quotagate/quotagate/backend/wire"
)

// Turn is one prompt turn with its text flattened, in the shape the meter
// counts (meter.Message). Admission (the reserve's input part) and
// :countTokens both count a request's Turns and ToolsJSON with the same
// meter call, so the two figures are equal for the same body.
type Turn struct {
	Role string // "system", "user" or "assistant" (Gemini's "model")
	// Text is the turn's text parts (thoughts left out) and its function
	// responses as compact JSON, joined without separator (as a translation
	// sends them, so a byte count agrees).
	Text string
	// Calls is the turn's earlier function calls (name and args JSON) and
	// thought text: billed as prompt, counted by token rules only.
	Calls string
	// Images counts image parts; OtherParts every other inline, file or
	// unknown part. Each costs the configured media units, never fetched.
	Images, OtherParts int
}

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
	t := Turn{Role: role}
	var text, calls strings.Builder
	for _, p := range parts {
		switch p.Kind {
		case PartText:
			if p.Thought {
				calls.WriteString(p.Text)
			} else {
				text.WriteString(p.Text)
			}
		case PartFunctionResponse:
			text.Write(wire.Compact(p.Response))
		case PartFunctionCall:
			calls.WriteString(p.Name)
			calls.Write(wire.Compact(p.Args))
		case PartInlineData, PartFileData:
			if p.Image() {
				t.Images++
			} else {
				t.OtherParts++
			}
		default:
			t.OtherParts++
		}
	}
	t.Text, t.Calls = text.String(), calls.String()
	return t
}

// ToolsJSON is the function declarations as one JSON array — what a
// provider bills as prompt under token rules — or nil without tools.
func (r *Request) ToolsJSON() []byte {
	return wire.CompactArray(r.Tools, func(t Tool) json.RawMessage { return t.Raw })
}
