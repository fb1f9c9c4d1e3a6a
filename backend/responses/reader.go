package responses

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/quotagate/quotagate/backend/wire"
)

// Final names how a native Responses stream ended.
type Final string

const (
	FinalNone       Final = ""                    // cut: no final event (yet)
	FinalCompleted  Final = "response.completed"  // settles on its usage
	FinalIncomplete Final = "response.incomplete" // settles on its usage, when it has one
	FinalFailed     Final = "response.failed"     // keeps the hold
	FinalError      Final = "error"               // keeps the hold
)

// Reader observes a native Responses event stream as it is relayed: the
// output text (for the trusted-usage consistency check), the usage of the
// final event, and how it ended. It never changes what is relayed.
type Reader struct {
	output     strings.Builder
	final      Final
	usage      *Usage
	responseID string
	problem    string
	errorCode  string
	open, done int // output items added and not yet done; done ones
}

// Result is what a Reader (or ParseResponse) saw.
type Result struct {
	Final      Final  `json:"final"`
	Usage      *Usage `json:"usage"`  // nil unless the final event carried a usage object that reads as trustworthy
	Output     string `json:"output"` // output text, refusals, function arguments and reasoning text relayed
	ResponseID string `json:"response_id"`
	// Problem explains why usage cannot be trusted despite a final event
	// (unreadable usage, data after the final event, a changed response id).
	Problem   string `json:"problem,omitempty"`
	ErrorCode string `json:"error_code,omitempty"` // of response.failed or an error event
	// Finished: every output item added so far is done, and one was — the
	// answer is whole unless another item follows (the finish grace's mark).
	Finished bool `json:"finished,omitempty"`
}

type wireEvent struct {
	Type     string          `json:"type"`
	Delta    *string         `json:"delta"`
	Response json.RawMessage `json:"response"`
	Code     *string         `json:"code"`
	Message  *string         `json:"message"`
}

type wireResponse struct {
	ID     string          `json:"id"`
	Status string          `json:"status"`
	Usage  json.RawMessage `json:"usage"`
	Error  *struct {
		Code string `json:"code"`
	} `json:"error"`
	Output []json.RawMessage `json:"output"`
}

// textDeltas are the events whose delta is output the provider bills.
var textDeltas = map[string]bool{
	"response.output_text.delta":             true,
	"response.refusal.delta":                 true,
	"response.function_call_arguments.delta": true,
	"response.custom_tool_call_input.delta":  true,
	"response.reasoning_text.delta":          true,
	"response.reasoning_summary_text.delta":  true,
}

// Observe reads one SSE event: its `event:` name (may be empty) and data.
// It returns an error for data that is not a Responses event; the caller
// still relays it, and the run cannot settle on a stream it could not read.
func (r *Reader) Observe(name string, data []byte) error {
	var ev wireEvent
	if err := json.Unmarshal(data, &ev); err != nil || ev.Type == "" {
		if name == "" || err != nil {
			r.setProblem("an event is not a Responses event object")
			return fmt.Errorf("responses: event %q: not an event object", name)
		}
	}
	typ := ev.Type
	if typ == "" {
		typ = name
	}
	if name != "" && typ != name {
		r.setProblem(fmt.Sprintf("event %q carries type %q", name, typ))
	}
	if r.final != FinalNone {
		r.setProblem(fmt.Sprintf("%s after %s", typ, r.final))
		return nil
	}
	switch {
	case textDeltas[typ]:
		if ev.Delta != nil {
			r.output.WriteString(*ev.Delta)
		}
	case typ == "response.output_item.added":
		r.open++
	case typ == "response.output_item.done":
		if r.open > 0 {
			r.open--
		}
		r.done++
	case typ == "response.created" || typ == "response.in_progress" || typ == "response.queued":
		r.responseIdentity(ev.Response)
	case typ == "response.completed" || typ == "response.incomplete" || typ == "response.failed":
		r.final = Final(typ)
		resp := r.responseIdentity(ev.Response)
		if resp == nil {
			r.setProblem(typ + " without a response object")
			return nil
		}
		if typ == "response.failed" {
			if resp.Error != nil {
				r.errorCode = resp.Error.Code
			}
			return nil
		}
		if len(resp.Usage) == 0 || wire.IsNull(resp.Usage) {
			return nil // no usage: the hold stays
		}
		u, err := ParseUsage(resp.Usage)
		if err != nil {
			r.setProblem(err.Error())
			return nil
		}
		r.usage = u
	case typ == "error":
		r.final = FinalError
		if ev.Code != nil {
			r.errorCode = *ev.Code
		}
	}
	return nil
}

func (r *Reader) responseIdentity(raw json.RawMessage) *wireResponse {
	if len(raw) == 0 || wire.IsNull(raw) {
		return nil
	}
	var resp wireResponse
	if json.Unmarshal(raw, &resp) != nil {
		r.setProblem("a response object does not read")
		return nil
	}
	if r.responseID == "" {
		r.responseID = resp.ID
	} else if resp.ID != r.responseID {
		r.setProblem(fmt.Sprintf("response id changed from %q to %q", r.responseID, resp.ID))
	}
	return &resp
}

func (r *Reader) setProblem(p string) {
	if r.problem == "" {
		r.problem = p
	}
}

// Result returns what was seen so far.
func (r *Reader) Result() Result {
	res := Result{Final: r.final, Usage: r.usage, Output: r.output.String(), ResponseID: r.responseID,
		Problem: r.problem, ErrorCode: r.errorCode, Finished: r.open == 0 && r.done > 0}
	if res.Problem != "" {
		res.Usage = nil
	}
	return res
}

// ParseResponse reads a whole (non-streaming) Response object: its status
// as the Final it stands for, its usage, and its output text.
func ParseResponse(body []byte) (Result, error) {
	var resp wireResponse
	if err := json.Unmarshal(body, &resp); err != nil {
		return Result{}, fmt.Errorf("responses: response object: %w", err)
	}
	res := Result{ResponseID: resp.ID}
	switch resp.Status {
	case StatusCompleted:
		res.Final = FinalCompleted
	case StatusIncomplete:
		res.Final = FinalIncomplete
	case StatusFailed:
		res.Final = FinalFailed
		if resp.Error != nil {
			res.ErrorCode = resp.Error.Code
		}
		return res, nil
	default:
		res.Problem = fmt.Sprintf("response status %q is not final", resp.Status)
		return res, nil
	}
	var b strings.Builder
	for _, raw := range resp.Output {
		var it struct {
			Type      string `json:"type"`
			Arguments string `json:"arguments"`
			Input     string `json:"input"`
			Content   []struct {
				Type    string `json:"type"`
				Text    string `json:"text"`
				Refusal string `json:"refusal"`
			} `json:"content"`
			Summary []struct {
				Text string `json:"text"`
			} `json:"summary"`
		}
		if json.Unmarshal(raw, &it) != nil {
			res.Problem = "an output item does not read"
			return res, nil
		}
		b.WriteString(it.Arguments)
		b.WriteString(it.Input)
		for _, s := range it.Summary {
			b.WriteString(s.Text)
		}
		for _, c := range it.Content {
			b.WriteString(c.Text)
			b.WriteString(c.Refusal)
		}
	}
	res.Output = b.String()
	if len(resp.Usage) > 0 && !wire.IsNull(resp.Usage) {
		u, err := ParseUsage(resp.Usage)
		if err != nil {
			res.Problem = err.Error()
		} else {
			res.Usage = u
		}
	}
	return res, nil
}
