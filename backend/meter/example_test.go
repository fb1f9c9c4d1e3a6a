package meter_test

import (
	"fmt"

	"github.com/quotagate/quotagate/backend/meter"
)

// One metered call, with seed 000's figures: "问题" in, "你好 AI" out,
// settles 15 units under utf8-bytes-v1. A door (the gateway's chat door
// for chat completions) fills the Request and turns each upstream event
// into an Observation.
func Example() {
	m, _ := meter.New(meter.NameUTF8Bytes)
	req := meter.Request{Model: "demo", Stream: true, OutputCap: 20, HasOutputCap: true,
		Messages: []meter.Message{{Role: "user", Text: "问题"}}}
	policy := meter.ReservePolicy{DefaultOutputUnits: 1000}
	run := meter.NewRun(m, policy, meter.DefaultPromptBand, req, "")
	fmt.Println("reserve", run.ReserveUnits()) // held at admission

	for _, o := range []meter.Observation{
		{Text: "你好"},
		{Text: " AI"},
		{Usage: &meter.Usage{PromptTokens: 6, CompletionTokens: 9, TotalTokens: 15, HasTotal: true}},
		{End: true},
	} {
		run.Observe(o)
	}
	v := run.Verdict()
	fmt.Println(v.Trusted, v.SpendUnits, v.Reason)
	// Output:
	// reserve 26
	// true 15 trusted_usage
}
