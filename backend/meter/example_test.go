package meter_test

import (
	"fmt"
	"io"
	"strings"

	"github.com/quotagate/quotagate/backend/meter"
)

// The gateway's path for one streaming call, with seed 000's figures:
// "问题" in, "你好 AI" out, settles 15 units under utf8-bytes-v1.
func Example() {
	m, _ := meter.New(meter.NameUTF8Bytes)
	req, err := meter.ParseChatRequest([]byte(`{"model":"demo","stream":true,"max_tokens":20,
		"messages":[{"role":"user","content":"问题"}]}`))
	if err != nil {
		panic(err)
	}
	policy := meter.ReservePolicy{DefaultOutputUnits: 1000}
	est := policy.Estimate(m, req)
	fmt.Println("reserve", est.ReserveUnits) // held at admission

	up, _ := req.UpstreamBody() // asks the upstream for the usage chunk
	fmt.Println("asks usage", strings.Contains(string(up), `"include_usage":true`))

	upstream := "data: {\"choices\":[{\"delta\":{\"content\":\"你好\"}}]}\n\n" +
		": keep-alive\n\n" +
		"data: {\"choices\":[{\"delta\":{\"content\":\" AI\"}}]}\n\n" +
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":6,\"completion_tokens\":9,\"total_tokens\":15}}\n\n" +
		"data: [DONE]\n\n"
	sr := meter.NewSSEReader(strings.NewReader(upstream), 0)
	var tally meter.Tally
	relayed := 0
	for {
		ev, err := sr.Next()
		if err == io.EOF {
			break
		}
		ch, _ := tally.Observe(ev)
		if ch.UsageOnly() && !req.IncludeUsage {
			continue // the client did not ask for usage
		}
		relayed += len(ev.Raw) // write ev.Raw to the client unchanged
	}
	v := meter.Judge(tally.Judgement(m, req.Model, est.InputUnits, est.UncertainUnits, meter.DefaultPromptBand))
	fmt.Println(v.Trusted, v.SpendUnits, v.Reason)
	// Output:
	// reserve 26
	// asks usage true
	// true 15 trusted_usage
}
