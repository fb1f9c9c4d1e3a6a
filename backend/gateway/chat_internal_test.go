package gateway

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/meter"
	"github.com/quotagate/quotagate/backend/openai"
)

// updating reports -update (declared with the error goldens in errors_test.go):
// rewrite testdata/streams/*.golden.json too.
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

const usageShaped = `{"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}}`

// streamCase is how the gateway ran the call a .sse file answers.
type streamCase struct {
	Meter              string       `json:"meter"`
	Model              string       `json:"model"`
	InputUnits         ledger.Units `json:"input_units"`
	ClientIncludeUsage bool         `json:"client_include_usage"`
}

var streamCases = map[string]streamCase{
	"seed000_trusted":                {meter.NameUTF8Bytes, "demo", 6, false},
	"seed000_trusted_client_usage":   {meter.NameUTF8Bytes, "demo", 6, true},
	"seed000_cut_after_part":         {meter.NameUTF8Bytes, "demo", 2, false},
	"seed000_missing_usage":          {meter.NameUTF8Bytes, "demo", 6, false},
	"seed000_false_usage":            {meter.NameUTF8Bytes, "demo", 6, false},
	"seed000_usage_shaped_text":      {meter.NameUTF8Bytes, "demo", 2, false},
	"crlf_keepalive_multiline":       {meter.NameUTF8Bytes, "demo", 6, true},
	"cr_only":                        {meter.NameUTF8Bytes, "demo", 6, true},
	"done_without_blank_line":        {meter.NameUTF8Bytes, "demo", 6, true},
	"data_after_done":                {meter.NameUTF8Bytes, "demo", 6, true},
	"malformed_chunk":                {meter.NameUTF8Bytes, "demo", 6, true},
	"bad_usage_negative":             {meter.NameUTF8Bytes, "demo", 6, true},
	"upstream_error_event":           {meter.NameUTF8Bytes, "demo", 6, false},
	"reasoning_then_content":         {meter.NameUTF8Bytes, "demo", 6, false},
	"cumulative_usage_last_wins":     {meter.NameUTF8Bytes, "demo", 6, true},
	"cut_inside_event":               {meter.NameUTF8Bytes, "demo", 6, false},
	"cut_mid_json":                   {meter.NameUTF8Bytes, "demo", 6, false},
	"tool_call_arguments":            {meter.NameUTF8Bytes, "demo", 6, false},
	"tiktoken_trusted":               {meter.NameTiktoken, "gpt-4o", 20, false},
	"tiktoken_completion_below_text": {meter.NameTiktoken, "gpt-4o", 20, false},
	"tiktoken_prompt_out_of_band":    {meter.NameTiktoken, "gpt-4o", 20, false},
}

type streamGolden struct {
	Case       string     `json:"case"`
	Run        streamCase `json:"run"`
	Events     int        `json:"events"`
	DataEvents int        `json:"data_events"`
	Comments   int        `json:"comments"`
	Output     string     `json:"output_text"`
	Units      struct {
		Input    ledger.Units `json:"input"`
		Output   ledger.Units `json:"output"`
		Measured ledger.Units `json:"measured"`
	} `json:"units"`
	Usage         *meter.Usage `json:"usage"`
	SawDone       bool         `json:"saw_done"`
	Problem       string       `json:"problem,omitempty"`
	UpstreamError string       `json:"upstream_error,omitempty"`
	Verdict       struct {
		Trusted bool         `json:"trusted"`
		Spend   ledger.Units `json:"spend_units"`
		Reason  string       `json:"reason"`
		Detail  string       `json:"detail"`
	} `json:"verdict"`
	// What a gateway following the relay rule sends the client: every event
	// unchanged, except the usage-only chunk when the client did not ask and
	// an incomplete last event.
	RelayedBytes      int    `json:"relayed_bytes"`
	DroppedIncomplete int    `json:"dropped_incomplete_bytes,omitempty"`
	Relayed           string `json:"relayed"`
}

// runStream reads a stream as the gateway does: the chat door's answer
// reads each event, the meter tallies, the verdict judges.
func runStream(t *testing.T, name string, c streamCase, r io.Reader) (streamGolden, []byte) {
	t.Helper()
	m, err := meter.New(c.Meter)
	if err != nil {
		t.Fatal(err)
	}
	g := streamGolden{Case: name, Run: c}
	sr := openai.NewSSEReader(r, 1<<16)
	ans := chatAnswer{includeUsage: c.ClientIncludeUsage}
	var tally meter.Tally
	var raw, relayed bytes.Buffer
	for {
		ev, err := sr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: Next: %v", name, err)
		}
		raw.Write(ev.Raw)
		g.Events++
		if ev.Comment {
			g.Comments++
		}
		if ev.HasData() {
			g.DataEvents++
		}
		s := ans.event(ev)
		if s.observe {
			tally.Observe(s.obs)
		}
		if ev.Incomplete {
			g.DroppedIncomplete += len(ev.Raw)
		}
		relayed.Write(s.relay)
		relayed.Write(s.final)
	}
	j := tally.Judgement(m, c.Model, c.InputUnits, 0, meter.DefaultPromptBand)
	v := meter.Judge(j)
	g.Output = tally.Output()
	g.Units.Input = c.InputUnits
	g.Units.Output = m.Count(c.Model, g.Output)
	g.Units.Measured = v.MeasuredUnits
	g.Usage, g.SawDone, g.Problem, g.UpstreamError = tally.Usage(), tally.SawDone(), j.UsageProblem, tally.UpstreamError
	g.Verdict.Trusted, g.Verdict.Spend, g.Verdict.Reason, g.Verdict.Detail = v.Trusted, v.SpendUnits, v.Reason, v.Detail
	g.RelayedBytes, g.Relayed = relayed.Len(), relayed.String()
	return g, raw.Bytes()
}

func TestStreamGoldens(t *testing.T) {
	files, err := filepath.Glob("testdata/streams/*.sse")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".sse")
		seen[name] = true
		c, ok := streamCases[name]
		if !ok {
			t.Errorf("%s has no entry in streamCases", f)
			continue
		}
		t.Run(name, func(t *testing.T) {
			in, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			got, raw := runStream(t, name, c, bytes.NewReader(in))
			if !bytes.Equal(raw, in) {
				t.Errorf("Raw concatenation differs from the stream")
			}
			if c.ClientIncludeUsage && got.Relayed != string(in[:len(in)-got.DroppedIncomplete]) {
				t.Errorf("client asked for usage, but the relay changed the stream")
			}
			// Read one byte at a time, the verdict is the same.
			slow, _ := runStream(t, name, c, iotest.OneByteReader(bytes.NewReader(in)))
			if slow.Verdict != got.Verdict || slow.Output != got.Output {
				t.Errorf("one-byte reads changed the outcome: %+v vs %+v", slow.Verdict, got.Verdict)
			}
			out, err := json.MarshalIndent(got, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, '\n')
			golden := strings.TrimSuffix(f, ".sse") + ".golden.json"
			if updating() {
				if err := os.WriteFile(golden, out, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run TestStreamGoldens -update)", err)
			}
			if !bytes.Equal(out, want) {
				t.Errorf("%s differs from the golden file (rerun with -update and review the diff):\n%s", name, out)
			}
		})
	}
	var missing []string
	for name := range streamCases {
		if !seen[name] {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("streamCases without a .sse file: %v", missing)
	}
}

// TestStreamGoldenSeedFigures pins the seed figures independently of the
// golden files, so an -update cannot silently change them.
func TestStreamGoldenSeedFigures(t *testing.T) {
	for _, tc := range []struct {
		name    string
		trusted bool
		spend   ledger.Units
		meas    ledger.Units
		reason  string
	}{
		{"seed000_trusted", true, 15, 15, meter.ReasonTrusted},
		{"seed000_cut_after_part", false, 0, 6, meter.ReasonNoUsage},
		{"seed000_missing_usage", false, 0, 15, meter.ReasonNoUsage},
		{"seed000_false_usage", false, 0, 15, meter.ReasonMismatch},
		{"seed000_usage_shaped_text", true, 2 + ledger.Units(len(usageShaped)), 2 + ledger.Units(len(usageShaped)), meter.ReasonTrusted},
		{"crlf_keepalive_multiline", true, 15, 15, meter.ReasonTrusted},
		{"cr_only", true, 15, 15, meter.ReasonTrusted},
		{"done_without_blank_line", false, 0, 15, meter.ReasonNoDone},
		{"data_after_done", false, 0, 16, meter.ReasonBadEvidence},
		{"malformed_chunk", false, 0, 12, meter.ReasonBadEvidence},
		{"bad_usage_negative", false, 0, 15, meter.ReasonBadEvidence},
		{"upstream_error_event", false, 0, 12, meter.ReasonNoUsage},
		{"reasoning_then_content", true, 24, 24, meter.ReasonTrusted},
		{"cumulative_usage_last_wins", true, 15, 15, meter.ReasonTrusted},
		{"cut_inside_event", false, 0, 12, meter.ReasonNoUsage},            // " AI" never reached the client
		{"cut_mid_json", false, 0, 12, meter.ReasonNoUsage},                // a cut, not bad evidence
		{"tool_call_arguments", true, 6 + 28, 6 + 28, meter.ReasonTrusted}, // get_weather + {"city": + "巴黎"}
		{"tiktoken_trusted", true, 26, 26, meter.ReasonTrusted},
		{"tiktoken_completion_below_text", false, 0, 26, meter.ReasonMismatch},
		{"tiktoken_prompt_out_of_band", false, 0, 26, meter.ReasonPromptOutOfBand},
	} {
		in, err := os.ReadFile("testdata/streams/" + tc.name + ".sse")
		if err != nil {
			t.Fatal(err)
		}
		g, _ := runStream(t, tc.name, streamCases[tc.name], bytes.NewReader(in))
		if g.Verdict.Trusted != tc.trusted || g.Verdict.Spend != tc.spend || g.Units.Measured != tc.meas || g.Verdict.Reason != tc.reason {
			t.Errorf("%s: trusted %v spend %d measured %d reason %s; want %v %d %d %s", tc.name,
				g.Verdict.Trusted, g.Verdict.Spend, g.Units.Measured, g.Verdict.Reason, tc.trusted, tc.spend, tc.meas, tc.reason)
		}
	}
}

// A non-streaming chat answer, read whole by the chat door and judged by a
// meter run (seed 000: "问题" in, 6 bytes).
func TestCompletionJudgement(t *testing.T) {
	m, err := meter.New(meter.NameUTF8Bytes)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, body string
		trusted    bool
		spend      ledger.Units
		reason     string
	}{
		{"seed000 settles 15", `{"choices":[{"message":{"role":"assistant","content":"你好 AI"}}],"usage":{"prompt_tokens":6,"completion_tokens":9,"total_tokens":15}}`, true, 15, meter.ReasonTrusted},
		{"no usage", `{"choices":[{"message":{"content":"你好 AI"}}]}`, false, 0, meter.ReasonNoUsage},
		{"usage-shaped content is text", `{"choices":[{"message":{"content":"{\"usage\":{\"prompt_tokens\":0,\"completion_tokens\":0,\"total_tokens\":0}}"}}],"usage":{"prompt_tokens":6,"completion_tokens":0,"total_tokens":6}}`, false, 0, meter.ReasonMismatch},
		{"bad usage", `{"choices":[{"message":{"content":"你好 AI"}}],"usage":{"prompt_tokens":6,"completion_tokens":9.0}}`, false, 0, meter.ReasonBadEvidence},
		{"truncated body", `{"choices":[{"message":{"content":"你好 AI"}}],"usage":{"prompt_tokens":6,"comp`, false, 0, meter.ReasonIncomplete},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := meter.NewRun(m, meter.ReservePolicy{}, meter.DefaultPromptBand,
				meter.Request{Model: "demo", Messages: []meter.Message{{Role: "user", Text: "问题"}}}, "")
			o, out := chatAnswer{}.body([]byte(tc.body))
			if string(out) != tc.body {
				t.Errorf("the client's body is not the upstream's: %s", out)
			}
			run.Observe(o)
			v := run.Verdict()
			if v.Trusted != tc.trusted || v.SpendUnits != tc.spend || v.Reason != tc.reason {
				t.Errorf("got %+v", v)
			}
		})
	}
}
