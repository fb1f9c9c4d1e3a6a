package price

import (
	"encoding/json"
	"math/big"
	"math/rand/v2"
	"os"
	"testing"
)

// usageBodies are usage objects as the providers send them, by case name
// (testdata/usage.json).
func usageBodies(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	data, err := os.ReadFile("testdata/usage.json")
	if err != nil {
		t.Fatal(err)
	}
	var bodies map[string]json.RawMessage
	if err := json.Unmarshal(data, &bodies); err != nil {
		t.Fatal(err)
	}
	return bodies
}

// The doors' usage objects, only the members that price a run.
type chatUsage struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	TotalTokens         int64 `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

type responsesUsage struct {
	InputTokens        int64 `json:"input_tokens"`
	OutputTokens       int64 `json:"output_tokens"`
	TotalTokens        int64 `json:"total_tokens"`
	InputTokensDetails struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokensDetails struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
}

type messagesUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
}

// splitUsage splits body as door reports it, and checks that the split
// holds every token the door counted, once: the door's own totals.
func splitUsage(t *testing.T, door string, body json.RawMessage) Tokens {
	t.Helper()
	var tok Tokens
	var err error
	var prompt, output int64
	switch door {
	case "chat":
		var u chatUsage
		mustUnmarshal(t, body, &u)
		tok, err = ChatTokens(u.PromptTokens, u.PromptTokensDetails.CachedTokens, u.CompletionTokens, u.CompletionTokensDetails.ReasoningTokens)
		prompt, output = u.PromptTokens, u.CompletionTokens
		if u.TotalTokens != prompt+output {
			t.Fatalf("captured chat usage: total_tokens %d is not prompt + completion", u.TotalTokens)
		}
	case "responses":
		var u responsesUsage
		mustUnmarshal(t, body, &u)
		tok, err = ResponsesTokens(u.InputTokens, u.InputTokensDetails.CachedTokens, u.OutputTokens, u.OutputTokensDetails.ReasoningTokens)
		prompt, output = u.InputTokens, u.OutputTokens
		if u.TotalTokens != prompt+output {
			t.Fatalf("captured Responses usage: total_tokens %d is not input + output", u.TotalTokens)
		}
	case "messages":
		var u messagesUsage
		mustUnmarshal(t, body, &u)
		tok, err = MessagesTokens(u.InputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens, u.OutputTokens)
		prompt, output = u.InputTokens+u.CacheReadInputTokens+u.CacheCreationInputTokens, u.OutputTokens
	}
	if err != nil {
		t.Fatal(err)
	}
	if tok.Prompt() != prompt || tok.Output != output {
		t.Fatalf("%s: split %+v holds %d input and %d output tokens, the door counted %d and %d", door, tok, tok.Prompt(), tok.Output, prompt, output)
	}
	return tok
}

func mustUnmarshal(t *testing.T, data []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatal(err)
	}
}

// TestCostPerDoor prices captured usage from each door, worked by hand in
// micros of US dollars (price per 1M tokens × tokens / 10⁶ × 10⁶ = price ×
// tokens micros): every micro accounted for, no token priced twice, and a
// translated answer costing what the native one does.
func TestCostPerDoor(t *testing.T) {
	bodies := usageBodies(t)
	table := Embedded()
	for _, c := range []struct {
		name, door, model string
		want              Tokens
		micros            Micros
	}{
		// 2006 prompt of which 1920 cached, 300 out (gpt-4o: 2.50 / 1.25 / 10.00):
		// 86×2.50 + 1920×1.25 + 300×10 = 215 + 2400 + 3000 = 5615.
		{"chat_cached", "chat", "gpt-4o", Tokens{Input: 86, CacheRead: 1920, Output: 300}, 5615},
		// at gpt-4o-mini (0.15 / 0.075 / 0.60): 12.9 + 144 + 180 = 336.9 → 337.
		{"chat_cached", "chat", "gpt-4o-mini", Tokens{Input: 86, CacheRead: 1920, Output: 300}, 337},
		// 1523 in of which 1280 cached, 862 out of which 640 reasoning
		// (o4-mini: 1.10 / 0.275 / 4.40): 243×1.10 + 1280×0.275 + 862×4.40
		// = 267.3 + 352 + 3792.8 = 4412.1 → 4413; reasoning is inside the 862.
		{"responses_reasoning", "responses", "o4-mini", Tokens{Input: 243, CacheRead: 1280, Output: 862, Reasoning: 640}, 4413},
		// 12 in beside 1500 cache reads and 2048 cache writes, 503 out
		// (claude-sonnet-4-5: 3.00 / 0.30 / 3.75 / 15.00):
		// 12×3 + 1500×0.30 + 2048×3.75 + 503×15 = 36 + 450 + 7680 + 7545 = 15711.
		{"messages_cache_write", "messages", "claude-sonnet-4-5", Tokens{Input: 12, CacheRead: 1500, CacheWrite: 2048, Output: 503}, 15711},
		// chat_cached through the Messages and Responses doors (a chat
		// upstream's answer translated): the same tokens, the same cost.
		{"messages_translated_from_chat_cached", "messages", "gpt-4o", Tokens{Input: 86, CacheRead: 1920, Output: 300}, 5615},
		{"responses_translated_from_chat_cached", "responses", "gpt-4o", Tokens{Input: 86, CacheRead: 1920, Output: 300}, 5615},
	} {
		t.Run(c.name+"/"+c.model, func(t *testing.T) {
			tok := splitUsage(t, c.door, bodies[c.name])
			if tok != c.want {
				t.Fatalf("split %+v, want %+v", tok, c.want)
			}
			q, ok := table.Quote(c.model)
			if !ok {
				t.Fatalf("the embedded table has no %s", c.model)
			}
			got, err := q.Price().Cost(tok)
			if err != nil || got != c.micros {
				t.Fatalf("cost %v, %v; want %d micros", got, err, c.micros)
			}
			if exact := exactCost(q.Price(), tok); got != exact {
				t.Fatalf("cost %d, the exact sum rounded up is %d", got, exact)
			}
		})
	}
}

// TestPromptTokensIsEveryDoor: usage kept in the gateway's one
// prompt-inclusive form splits as the door that reported it does.
func TestPromptTokensIsEveryDoor(t *testing.T) {
	bodies := usageBodies(t)
	for _, c := range []struct{ name, door string }{{"chat_cached", "chat"}, {"responses_reasoning", "responses"}, {"messages_cache_write", "messages"}} {
		native := splitUsage(t, c.door, bodies[c.name])
		got, err := PromptTokens(native.Prompt(), native.CacheRead, native.CacheWrite, native.Output)
		native.Reasoning = 0 // the prompt-inclusive form carries no reasoning count; it is priced as output either way
		if err != nil || got != native {
			t.Errorf("%s: PromptTokens = %+v, %v; the door's split is %+v", c.name, got, err, native)
		}
	}
}

func TestTokensRefuseInconsistentUsage(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
	}{
		{"cached above prompt", second(ChatTokens(10, 11, 0, 0))},
		{"reasoning above output", second(ResponsesTokens(10, 0, 5, 6))},
		{"negative chat", second(ChatTokens(-1, 0, 0, 0))},
		{"negative Messages", second(MessagesTokens(0, -1, 0, 0))},
		{"cache parts above prompt", second(PromptTokens(10, 6, 5, 0))},
		{"negative prompt", second(PromptTokens(-1, 0, 0, 0))},
	} {
		if c.err == nil {
			t.Errorf("%s: accepted", c.name)
		}
	}
}

func second[T any](_ T, err error) error { return err }

// TestUSDRateExact: a price converted by usd_rate is the decimal product,
// and the cost is rounded once, from the converted prices — not the USD
// cost converted (337 × 7.1 = 2392.7 → 2393), nor float arithmetic.
func TestUSDRateExact(t *testing.T) {
	q, _ := Embedded().Quote("gpt-4o-mini")
	rate, err := ParseRate("7.1")
	if err != nil {
		t.Fatal(err)
	}
	p := q.In(rate)
	for _, c := range []struct {
		got  PerMillion
		want string
	}{{p.Input, "1.065"}, {p.CachedInput, "0.5325"}, {p.Output, "4.26"}} {
		if c.got.String() != c.want {
			t.Errorf("converted price %s, want %s", c.got, c.want)
		}
	}
	// 86×1.065 + 1920×0.5325 + 300×4.26 = 91.59 + 1022.4 + 1278 = 2391.99 → 2392.
	got, err := p.Cost(Tokens{Input: 86, CacheRead: 1920, Output: 300})
	if err != nil || got != 2392 {
		t.Fatalf("cost in CNY %v, %v; want 2392 micros", got, err)
	}
	// A rate with every place used: 0.000001 of a dollar per 1M tokens at
	// 123456.789012 is 0.123456789012 per 1M tokens, kept to the last digit.
	tiny, _ := ParseRate("123456.789012")
	if s := (Quote{Input: 1}).In(tiny).Input.String(); s != "0.123456789012" {
		t.Fatalf("converted %s", s)
	}
}

// TestRoundedOncePerRun: four parts of a tenth of a micro cost one micro,
// not four; and a run of nothing costs nothing.
func TestRoundedOncePerRun(t *testing.T) {
	tenth := Quote{Input: 100_000, CachedInput: 100_000, CacheWrite: 100_000, Output: 100_000}.Price() // 0.10 per 1M
	for _, c := range []struct {
		tok  Tokens
		want Micros
	}{
		{Tokens{Input: 1, CacheRead: 1, CacheWrite: 1, Output: 1}, 1}, // 0.4 → 1
		{Tokens{Input: 5, CacheRead: 5}, 1},                           // 1.0 exactly
		{Tokens{Input: 5, CacheRead: 5, Output: 1}, 2},                // 1.1 → 2
		{Tokens{}, 0},                          // nothing
		{Tokens{Output: 30, Reasoning: 30}, 3}, // reasoning is inside output
		{Tokens{Input: 11, CacheRead: 11, CacheWrite: 11, Output: 11}, 5}, // 4.4 → 5, where per part 2+2+2+2 = 8
	} {
		if got, err := tenth.Cost(c.tok); err != nil || got != c.want {
			t.Errorf("Cost(%+v) = %v, %v; want %d", c.tok, got, err, c.want)
		}
	}
}

func TestReserveCost(t *testing.T) {
	q, _ := Embedded().Quote("o4-mini")
	// 1000 counted input × 1.10 + 4096 output cap × 4.40 = 1100 + 18022.4 → 19123.
	if got, err := q.Price().ReserveCost(1000, 4096); err != nil || got != 19123 {
		t.Fatalf("ReserveCost = %v, %v; want 19123", got, err)
	}
}

// TestReconcileTokens: units without a cost are the run's input first.
func TestReconcileTokens(t *testing.T) {
	for _, c := range []struct {
		units, input int64
		want         Tokens
	}{{500, 1000, Tokens{Input: 500}}, {1000, 1000, Tokens{Input: 1000}}, {1500, 1000, Tokens{Input: 1000, Output: 500}}, {0, 10, Tokens{}}} {
		if got, err := ReconcileTokens(c.units, c.input); err != nil || got != c.want {
			t.Errorf("ReconcileTokens(%d, %d) = %+v, %v; want %+v", c.units, c.input, got, err, c.want)
		}
	}
	if _, err := ReconcileTokens(-1, 0); err == nil {
		t.Error("negative units accepted")
	}
}

func TestCostOverflowIsAnError(t *testing.T) {
	huge := Quote{Output: Micros(1<<63 - 1)}.In(Rate(1<<63 - 1))
	if _, err := huge.Cost(Tokens{Output: 1 << 62}); err == nil {
		t.Fatal("a cost beyond int64 micros was accepted")
	}
	if _, err := huge.Cost(Tokens{Output: -1}); err == nil {
		t.Fatal("negative tokens were priced")
	}
	if got, err := huge.Cost(Tokens{}); err != nil || got != 0 {
		t.Fatalf("no tokens at the largest price: %v, %v", got, err)
	}
}

// exactCost is ⌈Σ tokens × price⌉ in micros, by math/big: what Cost must
// equal.
func exactCost(p Price, t Tokens) Micros {
	sum := new(big.Rat)
	for _, part := range []struct {
		n  int64
		at PerMillion
	}{{t.Input, p.Input}, {t.CacheRead, p.CachedInput}, {t.CacheWrite, p.CacheWrite}, {t.Output, p.Output}} {
		at, _ := new(big.Rat).SetString(part.at.String()) // currency per 1M tokens
		sum.Add(sum, new(big.Rat).Mul(at, new(big.Rat).SetInt64(part.n)))
	}
	// currency per 1M tokens × tokens = 10⁻⁶ currency = micros
	q, r := new(big.Int).QuoRem(sum.Num(), sum.Denom(), new(big.Int))
	if r.Sign() != 0 {
		q.Add(q, big.NewInt(1))
	}
	return Micros(q.Int64())
}

// TestCostMatchesBigRat compares Cost with exact rational arithmetic over
// random prices, rates and usage, up to the largest counts the ledger keeps.
func TestCostMatchesBigRat(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 1))
	for i := 0; i < 20_000; i++ {
		q := Quote{Micros(r.Int64N(1e9)), Micros(r.Int64N(1e9)), Micros(r.Int64N(1e9)), Micros(r.Int64N(1e9))}
		rate := Rate(1 + r.Int64N(1e11))
		tok := Tokens{Input: r.Int64N(1 << 30), CacheRead: r.Int64N(1 << 30), CacheWrite: r.Int64N(1 << 20), Output: r.Int64N(1 << 24)}
		if i%2 == 0 { // small runs, where rounding shows
			tok = Tokens{Input: r.Int64N(100), CacheRead: r.Int64N(100), CacheWrite: r.Int64N(100), Output: r.Int64N(100)}
		}
		p := q.In(rate)
		got, err := p.Cost(tok)
		if err != nil {
			t.Fatalf("%+v at %+v: %v", tok, q, err)
		}
		if want := exactCost(p, tok); got != want {
			t.Fatalf("Cost(%+v) at %+v × %s = %d, exactly %d", tok, q, rate, got, want)
		}
	}
}

var sinkMicros Micros

// BenchmarkCost is the price of pricing a run (once per settlement).
func BenchmarkCost(b *testing.B) {
	q, _ := Embedded().Quote("claude-sonnet-4-5")
	rate, _ := ParseRate("7.1")
	p := q.In(rate)
	tok := Tokens{Input: 12, CacheRead: 1500, CacheWrite: 2048, Output: 503}
	b.ReportAllocs()
	for b.Loop() {
		m, err := p.Cost(tok)
		if err != nil {
			b.Fatal(err)
		}
		sinkMicros = m
	}
}
