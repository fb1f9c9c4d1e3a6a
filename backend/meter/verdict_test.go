package meter

import (
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/ledger"
)

func usage(p, c int64) *Usage {
	return &Usage{PromptTokens: p, CompletionTokens: c, TotalTokens: p + c, HasTotal: true}
}

const usageShaped = `{"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}}`

func TestJudgeUTF8Bytes(t *testing.T) {
	m := mustMeter(t, NameUTF8Bytes)
	for _, tc := range []struct {
		name     string
		j        Judgement
		trusted  bool
		spend    ledger.Units
		measured ledger.Units
		reason   string
	}{
		{"seed000 问题 in 你好 AI out settles 15",
			Judgement{InputUnits: 6, Output: "你好 AI", Usage: usage(6, 9), Stream: true, SawDone: true}, true, 15, 15, ReasonTrusted},
		{"seed000 non-streaming settles 15",
			Judgement{InputUnits: 6, Output: "你好 AI", Usage: usage(6, 9), Complete: true}, true, 15, 15, ReasonTrusted},
		{"seed000 hi with usage but cut before [DONE] holds",
			Judgement{InputUnits: 2, Output: "part", Usage: usage(2, 4), Stream: true}, false, 0, 6, ReasonNoDone},
		{"seed000 cut after part: no usage, no [DONE] holds (6 measured)",
			Judgement{InputUnits: 2, Output: "part", Stream: true}, false, 0, 6, ReasonNoUsage},
		{"seed000 missing usage holds",
			Judgement{InputUnits: 6, Output: "你好 AI", Stream: true, SawDone: true}, false, 0, 15, ReasonNoUsage},
		{"seed000 false usage (completion 0) holds",
			Judgement{InputUnits: 6, Output: "你好 AI", Usage: usage(6, 0), Stream: true, SawDone: true}, false, 0, 15, ReasonMismatch},
		{"false prompt holds",
			Judgement{InputUnits: 6, Output: "你好 AI", Usage: usage(5, 9), Stream: true, SawDone: true}, false, 0, 15, ReasonMismatch},
		{"seed000 text shaped like usage is counted by its bytes",
			Judgement{InputUnits: 2, Output: usageShaped, Usage: usage(2, int64(len(usageShaped))), Stream: true, SawDone: true},
			true, 2 + ledger.Units(len(usageShaped)), 2 + ledger.Units(len(usageShaped)), ReasonTrusted},
		{"total inconsistent holds",
			Judgement{InputUnits: 6, Output: "你好 AI", Usage: &Usage{PromptTokens: 6, CompletionTokens: 9, TotalTokens: 14, HasTotal: true}, Complete: true},
			false, 0, 15, ReasonInconsistent},
		{"no total is fine",
			Judgement{InputUnits: 6, Output: "你好 AI", Usage: &Usage{PromptTokens: 6, CompletionTokens: 9}, Complete: true}, true, 15, 15, ReasonTrusted},
		{"incomplete body holds",
			Judgement{InputUnits: 6, Output: "你好 AI", Usage: usage(6, 9)}, false, 0, 15, ReasonIncomplete},
		{"bad usage holds",
			Judgement{InputUnits: 6, Output: "你好 AI", UsageProblem: "prompt_tokens: negative", Stream: true, SawDone: true}, false, 0, 15, ReasonBadEvidence},
		{"negative usage that bypassed the parser holds",
			Judgement{InputUnits: 0, Output: "", Usage: &Usage{PromptTokens: -1, CompletionTokens: 1}, Complete: true}, false, 0, 0, ReasonBadEvidence},
		{"precounted output",
			Judgement{InputUnits: 6, OutputUnits: 9, OutputCounted: true, Usage: usage(6, 9), Complete: true}, true, 15, 15, ReasonTrusted},
		{"cached input settles the same (the evidence names it)",
			Judgement{InputUnits: 6, Output: "你好 AI", Usage: &Usage{PromptTokens: 6, CompletionTokens: 9, CachedTokens: 4}, Complete: true}, true, 15, 15, ReasonTrusted},
		{"zero usage for zero work settles 0 (T13)",
			Judgement{InputUnits: 0, Usage: usage(0, 0), Complete: true}, true, 0, 0, ReasonTrusted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.j.Meter = m
			v := Judge(tc.j)
			if v.Trusted != tc.trusted || v.SpendUnits != tc.spend || v.MeasuredUnits != tc.measured || v.Reason != tc.reason {
				t.Errorf("Judge = %+v, want trusted %v spend %d measured %d reason %s", v, tc.trusted, tc.spend, tc.measured, tc.reason)
			}
			if v.Detail == "" || !strings.HasPrefix(v.Evidence(), v.Reason+": ") {
				t.Errorf("evidence %q", v.Evidence())
			}
		})
	}
}

func TestJudgeTiktoken(t *testing.T) {
	m := mustMeter(t, NameTiktoken)
	out := "tiktoken is great!" // 6 tokens in both encodings
	for _, tc := range []struct {
		name    string
		j       Judgement
		trusted bool
		spend   ledger.Units
		reason  string
	}{
		{"consistent usage settles prompt+completion",
			Judgement{InputUnits: 100, Output: out, Usage: usage(100, 6), Stream: true, SawDone: true}, true, 106, ReasonTrusted},
		{"reasoning tokens are billed inside completion",
			Judgement{InputUnits: 18, Output: out, Usage: &Usage{PromptTokens: 18, CompletionTokens: 150, TotalTokens: 168, HasTotal: true, ReasoningTokens: 130},
				Stream: true, SawDone: true}, true, 168, ReasonTrusted},
		{"reasoning above completion is inconsistent",
			Judgement{InputUnits: 18, Output: out, Usage: &Usage{PromptTokens: 18, CompletionTokens: 16, ReasoningTokens: 130}, Complete: true}, false, 0, ReasonInconsistent},
		{"completion below relayed text holds",
			Judgement{InputUnits: 100, Output: out, Usage: usage(100, 5), Stream: true, SawDone: true}, false, 0, ReasonMismatch},
		{"text shaped like usage: zero usage cannot cover it",
			Judgement{InputUnits: 10, Output: usageShaped, Usage: usage(10, 0), Stream: true, SawDone: true}, false, 0, ReasonMismatch},
		{"missing usage holds",
			Judgement{InputUnits: 100, Output: out, Stream: true, SawDone: true}, false, 0, ReasonNoUsage},
		{"usage without [DONE] holds",
			Judgement{InputUnits: 100, Output: out, Usage: usage(100, 6), Stream: true}, false, 0, ReasonNoDone},
		{"total mismatch holds",
			Judgement{InputUnits: 100, Output: out, Usage: &Usage{PromptTokens: 100, CompletionTokens: 6, TotalTokens: 107, HasTotal: true}, Complete: true}, false, 0, ReasonInconsistent},
		{"prompt at the top of the band (100 + 10% + 16)",
			Judgement{InputUnits: 100, Output: out, Usage: usage(126, 6), Complete: true}, true, 132, ReasonTrusted},
		{"prompt above the band holds",
			Judgement{InputUnits: 100, Output: out, Usage: usage(127, 6), Complete: true}, false, 0, ReasonPromptOutOfBand},
		{"prompt below the band holds",
			Judgement{InputUnits: 100, Output: out, Usage: usage(73, 6), Complete: true}, false, 0, ReasonPromptOutOfBand},
		{"uncertain units (tools, images) widen the band",
			Judgement{InputUnits: 1100, UncertainUnits: 1000, Output: out, Usage: usage(300, 6), Complete: true}, true, 306, ReasonTrusted},
		{"zero prompt for a real prompt holds",
			Judgement{InputUnits: 100, Output: out, Usage: usage(0, 6), Complete: true}, false, 0, ReasonPromptOutOfBand},
		{"usage counts too large to add",
			Judgement{InputUnits: 100, Output: out, Usage: &Usage{PromptTokens: int64(ledger.MaxUnits), CompletionTokens: 6}, Complete: true}, false, 0, ReasonBadEvidence},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.j.Meter, tc.j.Model = m, "gpt-4o"
			if tc.j.Band == (PromptBand{}) {
				tc.j.Band = DefaultPromptBand
			}
			v := Judge(tc.j)
			if v.Trusted != tc.trusted || v.SpendUnits != tc.spend || v.Reason != tc.reason {
				t.Errorf("Judge = %+v, want trusted %v spend %d reason %s", v, tc.trusted, tc.spend, tc.reason)
			}
		})
	}
}

func TestJudgeTiktokenForcedCutsDoNotCondemnHonestUsage(t *testing.T) {
	tm := tiktokenForTest(t)
	blob := strings.Repeat("QUJD", 2000) // base64-like: one long piece, cut by force
	exact := direct(tm, "gpt-4o", blob)
	v := Judge(Judgement{Meter: tm, Model: "gpt-4o", InputUnits: 10, Output: blob,
		Usage: usage(10, int64(exact)), Complete: true, Band: DefaultPromptBand})
	if !v.Trusted {
		t.Fatalf("honest usage for a long piece held: %+v", v)
	}
}

func TestJudgeWithoutMeter(t *testing.T) {
	if v := Judge(Judgement{Usage: usage(1, 1), Complete: true}); v.Trusted || v.Reason != ReasonUnknownMeter {
		t.Errorf("got %+v", v)
	}
}

func TestPromptBandAllows(t *testing.T) {
	b := PromptBand{Percent: 50, Slack: 0}
	for _, tc := range []struct {
		own, unc ledger.Units
		prompt   int64
		want     bool
	}{
		{100, 0, 150, true}, {100, 0, 151, false}, {100, 0, 50, true}, {100, 0, 49, false},
		{0, 0, 0, true}, {0, 0, 1, false}, {0, 5, 5, true},
		{ledger.MaxUnits, ledger.MaxUnits, 0, true}, // saturates instead of overflowing
	} {
		if got := b.Allows(tc.own, tc.unc, tc.prompt); got != tc.want {
			t.Errorf("Allows(%d, %d, %d) = %v", tc.own, tc.unc, tc.prompt, got)
		}
	}
}

func TestJudgeExceedsReserve(t *testing.T) {
	tk := mustMeter(t, NameTiktoken)
	// Seed 002: reserve 34 (18 + 16) against an actual 168 with reasoning.
	v := Judge(Judgement{Meter: tk, Model: "deepseek-v4-flash", InputUnits: 18, Output: "七种",
		Usage:    &Usage{PromptTokens: 18, CompletionTokens: 150, TotalTokens: 168, HasTotal: true, ReasoningTokens: 130},
		Complete: true, Band: DefaultPromptBand, ReserveUnits: 34})
	if !v.Trusted || v.SpendUnits != 168 || !v.ExceedsReserve || !strings.Contains(v.Detail, "134 above the reserve of 34") {
		t.Errorf("got %+v", v)
	}
	// With the floor: reserve 4,114 covers it.
	v = Judge(Judgement{Meter: tk, Model: "deepseek-v4-flash", InputUnits: 18, Output: "七种",
		Usage: usage(18, 150), Complete: true, Band: DefaultPromptBand, ReserveUnits: 4114})
	if !v.Trusted || v.ExceedsReserve {
		t.Errorf("got %+v", v)
	}
}

func TestBandFor(t *testing.T) {
	for model, want := range map[string]PromptBand{
		"gpt-4o": DefaultPromptBand, "gpt-4.1-mini": DefaultPromptBand, "o3": DefaultPromptBand,
		"gpt-4": DefaultPromptBand, "gpt-4-turbo": DefaultPromptBand, "gpt-3.5-turbo": DefaultPromptBand,
		"openai/gpt-4o-mini": DefaultPromptBand,
		"deepseek-v4-flash":  ForeignPromptBand, "doubao-seed-1.6": ForeignPromptBand, "qwen-max": ForeignPromptBand,
		"demo-chat": ForeignPromptBand, "": ForeignPromptBand,
	} {
		if got := BandFor(model); got != want {
			t.Errorf("BandFor(%q) = %+v, want %+v", model, got, want)
		}
	}
}

func TestOutputFloor(t *testing.T) {
	for _, tc := range []struct {
		b       PromptBand
		relayed ledger.Units
		want    ledger.Units
	}{
		{DefaultPromptBand, 100, 100}, {ForeignPromptBand, 100, 40}, {ForeignPromptBand, 9, 3},
		{PromptBand{OutputShortfallPercent: 100}, 100, 0}, {PromptBand{OutputShortfallPercent: 250}, 100, 0},
		{PromptBand{OutputShortfallPercent: -5}, 100, 100},
	} {
		if got := tc.b.OutputFloor(tc.relayed); got != tc.want {
			t.Errorf("%+v.OutputFloor(%d) = %d, want %d", tc.b, tc.relayed, got, tc.want)
		}
	}
}

// A provider with its own tokenizer (seed 002's deepseek-v4-flash) counts
// Chinese in fewer tokens than cl100k_base: trusted under its band, held
// under OpenAI's; a zero completion is held under both.
func TestJudgeForeignTokenizer(t *testing.T) {
	tk := mustMeter(t, NameTiktoken)
	answer := "彩虹通常有七种颜色：红、橙、黄、绿、蓝、靛、紫。"
	own := tk.Count("deepseek-v4-flash", answer)
	in := tk.Count("deepseek-v4-flash", "彩虹有几种颜色") + 7
	provider := func(c int64) *Usage { return usage(int64(in)*6/10, c) } // ~60 % of ours
	for _, tc := range []struct {
		name    string
		band    PromptBand
		u       *Usage
		trusted bool
	}{
		{"foreign band trusts the provider's smaller counts", BandFor("deepseek-v4-flash"), provider(int64(own) * 6 / 10), true},
		{"OpenAI's band holds them", DefaultPromptBand, provider(int64(own) * 6 / 10), false},
		{"zero completion for relayed text is held even so", BandFor("deepseek-v4-flash"), provider(0), false},
	} {
		v := Judge(Judgement{Meter: tk, Model: "deepseek-v4-flash", InputUnits: in, Output: answer,
			Usage: tc.u, Stream: true, SawDone: true, Band: tc.band})
		if v.Trusted != tc.trusted {
			t.Errorf("%s: %+v (own output %d, input %d)", tc.name, v, own, in)
		}
	}
}
