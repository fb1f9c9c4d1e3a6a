package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/quotagate/quotagate/backend/config"
	"github.com/quotagate/quotagate/backend/gateway"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/meter"
	"github.com/quotagate/quotagate/backend/openai"
	"github.com/quotagate/quotagate/backend/quota"
	"github.com/quotagate/quotagate/backend/upstream"
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

// newFillerCaller makes the top-up's filler calls through quotagate's own
// /v1 on loopback with the upstream package's client (the one outbound HTTP
// client), as the top-up tenant, so each is gated by the ledger and the
// quota guard like a user's call; quota.FillerCaller does the rest.
func newFillerCaller(p parts, m meter.Meter, reserve meter.ReservePolicy, prompts map[string]string) (quota.Caller, error) {
	c, err := upstream.New(upstream.Options{Name: "quotagate-topup", BaseURL: p.URL + "/v1", APIKey: p.TopUpKey,
		ResponseHeaderTimeout: upstreamTimeout(p.Config.Limits) + time.Minute}) // non-streaming: headers come at the end
	if err != nil {
		return nil, fmt.Errorf("top-up client: %w", err)
	}
	return quota.FillerCaller{Chat: loopback{c}, Runs: p.Store, Prompts: prompts,
		Reserve: func(model, prompt string) (ledger.Units, ledger.Units) {
			probe, _ := json.Marshal(map[string]any{"model": model, "max_tokens": 1,
				"messages": []map[string]string{{"role": "user", "content": prompt}}})
			req, err := openai.ParseChatRequest(probe)
			if err != nil {
				return ledger.MaxUnits, 0 // cannot happen for a marshalled request; fits no call
			}
			input, _ := reserve.Reserve(m, gateway.ChatMeterRequest(req))
			if reserve.IsReasoning(model) {
				return input, reserve.ReasoningFloorUnits
			}
			return input, 1
		}}, nil
}

// loopback adapts the upstream client to quota.ChatSender.
type loopback struct{ c *upstream.Client }

func (l loopback) SendChat(ctx context.Context, body []byte) (quota.ChatAnswer, error) {
	resp, err := l.c.Send(ctx, body, nil)
	if err != nil {
		return quota.ChatAnswer{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return quota.ChatAnswer{}, fmt.Errorf("read answer: %w", err)
	}
	return quota.ChatAnswer{Status: resp.StatusCode, RunID: ledger.RunID(resp.Header.Get("X-Run-Id")), Body: b}, nil
}
