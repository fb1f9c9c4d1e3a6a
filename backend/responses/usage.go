package responses

import (
	"encoding/json"
	"fmt"

	"github.com/quotagate/quotagate/backend/wire"
)

// Usage is the usage object of a final Responses event.
type Usage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"` // includes ReasoningTokens
	TotalTokens  int64 `json:"total_tokens"`
	// CachedTokens (input_tokens_details.cached_tokens) is part of
	// InputTokens; kept on the run for the dashboard.
	CachedTokens    int64 `json:"cached_tokens"`
	ReasoningTokens int64 `json:"reasoning_tokens"` // output_tokens_details.reasoning_tokens
}

// Units is what the run is charged: input + output tokens.
func (u Usage) Units() int64 { return u.InputTokens + u.OutputTokens }

type wireUsage struct {
	InputTokens        json.RawMessage `json:"input_tokens"`
	OutputTokens       json.RawMessage `json:"output_tokens"`
	TotalTokens        json.RawMessage `json:"total_tokens"`
	InputTokensDetails *struct {
		CachedTokens json.RawMessage `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokensDetails *struct {
		ReasoningTokens json.RawMessage `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
}

// ParseUsage reads a Responses usage object. It fails on a missing or
// non-integer count, a total that is not input + output, or details larger
// than the count they detail: such usage cannot be trusted.
func ParseUsage(raw json.RawMessage) (*Usage, error) {
	var w wireUsage
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &w) != nil {
		return nil, fmt.Errorf("usage is not an object")
	}
	var u Usage
	var err error
	if u.InputTokens, err = count("input_tokens", w.InputTokens, true); err != nil {
		return nil, err
	}
	if u.OutputTokens, err = count("output_tokens", w.OutputTokens, true); err != nil {
		return nil, err
	}
	if u.TotalTokens, err = count("total_tokens", w.TotalTokens, false); err != nil {
		return nil, err
	}
	if len(w.TotalTokens) > 0 && !wire.IsNull(w.TotalTokens) && u.TotalTokens != u.InputTokens+u.OutputTokens {
		return nil, fmt.Errorf("usage total_tokens %d is not input_tokens %d + output_tokens %d", u.TotalTokens, u.InputTokens, u.OutputTokens)
	}
	u.TotalTokens = u.InputTokens + u.OutputTokens
	if d := w.InputTokensDetails; d != nil {
		if u.CachedTokens, err = count("input_tokens_details.cached_tokens", d.CachedTokens, false); err != nil {
			return nil, err
		}
	}
	if d := w.OutputTokensDetails; d != nil {
		if u.ReasoningTokens, err = count("output_tokens_details.reasoning_tokens", d.ReasoningTokens, false); err != nil {
			return nil, err
		}
	}
	if u.CachedTokens > u.InputTokens || u.ReasoningTokens > u.OutputTokens {
		return nil, fmt.Errorf("usage details exceed their totals (cached %d of input %d, reasoning %d of output %d)",
			u.CachedTokens, u.InputTokens, u.ReasoningTokens, u.OutputTokens)
	}
	return &u, nil
}

func count(name string, raw json.RawMessage, required bool) (int64, error) {
	if len(raw) == 0 || wire.IsNull(raw) {
		if required {
			return 0, fmt.Errorf("usage has no %s", name)
		}
		return 0, nil
	}
	n, err := wire.Count(raw)
	if err != nil {
		return 0, fmt.Errorf("usage %s %s is not a non-negative integer", name, raw)
	}
	return n, nil
}

// usageJSON is the wire form quotagate writes (translated answers).
type usageJSON struct {
	InputTokens         int64             `json:"input_tokens"`
	InputTokensDetails  cachedDetailsJSON `json:"input_tokens_details"`
	OutputTokens        int64             `json:"output_tokens"`
	OutputTokensDetails reasonDetailsJSON `json:"output_tokens_details"`
	TotalTokens         int64             `json:"total_tokens"`
}

type cachedDetailsJSON struct {
	CachedTokens int64 `json:"cached_tokens"`
}

type reasonDetailsJSON struct {
	ReasoningTokens int64 `json:"reasoning_tokens"`
}

func (u *Usage) wire() *usageJSON {
	if u == nil {
		return nil
	}
	return &usageJSON{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, TotalTokens: u.InputTokens + u.OutputTokens,
		InputTokensDetails: cachedDetailsJSON{u.CachedTokens}, OutputTokensDetails: reasonDetailsJSON{u.ReasoningTokens}}
}
