package anthropic

import (
	"encoding/json"
	"strings"

	"github.com/quotagate/quotagate/backend/wire"
)

// Turn is one prompt turn with its text flattened, in the shape the meter
// counts (meter.Message). Admission (the reserve's input part) and POST
// /v1/messages/count_tokens both count a request's Turns and ToolsJSON with
// the same meter call, so the two figures are equal for the same body.
//
// Under utf8-bytes-v1 the meter counts Text (and media): the UTF-8 bytes of
// system text, of every message's text blocks and of tool_result text —
// tools and thinking are not counted, since each provider counts those its
// own way. Under tiktoken it also
// counts each turn's role and framing, Calls and ToolsJSON.
type Turn struct {
	Role string // "system" for the system prompt and role-system turns
	// Text is the turn's text blocks and tool_result text, joined without
	// separator (as a translation sends them, so a byte count agrees).
	Text string
	// Calls is the turn's earlier tool calls (name and input JSON) and
	// thinking: billed by the provider as prompt, counted by token rules.
	Calls string
	// Images counts image blocks (also inside tool results); OtherParts
	// blocks of other types (documents, search results, …). Each costs the
	// configured media units and is never fetched.
	Images, OtherParts int
}

// Turns returns the system prompt (when there is one) as a first "system"
// turn, then every user and assistant turn.
func (r *Request) Turns() []Turn {
	out := make([]Turn, 0, len(r.Messages)+1)
	if len(r.System) > 0 {
		out = append(out, flatten("system", r.System))
	}
	for _, m := range r.Messages {
		out = append(out, flatten(m.Role, m.Content))
	}
	return out
}

func flatten(role string, blocks []Block) Turn {
	t := Turn{Role: role}
	var text, calls strings.Builder
	for _, b := range blocks {
		switch b.Type {
		case BlockText:
			text.WriteString(b.Text)
		case BlockToolResult:
			text.WriteString(b.Text)
			for _, c := range b.Content {
				switch c.Type {
				case BlockText:
				case BlockImage:
					t.Images++
				default:
					t.OtherParts++
				}
			}
		case BlockToolUse:
			calls.WriteString(b.Name)
			calls.Write(wire.Compact(b.Input))
		case BlockThinking:
			calls.WriteString(b.Text)
		case BlockRedactedThinking:
			// Opaque to every meter; the provider decrypts and bills it.
		case BlockImage:
			t.Images++
		default:
			t.OtherParts++
		}
	}
	t.Text, t.Calls = text.String(), calls.String()
	return t
}

// ToolsJSON is the tool definitions as one JSON array — what a provider
// bills as prompt under token rules — or nil without tools.
func (r *Request) ToolsJSON() []byte {
	return wire.CompactArray(r.Tools, func(t Tool) json.RawMessage { return t.Raw })
}
