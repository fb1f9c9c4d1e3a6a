package gateway_test

import (
	"io"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/gateway"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/meter"
	"github.com/quotagate/quotagate/backend/upstream/demo"
)

// Under the tiktoken meter (the default of `make run`), a demo upstream that
// reports the meter's own counts is trusted: the run settles prompt +
// completion tokens.
func TestTiktokenMeterSettlesDemoUsage(t *testing.T) {
	e := newEnv(t, envOpts{
		meter:   meter.NameTiktoken,
		tenants: []ledger.Tenant{tenant("a", 10_000, 2)},
		plan:    demo.Plan{Text: "Hello there, this is a simulated answer."},
		demo: func(o *demo.Options, m meter.Meter) {
			o.PromptUnits = func(body []byte) int64 { return int64(gateway.ChatInputUnits(m, body)) }
			o.CompletionUnits = func(model, text string) int64 { return int64(m.Count(model, text)) }
		},
	})
	m, _ := meter.New(meter.NameTiktoken)
	for _, stream := range []string{"true", "false"} {
		resp := e.chat(ctxT(t), "key-a", `{"model":"demo-chat","stream":`+stream+`,"max_tokens":50,"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Say hello."}]}`, "")
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		run := e.waitEnd(runID(t, resp))
		in := gateway.ChatInputUnits(m, []byte(`{"model":"demo-chat","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Say hello."}]}`))
		want := in + m.Count("demo-chat", "Hello there, this is a simulated answer.")
		if run.Usage != ledger.UsageTrusted || run.SpentUnits != want {
			t.Errorf("stream=%s: run %+v, want trusted %d", stream, run, want)
		}
	}
}

// A model tiktoken does not count with its own encoding (demo-chat, like
// DeepSeek or Doubao) gets the wider band by default: a provider count 40 %
// above the gateway's is still trusted; with the tight band it is held.
func TestPromptBandFollowsModel(t *testing.T) {
	for _, tt := range []struct {
		name  string
		band  meter.PromptBand
		usage ledger.UsageStatus
	}{
		{"DefaultForeignBandTrusts", meter.PromptBand{}, ledger.UsageTrusted},
		{"TightBandHolds", meter.DefaultPromptBand, ledger.UsageUnknown},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, envOpts{
				meter:   meter.NameTiktoken,
				tenants: []ledger.Tenant{tenant("a", 10_000, 2)},
				plan:    demo.Plan{Text: "A simulated answer."},
				modify:  func(o *gateway.Options) { o.Band = tt.band },
				demo: func(o *demo.Options, m meter.Meter) {
					o.PromptUnits = func(body []byte) int64 { return int64(gateway.ChatInputUnits(m, body)) * 14 / 10 }
					o.CompletionUnits = func(model, text string) int64 { return int64(m.Count(model, text)) }
				},
			})
			long := strings.Repeat("Please summarise the design of a ledger. ", 20)
			resp := e.chat(ctxT(t), "key-a", `{"model":"demo-chat","max_tokens":50,"messages":[{"role":"user","content":"`+long+`"}]}`, "")
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if run := e.waitEnd(runID(t, resp)); run.Usage != tt.usage {
				t.Errorf("run %+v, want usage %s", run, tt.usage)
			}
		})
	}
}
