package anthropic

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/quotagate/quotagate/backend/wire"
)

// Usage is the evidence of a Messages answer. InputTokens leaves cached
// tokens out (Anthropic's rule): the provider's whole prompt is
// PromptTokens, the three input figures together.
type Usage struct {
	InputTokens              int64 `json:"input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
}

// PromptTokens is input_tokens + cache_creation_input_tokens +
// cache_read_input_tokens: what the provider read, each token once.
func (u Usage) PromptTokens() int64 {
	return u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
}

// ErrBadUsage marks a usage object that is present but not evidence.
var ErrBadUsage = errors.New("usage object is not valid evidence")

type wireUsageIn struct {
	InputTokens              json.RawMessage `json:"input_tokens"`
	CacheCreationInputTokens json.RawMessage `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     json.RawMessage `json:"cache_read_input_tokens"`
	OutputTokens             json.RawMessage `json:"output_tokens"`
}

// optCount reads an optional count: absent or null is (0, false).
func optCount(name string, raw json.RawMessage) (int64, bool, error) {
	if len(raw) == 0 || wire.IsNull(raw) {
		return 0, false, nil
	}
	n, err := wire.Count(raw)
	if err != nil {
		return 0, false, fmt.Errorf("%w: %s: %v", ErrBadUsage, name, err)
	}
	return n, true, nil
}

// inputUsage reads the input half of a usage object; input_tokens is
// required when required is set.
func (w wireUsageIn) input(required bool) (u Usage, have [3]bool, err error) {
	if u.InputTokens, have[0], err = optCount("input_tokens", w.InputTokens); err != nil {
		return u, have, err
	}
	if required && !have[0] {
		return u, have, fmt.Errorf("%w: input_tokens is missing", ErrBadUsage)
	}
	if u.CacheCreationInputTokens, have[1], err = optCount("cache_creation_input_tokens", w.CacheCreationInputTokens); err != nil {
		return u, have, err
	}
	if u.CacheReadInputTokens, have[2], err = optCount("cache_read_input_tokens", w.CacheReadInputTokens); err != nil {
		return u, have, err
	}
	return u, have, nil
}

// requiredOutput is a usage object's output_tokens, which must be given.
func requiredOutput(w *wireUsageIn) (int64, error) {
	out, have, err := optCount("output_tokens", w.OutputTokens)
	if err == nil && !have {
		err = fmt.Errorf("%w: output_tokens is missing", ErrBadUsage)
	}
	return out, err
}
