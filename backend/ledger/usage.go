package ledger

// Usage is the usage evidence an upstream reports for one run, in the
// provider's own counts, whatever the wire protocol spelled it as (a wire
// package maps its usage object onto it). A nil *Usage means "absent"; a
// non-nil Usage with zeros is the provider saying zero (RELIABILITY T13).
type Usage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
	HasTotal         bool  `json:"-"` // total_tokens was present
	// ReasoningTokens is the part of CompletionTokens spent on hidden
	// reasoning (0 when not reported); it is billed.
	ReasoningTokens int64 `json:"reasoning_tokens,omitempty"`
	// CachedTokens is the part of PromptTokens the provider served from its
	// prompt cache (Responses: input_tokens_details.cached_tokens); shown
	// in the run's evidence for the dashboard, never a different price here.
	CachedTokens int64 `json:"cached_tokens,omitempty"`
	// CacheCreationTokens is the part of PromptTokens the provider wrote to
	// its prompt cache (Anthropic: cache_creation_input_tokens); shown in
	// the evidence beside CachedTokens (Anthropic: cache_read_input_tokens).
	CacheCreationTokens int64 `json:"cache_creation_tokens,omitempty"`
}

// SplitOverrun is the one rule for trusted usage above a run's reserve: the
// tenant is charged at most the reserve, and the rest is the run's overrun,
// which the guarded model's quota day still counts (the provider consumed
// it). meter's verdict and every Store's Settle use it.
func SplitOverrun(reserve, units Units) (charged, overrun Units) {
	charged = min(units, reserve)
	return charged, units - charged
}
