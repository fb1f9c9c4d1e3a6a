package quota

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/quotagate/quotagate/backend/ledger"
)

// ChatSender sends one non-streaming chat completion request body to
// quotagate's own /v1 as the top-up tenant. The server backs it with the
// upstream package's client pointed at the gateway on loopback, so that the
// filler calls have the one outbound HTTP client every call has.
type ChatSender interface {
	SendChat(ctx context.Context, body []byte) (ChatAnswer, error)
}

// ChatAnswer is what the gateway answered a filler call.
type ChatAnswer struct {
	Status int
	RunID  ledger.RunID // the X-Run-Id header
	Body   []byte
}

// RunReader reads a run back from the ledger (ledger.Store implements it).
type RunReader interface {
	Run(ctx context.Context, id ledger.RunID) (ledger.Run, error)
}

// FillerCaller is the top-up's Caller: each filler call is a chat completion
// sent through the gateway, so it is admitted, gated by the quota guard,
// metered and settled like a user's call; what it spent is read back from the
// ledger.
type FillerCaller struct {
	Chat    ChatSender
	Runs    RunReader
	Prompts map[string]string // upstream → the filler call's user message
	// Reserve is the gateway's reserve rule for a one-message request: the
	// prompt's input units, and the least output the model must be allowed
	// (the reasoning floor for a reasoning model, else 1).
	Reserve func(model, prompt string) (input, outputFloor ledger.Units)
}

var _ Caller = FillerCaller{}

// Call sends one filler call whose reserve is at most maxUnits and returns
// what it spent: the largest of the ledger's settlement (overrun included),
// a hold it kept, and the provider's reported total.
func (c FillerCaller) Call(ctx context.Context, upstream, model string, maxUnits ledger.Units) (ledger.Units, error) {
	body, err := c.body(upstream, model, maxUnits)
	if err != nil {
		return 0, err
	}
	ans, err := c.Chat.SendChat(ctx, body)
	if err != nil {
		return 0, fmt.Errorf("top-up call to %s: %w", model, err)
	}
	if ans.Status != 200 { // http.StatusOK
		var e struct {
			Error struct{ Message, Code string }
		}
		if json.Unmarshal(ans.Body, &e) == nil && e.Error.Code != "" {
			return 0, &ledger.Error{Code: e.Error.Code, Message: e.Error.Message}
		}
		return 0, fmt.Errorf("top-up call to %s: HTTP %d", model, ans.Status)
	}
	var answer struct {
		Usage struct {
			TotalTokens ledger.Units `json:"total_tokens"`
		} `json:"usage"`
	}
	_ = json.Unmarshal(ans.Body, &answer) // the ledger's figure below is the one that must exist
	run, err := c.Runs.Run(ctx, ans.RunID)
	if err != nil {
		return 0, fmt.Errorf("top-up run %s: %w", ans.RunID, err)
	}
	return max(run.SpentUnits+run.OverrunUnits, run.HeldUnits, answer.Usage.TotalTokens), nil
}

// body builds a filler request whose reserve (input + output cap, at least
// the output floor) fits maxUnits.
func (c FillerCaller) body(upstream, model string, maxUnits ledger.Units) ([]byte, error) {
	prompt := c.Prompts[upstream]
	input, floor := c.Reserve(model, prompt)
	out := maxUnits - input
	if out < max(floor, 1) {
		return nil, ledger.Errorf(ledger.CodeInvalidRequest,
			"a top-up call of %d units cannot fit the prompt (%d) and the output floor (%d)", maxUnits, input, floor)
	}
	return json.Marshal(map[string]any{"model": model, "stream": false, "max_tokens": out,
		"messages": []map[string]string{{"role": "user", "content": prompt}}})
}
