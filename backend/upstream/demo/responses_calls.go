package demo

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/quotagate/quotagate/backend/openai"
	"github.com/quotagate/quotagate/backend/wire"
)

// Scripted function calls (Plan.Call), for chat completions and the
// Responses API alike.

// AckPrefix starts the demo's text answer to a conversation that ends with a
// function's output: the output follows, so a round trip shows it arrived.
const AckPrefix = "The demo received the function output: "

// toolResult returns the content of the last message when it is a tool's.
func (c *chatRequest) toolResult() (string, bool) {
	if n := len(c.Messages); n > 0 && c.Messages[n-1].Role == "tool" {
		var s string
		_ = json.Unmarshal(c.Messages[n-1].Content, &s)
		return s, true
	}
	return "", false
}

// funcOutput is the function output the conversation ends with, if any.
func (x *exchange) funcOutput() (string, bool) {
	switch {
	case x.resp != nil:
		return x.resp.callOutput()
	case x.msg != nil:
		return x.msg.toolResult()
	case x.gem != nil:
		return x.gem.functionResponse()
	}
	return x.req.toolResult()
}

// calling reports whether this answer is the scripted function call.
func (x *exchange) calling() bool {
	if x.plan.Call == "" {
		return false
	}
	_, answered := x.funcOutput()
	return !answered
}

func (x *exchange) args() string {
	if x.plan.Args == "" {
		return "{}"
	}
	return x.plan.Args
}

// text is the answer's text: the plan's, or the acknowledgement of a
// function output when the plan scripts a call that was already answered.
func (x *exchange) text() string {
	if out, ok := x.funcOutput(); ok && x.plan.Call != "" {
		return AckPrefix + out
	}
	return x.plan.text()
}

func (x *exchange) parts() []string {
	if _, ok := x.funcOutput(); ok && x.plan.Call != "" {
		return split(x.text(), x.plan.Chunks)
	}
	return x.plan.parts()
}

// output is the text the answer's usage counts: the text, or for a call
// what each protocol streams as its output — in chat the function's name
// and arguments (both are deltas), in the Responses API the arguments (the
// name comes in the item, not as a delta).
func (x *exchange) output() string {
	switch {
	case !x.calling():
		return x.text()
	case x.resp != nil:
		return x.args()
	case x.gem != nil:
		return x.plan.Call + string(wire.Compact(json.RawMessage(x.args()))) // a call comes whole, compacted
	}
	return x.plan.Call + x.args()
}

// argParts cuts the arguments in two, as providers stream them in pieces.
func (x *exchange) argParts() []string {
	a := x.args()
	return split(a, min(2, len([]rune(a))))
}

func (x *exchange) callID() string { return fmt.Sprintf("call_demo_%d", x.rec.Seq) }

func (x *exchange) toolCall(args string) openai.ToolCallJSON {
	var tc openai.ToolCallJSON
	tc.ID, tc.Type = x.callID(), "function"
	tc.Function.Name, tc.Function.Arguments = x.plan.Call, args
	return tc
}

// streamCall streams the scripted call as chat-completions deltas: the
// call's id and name, then its arguments in pieces, finish_reason
// "tool_calls", the usage and [DONE] — or a cut after Plan.CutAfter pieces.
func (x *exchange) streamCall(created int64, includeUsage bool) {
	zero := 0
	call := x.toolCall("")
	call.Index = &zero
	head := &openai.DeltaJSON{Role: "assistant", ToolCalls: []openai.ToolCallJSON{call}}
	args := func(part string) *openai.DeltaJSON {
		var tc openai.ToolCallJSON
		tc.Index, tc.Function.Arguments = &zero, part
		return &openai.DeltaJSON{ToolCalls: []openai.ToolCallJSON{tc}}
	}
	if !x.streamDeltas(created, includeUsage, head, x.argParts(), args, "tool_calls") {
		return
	}
	x.end(created, includeUsage)
}

// callOutput is the output of the last input item when it is a
// *_call_output.
func (r *responsesRequest) callOutput() (string, bool) {
	if n := len(r.Input); n > 0 && strings.HasSuffix(r.Input[n-1].Type, "_call_output") {
		return r.Input[n-1].outputText(), true
	}
	return "", false
}
