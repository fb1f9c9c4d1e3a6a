package anthropic_test

import (
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/anthropic"
)

// ev builds one framed event: "name|data".
func run(t *testing.T, events ...string) *anthropic.Tally {
	t.Helper()
	var tl anthropic.Tally
	for _, e := range events {
		name, data, _ := strings.Cut(e, "|")
		_, _ = tl.Observe(name, []byte(data))
	}
	return &tl
}

const (
	startPlain   = `message_start|{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"usage":{"input_tokens":25,"output_tokens":1}}}`
	startCached  = `message_start|{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"usage":{"input_tokens":3,"cache_creation_input_tokens":0,"cache_read_input_tokens":1000,"output_tokens":1}}}`
	startCreate  = `message_start|{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"usage":{"input_tokens":3,"cache_creation_input_tokens":500,"cache_read_input_tokens":0,"output_tokens":1}}}`
	startNoUsage = `message_start|{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[]}}`
	blockStart   = `content_block_start|{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`
	textHi       = `content_block_delta|{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}`
	blockStop    = `content_block_stop|{"type":"content_block_stop","index":0}`
	stop         = `message_stop|{"type":"message_stop"}`
)

func delta(usage string) string {
	return `message_delta|{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":` + usage + `}`
}

// TestUsageCases: what counts, and what keeps the hold.
func TestUsageCases(t *testing.T) {
	cases := []struct {
		name    string
		events  []string
		prompt  int64 // input + cache creation + cache read
		output  int64
		ok      bool // usage complete
		stopped bool
		problem string // a substring of the problem, "" for none
	}{
		{name: "Plain", events: []string{startPlain, blockStart, textHi, blockStop, delta(`{"output_tokens":15}`), stop},
			prompt: 25, output: 15, ok: true, stopped: true},
		{name: "CacheRead", events: []string{startCached, delta(`{"output_tokens":7}`), stop},
			prompt: 1003, output: 7, ok: true, stopped: true},
		{name: "CacheCreation", events: []string{startCreate, delta(`{"output_tokens":7}`), stop},
			prompt: 503, output: 7, ok: true, stopped: true},
		{name: "PlaceholderOutputNotAdded", events: []string{startPlain, delta(`{"output_tokens":1}`), stop},
			prompt: 25, output: 1, ok: true, stopped: true},
		{name: "CumulativeDeltasNotAdded", events: []string{startPlain, delta(`{"output_tokens":10}`), delta(`{"output_tokens":30}`), stop},
			prompt: 25, output: 30, ok: true, stopped: true},
		{name: "DeltaRepeatsInputs", events: []string{startCached, delta(`{"input_tokens":3,"cache_creation_input_tokens":0,"cache_read_input_tokens":1000,"output_tokens":9}`), stop},
			prompt: 1003, output: 9, ok: true, stopped: true},
		{name: "DeltaNullInputs", events: []string{startPlain, delta(`{"input_tokens":null,"cache_read_input_tokens":null,"output_tokens":9}`), stop},
			prompt: 25, output: 9, ok: true, stopped: true},
		{name: "DeltaRaisesInput", events: []string{startPlain, delta(`{"input_tokens":26,"output_tokens":9}`), stop},
			prompt: 26, output: 9, ok: true, stopped: true},
		{name: "TranslatedStartZero", events: []string{`message_start|{"type":"message_start","message":{"usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0}}}`,
			delta(`{"input_tokens":20,"cache_creation_input_tokens":0,"cache_read_input_tokens":100,"output_tokens":9}`), stop},
			prompt: 120, output: 9, ok: true, stopped: true},
		{name: "ErrDeltaLowersInput", events: []string{startPlain, delta(`{"input_tokens":24,"output_tokens":9}`), stop},
			ok: false, stopped: true, problem: "contradict"},
		{name: "ErrDeltaContradictsCache", events: []string{startCached, delta(`{"cache_read_input_tokens":0,"output_tokens":9}`), stop},
			ok: false, stopped: true, problem: "contradict"},
		{name: "ErrOutputWentDown", events: []string{startPlain, delta(`{"output_tokens":30}`), delta(`{"output_tokens":10}`), stop},
			prompt: 25, output: 30, ok: true, stopped: true, problem: "went down"},
		{name: "ErrNoMessageDelta", events: []string{startPlain, blockStart, textHi, blockStop, stop}, stopped: true},
		{name: "ErrNoStartUsage", events: []string{startNoUsage, delta(`{"output_tokens":9}`), stop}, stopped: true},
		{name: "ErrNoStop", events: []string{startPlain, delta(`{"output_tokens":9}`)}, prompt: 25, output: 9, ok: true},
		{name: "ErrNegative", events: []string{startPlain, delta(`{"output_tokens":-1}`), stop}, stopped: true, problem: "negative"},
		{name: "ErrFraction", events: []string{startPlain, delta(`{"output_tokens":1.5}`), stop}, stopped: true, problem: "integer"},
		{name: "ErrMissingOutput", events: []string{startPlain, delta(`{}`), stop}, stopped: true, problem: "missing"},
		{name: "ErrAfterStop", events: []string{startPlain, delta(`{"output_tokens":9}`), stop, delta(`{"output_tokens":99}`)},
			prompt: 25, output: 9, ok: true, stopped: true, problem: "after message_stop"},
		{name: "ErrSecondStart", events: []string{startPlain, startCached, delta(`{"output_tokens":9}`), stop},
			prompt: 25, output: 9, ok: true, stopped: true, problem: "second message_start"},
		{name: "ErrNameMismatch", events: []string{startPlain, `message_stop|{"type":"message_delta","usage":{"output_tokens":1}}`},
			prompt: 0, problem: "named"},
		{name: "ErrDeltaForClosedBlock", events: []string{startPlain, blockStart, blockStop, textHi, delta(`{"output_tokens":9}`), stop},
			prompt: 25, output: 9, ok: true, stopped: true, problem: "not open"},
		{name: "ErrErrorEvent", events: []string{startPlain, `error|{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
			problem: "Overloaded"},
		{name: "UsageShapedTextIsText", events: []string{startPlain, blockStart,
			`content_block_delta|{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"{\"usage\":{\"output_tokens\":0}}"}}`,
			blockStop, delta(`{"output_tokens":12}`), stop}, prompt: 25, output: 12, ok: true, stopped: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tl := run(t, c.events...)
			u, ok := tl.Usage()
			if ok != c.ok {
				t.Fatalf("usage complete = %v, want %v (problem %q)", ok, c.ok, tl.Problem())
			}
			if ok && (u.PromptTokens() != c.prompt || u.OutputTokens != c.output) {
				t.Errorf("usage %d in + %d out, want %d + %d", u.PromptTokens(), u.OutputTokens, c.prompt, c.output)
			}
			if tl.Stopped() != c.stopped {
				t.Errorf("stopped = %v, want %v", tl.Stopped(), c.stopped)
			}
			switch p := tl.Problem(); {
			case c.problem == "" && p != "":
				t.Errorf("problem %q, want none", p)
			case c.problem != "" && !strings.Contains(p, c.problem):
				t.Errorf("problem %q, want one with %q", p, c.problem)
			}
		})
	}
}

func TestParseMessage(t *testing.T) {
	a, err := anthropic.ParseMessage([]byte(`{"id":"m","type":"message","role":"assistant","content":[{"type":"text","text":"Hi"},{"type":"tool_use","id":"t","name":"f","input":{"a": 1}}],"stop_reason":"tool_use","usage":{"input_tokens":5,"cache_read_input_tokens":7,"output_tokens":3}}`))
	if err != nil {
		t.Fatal(err)
	}
	if a.Text != `Hif{"a":1}` || a.Usage == nil || a.Usage.PromptTokens() != 12 || a.Usage.OutputTokens != 3 || a.StopReason != "tool_use" {
		t.Errorf("got %+v %+v", a, a.Usage)
	}
	if _, err := anthropic.ParseMessage([]byte(`{"type":"message","content":[],"usage":{"input_tokens":5}}`)); err == nil {
		t.Error("usage without output_tokens accepted")
	}
	if a, err := anthropic.ParseMessage([]byte(`{"type":"message","content":[{"type":"text","text":"x"}]}`)); err != nil || a.Usage != nil {
		t.Errorf("no usage: %+v %v", a, err)
	}
}
