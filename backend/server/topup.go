package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"

	"github.com/quotagate/quotagate/backend/config"
	"github.com/quotagate/quotagate/backend/gateway"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/meter"
	"github.com/quotagate/quotagate/backend/openai"
	"github.com/quotagate/quotagate/backend/quota"
)

// topUpSpends reports whether some guarded model's nightly top-up spends for
// real (enabled and not a dry run), which needs the system tenant.
func topUpSpends(cfg *config.Config) bool {
	for _, u := range cfg.Upstreams {
		if q := u.Quota; q != nil && q.TopUp.Enabled && !q.TopUp.DryRun {
			return true
		}
	}
	return false
}

// addTopUpTenant adds the system tenant whose runs are the top-up's filler
// calls: admitted, metered and settled like any call, so their usage counts
// in the quota day. Its key lives in the data dir and is never printed.
func (s *Server) addTopUpTenant() error {
	id := quota.DefaultTopUpTenant
	for _, t := range s.tenants {
		if t.ID == id {
			return fmt.Errorf("tenant id %q is reserved for the quota top-up job; rename that tenant", id)
		}
	}
	key, err := loadOrCreateSecret(filepath.Join(s.opts.DataDir, keysDir, id+".key"), tenantKey(id))
	if err != nil {
		return fmt.Errorf("key of the top-up tenant: %w", err)
	}
	s.topUpKey = key
	// Budgets never reset: the quota guard, not this budget, bounds the job.
	s.tenants = append(s.tenants, config.Tenant{ID: id, KeyHashes: []string{ledger.HashKey(key)},
		BudgetUnits: ledger.MaxUnits, MaxConcurrent: 1})
	return nil
}

// topUpCaller makes the top-up's filler calls through quotagate's own /v1
// endpoint on loopback, so each is gated by the ledger and the quota guard
// like a user's call. It implements quota.Caller.
type topUpCaller struct {
	base    string // e.g. http://127.0.0.1:8787
	key     string
	meter   meter.Meter
	reserve meter.ReservePolicy
	prompts map[string]string // upstream → filler prompt
	client  *http.Client
}

// Call sends one filler call whose reserve is at most maxUnits and returns
// what it spent: the larger of the ledger's settlement and the provider's
// reported total (the gateway settles at most the reserve).
func (c topUpCaller) Call(ctx context.Context, upstream, model string, maxUnits ledger.Units) (ledger.Units, error) {
	body, err := c.body(upstream, model, maxUnits)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, "POST", c.base+"/v1/chat/completions", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("top-up call to %s: %w", model, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return 0, fmt.Errorf("top-up call to %s: read answer: %w", model, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error struct{ Message, Code string }
		}
		if json.Unmarshal(b, &e) == nil && e.Error.Code != "" {
			return 0, &ledger.Error{Code: e.Error.Code, Message: e.Error.Message}
		}
		return 0, fmt.Errorf("top-up call to %s: HTTP %d", model, resp.StatusCode)
	}
	var answer struct {
		Usage struct {
			TotalTokens ledger.Units `json:"total_tokens"`
		} `json:"usage"`
	}
	_ = json.Unmarshal(b, &answer) // the ledger's figure below is the one that must exist
	run, err := c.run(ctx, resp.Header.Get("X-Run-Id"))
	if err != nil {
		return 0, err
	}
	return max(run.SpentUnits, run.HeldUnits, answer.Usage.TotalTokens), nil
}

// body builds a filler request whose reserve (input + output cap, at least
// the reasoning floor) fits maxUnits.
func (c topUpCaller) body(upstream, model string, maxUnits ledger.Units) ([]byte, error) {
	messages := []map[string]string{{"role": "user", "content": c.prompts[upstream]}}
	probe, err := json.Marshal(map[string]any{"model": model, "messages": messages, "max_tokens": 1})
	if err != nil {
		return nil, err
	}
	req, err := openai.ParseChatRequest(probe)
	if err != nil {
		return nil, err
	}
	input, _ := c.reserve.Reserve(c.meter, gateway.ChatMeterRequest(req))
	out := maxUnits - input
	if c.reserve.IsReasoning(model) && out < c.reserve.ReasoningFloorUnits || out < 1 {
		return nil, ledger.Errorf(ledger.CodeInvalidRequest, "a top-up call of %d units cannot fit the prompt (%d) and the output floor", maxUnits, input)
	}
	return json.Marshal(map[string]any{"model": model, "messages": messages, "max_tokens": out, "stream": false})
}

func (c topUpCaller) run(ctx context.Context, id string) (ledger.Run, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", c.base+"/v1/runs/"+id, nil)
	if err != nil {
		return ledger.Run{}, err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	resp, err := c.client.Do(req)
	if err != nil {
		return ledger.Run{}, fmt.Errorf("top-up run %s: %w", id, err)
	}
	defer resp.Body.Close()
	var run ledger.Run
	if resp.StatusCode != http.StatusOK {
		return run, fmt.Errorf("top-up run %s: HTTP %d", id, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&run); err != nil {
		return run, fmt.Errorf("top-up run %s: %w", id, err)
	}
	return run, nil
}
