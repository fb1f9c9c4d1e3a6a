package price

import "fmt"

// Tokens is a run's trusted usage split by what is priced differently,
// each token in exactly one of Input, CacheRead, CacheWrite and Output.
// The doors report the same tokens differently — chat and Responses count
// cached tokens inside the prompt, Anthropic beside it — so a Tokens comes
// from the constructor of the door that reported it, never by hand.
type Tokens struct {
	Input      int64 // input tokens neither read from nor written to the cache
	CacheRead  int64 // input tokens read from the provider's cache
	CacheWrite int64 // input tokens written to the provider's cache
	Output     int64 // output tokens, reasoning included
	// Reasoning is the part of Output spent on hidden reasoning: shown,
	// and priced as the output it is part of, never again.
	Reasoning int64
}

// Prompt is every input token, each once.
func (t Tokens) Prompt() int64 { return t.Input + t.CacheRead + t.CacheWrite }

// ChatTokens splits chat completions' usage: prompt_tokens includes
// prompt_tokens_details.cached_tokens, and completion_tokens includes
// completion_tokens_details.reasoning_tokens. Chat reports no cache writes.
func ChatTokens(promptTokens, cachedTokens, completionTokens, reasoningTokens int64) (Tokens, error) {
	return inclusive("chat usage", names{"prompt_tokens", "prompt_tokens_details.cached_tokens",
		"completion_tokens", "completion_tokens_details.reasoning_tokens"},
		promptTokens, cachedTokens, completionTokens, reasoningTokens)
}

// ResponsesTokens splits the Responses API's usage: input_tokens includes
// input_tokens_details.cached_tokens, and output_tokens includes
// output_tokens_details.reasoning_tokens. Responses reports no cache writes.
func ResponsesTokens(inputTokens, cachedTokens, outputTokens, reasoningTokens int64) (Tokens, error) {
	return inclusive("Responses usage", names{"input_tokens", "input_tokens_details.cached_tokens",
		"output_tokens", "output_tokens_details.reasoning_tokens"},
		inputTokens, cachedTokens, outputTokens, reasoningTokens)
}

// MessagesTokens splits Anthropic Messages' usage, where input_tokens
// leaves out cache_read_input_tokens and cache_creation_input_tokens: the
// three are added, never subtracted. Messages reports no reasoning count
// (thinking is inside output_tokens).
func MessagesTokens(inputTokens, cacheReadInputTokens, cacheCreationInputTokens, outputTokens int64) (Tokens, error) {
	for _, c := range []struct {
		name string
		n    int64
	}{{"input_tokens", inputTokens}, {"cache_read_input_tokens", cacheReadInputTokens},
		{"cache_creation_input_tokens", cacheCreationInputTokens}, {"output_tokens", outputTokens}} {
		if c.n < 0 {
			return Tokens{}, fmt.Errorf("Messages usage: %s is %d, below 0", c.name, c.n)
		}
	}
	return Tokens{Input: inputTokens, CacheRead: cacheReadInputTokens, CacheWrite: cacheCreationInputTokens, Output: outputTokens}, nil
}

// PromptTokens splits usage already in one prompt-inclusive form — a
// prompt count that includes both the cache reads and the cache writes,
// as the gateway keeps any door's usage — with no reasoning count.
func PromptTokens(prompt, cacheRead, cacheWrite, output int64) (Tokens, error) {
	if prompt < 0 || cacheWrite < 0 || cacheRead < 0 || cacheRead > prompt-cacheWrite {
		return Tokens{}, fmt.Errorf("usage: %d cached and %d cache-written tokens do not fit in a prompt of %d", cacheRead, cacheWrite, prompt)
	}
	t, err := ChatTokens(prompt-cacheWrite, cacheRead, output, 0)
	t.CacheWrite = cacheWrite
	return t, err
}

// names are one door's spellings of a prompt-inclusive usage.
type names struct{ prompt, cached, output, reasoning string }

func inclusive(door string, n names, prompt, cached, output, reasoning int64) (Tokens, error) {
	switch {
	case prompt < 0 || cached < 0 || output < 0 || reasoning < 0:
		return Tokens{}, fmt.Errorf("%s: a count is below 0 (%s %d, %s %d, %s %d, %s %d)", door,
			n.prompt, prompt, n.cached, cached, n.output, output, n.reasoning, reasoning)
	case cached > prompt:
		return Tokens{}, fmt.Errorf("%s: %s %d exceeds %s %d, which includes it", door, n.cached, cached, n.prompt, prompt)
	case reasoning > output:
		return Tokens{}, fmt.Errorf("%s: %s %d exceeds %s %d, which includes it", door, n.reasoning, reasoning, n.output, output)
	}
	return Tokens{Input: prompt - cached, CacheRead: cached, Output: output, Reasoning: reasoning}, nil
}

// ReconcileTokens is how a reconcile that gives units but no cost is
// priced: the units are the run's input first (up to input, the run's
// counted input), the rest its output.
func ReconcileTokens(units, input int64) (Tokens, error) {
	if units < 0 || input < 0 {
		return Tokens{}, fmt.Errorf("reconcile: %d units for a run of %d input tokens: neither may be below 0", units, input)
	}
	in := min(units, input)
	return Tokens{Input: in, Output: units - in}, nil
}
