package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/quotagate/quotagate/backend/wire"
)

// Tally reads a native Messages event stream, event by event, and gathers
// what the gateway relayed and the usage evidence:
//
//   - input: message_start's usage.input_tokens + cache_creation_input_tokens
//   - cache_read_input_tokens (its output_tokens is a placeholder, never
//     counted), as raised by a later message_delta that repeats them
//     cumulatively;
//   - output: the last message_delta's usage.output_tokens, which is
//     cumulative (deltas are never added);
//   - the end marker: message_stop.
//
// A message_delta whose input figures are below message_start's, an
// output count that goes down, a second message_start, a delta for a block
// that was never started, data after message_stop, an event name that is
// not its data's type, an error event: each is a problem, and a problem
// keeps the hold. The zero value is ready; not safe for concurrent use.
type Tally struct {
	started, stopped bool
	startUsage       *Usage
	output           int64
	deltas           int
	text             strings.Builder
	blocks           map[int]bool // started blocks; true while open
	problem          wire.Problem
	// UpstreamError is the message of an error event the upstream sent.
	UpstreamError string
	// StopReason is the last message_delta's stop_reason.
	StopReason string
}

// Event types of a Messages stream.
const (
	EventMessageStart      = "message_start"
	EventContentBlockStart = "content_block_start"
	EventContentBlockDelta = "content_block_delta"
	EventContentBlockStop  = "content_block_stop"
	EventMessageDelta      = "message_delta"
	EventMessageStop       = "message_stop"
	EventPing              = "ping"
	EventError             = "error"
)

type wireEvent struct {
	Type    string `json:"type"`
	Message *struct {
		Usage *wireUsageIn `json:"usage"`
	} `json:"message"`
	Index        *int `json:"index"`
	ContentBlock *struct {
		Type     string  `json:"type"`
		Text     *string `json:"text"`
		Thinking *string `json:"thinking"`
		Name     string  `json:"name"`
	} `json:"content_block"`
	Delta *struct {
		Type        string  `json:"type"`
		Text        *string `json:"text"`
		Thinking    *string `json:"thinking"`
		PartialJSON *string `json:"partial_json"`
		StopReason  *string `json:"stop_reason"`
	} `json:"delta"`
	Usage *wireUsageIn `json:"usage"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// Observe takes one complete event as relayed: its SSE event name ("" when
// none was given) and data. It returns the data's type. An error means the
// event says something the tally cannot account for; it is recorded and
// the verdict will keep the hold.
func (t *Tally) Observe(name string, data []byte) (string, error) {
	d := bytes.TrimSpace(data)
	if len(d) == 0 {
		return "", nil
	}
	var e wireEvent
	if d[0] != '{' || json.Unmarshal(d, &e) != nil || e.Type == "" {
		return "", t.problem.Fail("an event's data is not a typed JSON object: %.60q", d)
	}
	if name != "" && name != e.Type {
		return e.Type, t.problem.Fail("an event named %q carries data of type %q", name, e.Type)
	}
	if t.stopped {
		return e.Type, t.problem.Fail("a %s event arrived after message_stop", e.Type)
	}
	if t.blocks == nil {
		t.blocks = map[int]bool{}
	}
	var err error
	switch e.Type {
	case EventError:
		err = t.upstreamError(&e)
	case EventMessageStart:
		err = t.messageStart(&e)
	case EventContentBlockStart:
		err = t.blockStart(&e)
	case EventContentBlockDelta:
		err = t.blockDelta(&e)
	case EventContentBlockStop:
		if e.Index == nil || !t.blocks[*e.Index] {
			err = t.problem.Fail("content_block_stop for a block that is not open")
		} else {
			t.blocks[*e.Index] = false
		}
	case EventMessageDelta:
		err = t.messageDelta(&e)
	case EventMessageStop:
		if !t.started {
			err = t.problem.Fail("message_stop before message_start")
		}
		t.stopped = err == nil
	}
	return e.Type, err
}

func (t *Tally) upstreamError(e *wireEvent) error {
	msg := "(no message)"
	if e.Error != nil && e.Error.Message != "" {
		msg = e.Error.Message
	}
	t.UpstreamError = msg
	return t.problem.Fail("the upstream sent an error event: %s", msg)
}

func (t *Tally) messageStart(e *wireEvent) error {
	if t.started {
		return t.problem.Fail("a second message_start")
	}
	t.started = true
	if e.Message == nil || e.Message.Usage == nil {
		return nil // no usage: the verdict says so
	}
	u, _, err := e.Message.Usage.input(true)
	if err != nil {
		return t.problem.Fail("message_start: %v", err)
	}
	t.startUsage = &u
	return nil
}

func (t *Tally) blockStart(e *wireEvent) error {
	if !t.started || e.Index == nil || e.ContentBlock == nil {
		return t.problem.Fail("content_block_start before message_start or without index and block")
	}
	if _, seen := t.blocks[*e.Index]; seen {
		return t.problem.Fail("content block %d started twice", *e.Index)
	}
	t.blocks[*e.Index] = true
	cb := e.ContentBlock
	switch {
	case cb.Text != nil:
		t.text.WriteString(*cb.Text)
	case cb.Thinking != nil:
		t.text.WriteString(*cb.Thinking)
	}
	t.text.WriteString(cb.Name) // a tool_use's name is generated text
	return nil
}

func (t *Tally) blockDelta(e *wireEvent) error {
	if e.Index == nil || !t.blocks[*e.Index] || e.Delta == nil {
		return t.problem.Fail("a delta for a content block that is not open")
	}
	for _, s := range []*string{e.Delta.Text, e.Delta.Thinking, e.Delta.PartialJSON} {
		if s != nil {
			t.text.WriteString(*s)
		}
	}
	return nil
}

// messageDelta takes the stop reason and the cumulative usage: the output
// may only grow, and the input figures may only be repeated or raised.
func (t *Tally) messageDelta(e *wireEvent) error {
	if !t.started {
		return t.problem.Fail("message_delta before message_start")
	}
	if e.Delta != nil && e.Delta.StopReason != nil {
		t.StopReason = *e.Delta.StopReason
	}
	if e.Usage == nil {
		return t.problem.Fail("message_delta without usage")
	}
	out, err := requiredOutput(e.Usage)
	if err != nil {
		return t.problem.Fail("message_delta: %v", err)
	}
	if t.deltas > 0 && out < t.output {
		return t.problem.Fail("message_delta's cumulative output_tokens went down from %d to %d", t.output, out)
	}
	in, have, err := e.Usage.input(false)
	if err != nil {
		return t.problem.Fail("message_delta: %v", err)
	}
	if err := t.raiseInput(in, have); err != nil {
		return err
	}
	t.output = out
	t.deltas++
	return nil
}

// raiseInput takes the input figures a message_delta repeats. They are
// cumulative too: a message_delta may repeat them or raise them (server
// tools read more; a translating gateway learns the prompt only at the
// end), never lower them.
func (t *Tally) raiseInput(in Usage, have [3]bool) error {
	s := t.startUsage
	if s == nil {
		return nil
	}
	pairs := [3][2]*int64{{&in.InputTokens, &s.InputTokens},
		{&in.CacheCreationInputTokens, &s.CacheCreationInputTokens}, {&in.CacheReadInputTokens, &s.CacheReadInputTokens}}
	for i, pair := range pairs {
		if have[i] && *pair[0] < *pair[1] {
			return t.problem.Fail("message_delta's input figures (%d, %d, %d) contradict message_start's (%d, %d, %d)",
				in.InputTokens, in.CacheCreationInputTokens, in.CacheReadInputTokens,
				s.InputTokens, s.CacheCreationInputTokens, s.CacheReadInputTokens)
		}
	}
	for i, pair := range pairs {
		if have[i] {
			*pair[1] = *pair[0]
		}
	}
	return nil
}

// Output is the generated text relayed so far: text, thinking, tool names
// and tool input JSON.
func (t *Tally) Output() string { return t.text.String() }

// Stopped reports whether message_stop arrived.
func (t *Tally) Stopped() bool { return t.stopped }

// Problem is the first thing the stream said that cannot be accounted for,
// or "".
func (t *Tally) Problem() string { return t.problem.String() }

// Usage returns the stream's usage: message_start's input figures and the
// final cumulative output_tokens; ok is false until both arrived.
func (t *Tally) Usage() (Usage, bool) {
	if t.startUsage == nil || t.deltas == 0 {
		return Usage{}, false
	}
	u := *t.startUsage
	u.OutputTokens = t.output
	return u, true
}

// Answer is what a whole (non-streaming) Messages response says.
type Answer struct {
	// Text is the generated text: text, thinking, tool names and the
	// compact JSON of tool inputs.
	Text       string
	Usage      *Usage // nil when the body has none
	StopReason string
}

// ParseMessage parses a non-streaming Messages response body. A usage
// object that is present but not evidence gives an error wrapping
// ErrBadUsage, with the text.
func ParseMessage(body []byte) (Answer, error) {
	var w struct {
		Type    string `json:"type"`
		Content []struct {
			Type     string          `json:"type"`
			Text     *string         `json:"text"`
			Thinking *string         `json:"thinking"`
			Name     string          `json:"name"`
			Input    json.RawMessage `json:"input"`
		} `json:"content"`
		StopReason *string      `json:"stop_reason"`
		Usage      *wireUsageIn `json:"usage"`
	}
	d := bytes.TrimSpace(body)
	if len(d) == 0 || d[0] != '{' {
		return Answer{}, fmt.Errorf("anthropic: message body is not a JSON object")
	}
	if err := json.Unmarshal(d, &w); err != nil {
		return Answer{}, fmt.Errorf("anthropic: message body: %w", err)
	}
	if w.Type != "message" {
		return Answer{}, fmt.Errorf("anthropic: message body has type %q", w.Type)
	}
	var a Answer
	var text strings.Builder
	for _, c := range w.Content {
		switch {
		case c.Text != nil:
			text.WriteString(*c.Text)
		case c.Thinking != nil:
			text.WriteString(*c.Thinking)
		}
		if c.Type == BlockToolUse {
			text.WriteString(c.Name)
			text.Write(wire.Compact(c.Input))
		}
	}
	a.Text = text.String()
	if w.StopReason != nil {
		a.StopReason = *w.StopReason
	}
	if w.Usage == nil {
		return a, nil
	}
	u, _, err := w.Usage.input(true)
	if err != nil {
		return a, err
	}
	if u.OutputTokens, err = requiredOutput(w.Usage); err != nil {
		return a, err
	}
	a.Usage = &u
	return a, nil
}
