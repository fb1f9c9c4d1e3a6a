package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/quotagate/quotagate/backend/wire"
)

// Usage is the chat-completions usage object as evidence: prompt_tokens,
// completion_tokens, total_tokens, completion_tokens_details.reasoning_tokens
// and prompt_tokens_details.cached_tokens. Its fields are the ledger's
// Usage, field for field, so a door converts one into the other
// (ledger.Usage(u)); Anthropic's cache-creation figure stays zero here.
type Usage struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	TotalTokens         int64 `json:"total_tokens"`
	HasTotal            bool  `json:"-"` // total_tokens was present
	ReasoningTokens     int64 `json:"reasoning_tokens,omitempty"`
	CachedTokens        int64 `json:"cached_tokens,omitempty"`
	CacheCreationTokens int64 `json:"cache_creation_tokens,omitempty"`
}

// ErrBadUsage marks a usage object that is present but unusable as
// evidence: a missing count, a negative, fractional, non-numeric or
// overflowing number, or a duplicate key.
var ErrBadUsage = errors.New("usage object is not valid evidence")

// ParseUsage parses a usage object. "null" gives (nil, nil): absent.
// prompt_tokens and completion_tokens are required; total_tokens is
// optional (HasTotal says whether it was given).
func ParseUsage(raw []byte) (*Usage, error) { return parseUsage(raw, true) }

// parseUsage is ParseUsage; completion_tokens is required only when
// needCompletion (embeddings' usage has none: it is 0).
func parseUsage(raw []byte, needCompletion bool) (*Usage, error) {
	if len(bytes.TrimSpace(raw)) == 0 || wire.IsNull(raw) {
		return nil, nil
	}
	fields, err := wire.Fields(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadUsage, err)
	}
	var u Usage
	var havePrompt, haveCompletion bool
	seen := make(map[string]bool, len(fields))
	for _, f := range fields {
		if seen[f.Key] {
			return nil, fmt.Errorf("%w: %q appears twice", ErrBadUsage, f.Key)
		}
		seen[f.Key] = true
		switch f.Key {
		case "prompt_tokens":
			if u.PromptTokens, err = usageNumber(f.Key, f.Val); err != nil {
				return nil, err
			}
			havePrompt = true
		case "completion_tokens":
			if u.CompletionTokens, err = usageNumber(f.Key, f.Val); err != nil {
				return nil, err
			}
			haveCompletion = true
		case "total_tokens":
			if wire.IsNull(f.Val) {
				continue
			}
			if u.TotalTokens, err = usageNumber(f.Key, f.Val); err != nil {
				return nil, err
			}
			u.HasTotal = true
		case "prompt_tokens_details":
			u.CachedTokens = cachedTokens(f.Val)
		case "completion_tokens_details":
			if u.ReasoningTokens, err = reasoningTokens(f.Val); err != nil {
				return nil, err
			}
		}
	}
	switch {
	case !havePrompt && !needCompletion:
		return nil, fmt.Errorf("%w: prompt_tokens is required", ErrBadUsage)
	case !havePrompt || !haveCompletion && needCompletion:
		return nil, fmt.Errorf("%w: prompt_tokens and completion_tokens are both required", ErrBadUsage)
	}
	return &u, nil
}

func reasoningTokens(raw json.RawMessage) (int64, error) {
	if wire.IsNull(raw) {
		return 0, nil
	}
	fields, err := wire.Fields(raw)
	if err != nil {
		return 0, fmt.Errorf("%w: completion_tokens_details: %v", ErrBadUsage, err)
	}
	var n int64
	seen := false
	for _, f := range fields {
		if f.Key != "reasoning_tokens" || wire.IsNull(f.Val) {
			continue
		}
		if seen {
			return 0, fmt.Errorf("%w: reasoning_tokens appears twice", ErrBadUsage)
		}
		seen = true
		if n, err = usageNumber("completion_tokens_details.reasoning_tokens", f.Val); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// cachedTokens is prompt_tokens_details.cached_tokens, the part of
// prompt_tokens read from the provider's cache; 0 when absent or unreadable
// (it is shown, not settled on: prompt_tokens already includes it).
func cachedTokens(raw json.RawMessage) int64 {
	var d struct {
		CachedTokens json.RawMessage `json:"cached_tokens"`
	}
	if wire.IsNull(raw) || json.Unmarshal(raw, &d) != nil || d.CachedTokens == nil {
		return 0
	}
	n, err := wire.Count(d.CachedTokens)
	if err != nil {
		return 0
	}
	return n
}

func usageNumber(name string, raw json.RawMessage) (int64, error) {
	v, err := wire.Count(raw)
	if err != nil {
		return 0, fmt.Errorf("%w: %s: %v", ErrBadUsage, name, err)
	}
	return v, nil
}
