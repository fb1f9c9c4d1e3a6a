package responses

import "github.com/quotagate/quotagate/backend/wire"

// Segment is one piece of a request's input as a meter counts it, in the
// shape of a chat message: instructions are a system segment, a message its
// own role, a *_call_output a tool segment, an earlier call an assistant
// segment with Calls (names and arguments of earlier function and custom
// tool calls). Every meter counts Text; only the tiktoken rule adds Calls,
// the tool definitions (Request.ToolsJSON) and the per-message overhead.
// Under utf8-bytes-v1 that leaves exactly the UTF-8 bytes of instructions,
// message text parts and *_call_output, the text a person wrote and a
// provider bills as prompt; tools, arguments and reasoning are not counted.
// Images counts input_image parts, OtherParts input_file parts: never
// fetched to be measured, reserved at a configured figure each.
type Segment = wire.Turn

// Segments returns the input to count, in order. Reasoning items are left
// out: their text is the provider's own, and encrypted_content is opaque.
func (r *Request) Segments() []Segment {
	var out []Segment
	if r.Instructions != "" {
		out = append(out, Segment{Role: "system", Text: r.Instructions})
	}
	for _, it := range r.Input {
		switch {
		case it.Type == "message":
			s := Segment{Role: it.Role, Text: it.Text()}
			s.Images, s.OtherParts = media(it.Parts)
			out = append(out, s)
		case it.IsCallOutput():
			s := Segment{Role: "tool", Text: it.Output}
			s.Images, s.OtherParts = media(it.Parts)
			out = append(out, s)
		case it.Type == "function_call" || it.Type == "custom_tool_call":
			out = append(out, Segment{Role: "assistant", Calls: it.Name + it.Arguments})
		}
	}
	return out
}

func media(parts []Part) (images, other int) {
	for _, p := range parts {
		switch p.Type {
		case "input_image":
			images++
		case "input_file":
			other++
		}
	}
	return images, other
}
