package anthropic

import (
	"encoding/json"

	"github.com/quotagate/quotagate/backend/wire"
)

// Turn is a prompt turn of a Messages request, in the shape the meter
// counts. Under utf8-bytes-v1 the meter counts Text (and media): the UTF-8
// bytes of system text, of every message's text blocks and of tool_result
// text — tools and thinking are not counted, since each provider counts
// those its own way. Under tiktoken it also counts each turn's role and
// framing, Calls and ToolsJSON. Images counts image blocks (also inside
// tool results), OtherParts blocks of other types (documents, search
// results, …).
type Turn = wire.Turn

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
	w := wire.NewTurnWriter(role)
	for _, b := range blocks {
		switch b.Type {
		case BlockText:
			w.Text(b.Text)
		case BlockToolResult:
			w.Text(b.Text)
			for _, c := range b.Content {
				if c.Type != BlockText {
					w.Media(c.Type == BlockImage)
				}
			}
		case BlockToolUse:
			w.Call(b.Name, b.Input)
		case BlockThinking:
			w.Thinking(b.Text)
		case BlockRedactedThinking:
			// Opaque to every meter; the provider decrypts and bills it.
		default:
			w.Media(b.Type == BlockImage)
		}
	}
	return w.Turn()
}

// ToolsJSON is the tool definitions as one JSON array — what a provider
// bills as prompt under token rules — or nil without tools.
func (r *Request) ToolsJSON() []byte {
	return wire.CompactArray(r.Tools, func(t Tool) json.RawMessage { return t.Raw })
}
