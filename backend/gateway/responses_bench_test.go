package gateway_test

import (
	"bufio"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
)

// TestFirstEventTime measures the time from sending a streaming request to
// reading its first data event, for the same demo answer through the chat
// door and through the Responses and Gemini doors (native and translated),
// and logs the medians: the added time to first event of each door's stream.
// QUOTAGATE_FIRST_EVENT_N sets the rounds (default 30):
//
//	QUOTAGATE_FIRST_EVENT_N=300 go test -run TestFirstEventTime -v ./backend/gateway/
func TestFirstEventTime(t *testing.T) {
	const geminiStreamPath = "/v1beta/models/demo-chat:streamGenerateContent?alt=sse"
	n := 30
	if v, err := strconv.Atoi(os.Getenv("QUOTAGATE_FIRST_EVENT_N")); err == nil && v > 0 {
		n = v
	}
	cases := []struct {
		name, path, body, first string
		protocols               []string
		direct                  bool // to the demo itself, no gateway: the baseline of each protocol
	}{
		{"chat, demo direct", "/chat/completions", `{"model":"demo-chat","stream":true,"messages":[{"role":"user","content":"say hi"}]}`, `{"id":"chatcmpl-`, []string{"chat"}, true},
		{"responses, demo direct", "/responses", `{"model":"demo-chat","stream":true,"input":"say hi"}`, `"type":"response.created"`, []string{"chat"}, true},
		{"chat", "/v1/chat/completions", `{"model":"demo-chat","stream":true,"messages":[{"role":"user","content":"say hi"}]}`, `{"id":"chatcmpl-`, []string{"chat", "responses"}, false},
		{"responses native", "/v1/responses", `{"model":"demo-chat","stream":true,"input":"say hi"}`, `"type":"response.created"`, []string{"chat", "responses"}, false},
		{"responses translated", "/v1/responses", `{"model":"demo-chat","stream":true,"input":"say hi"}`, `"type":"response.created"`, []string{"chat"}, false},
		{"gemini native", geminiStreamPath, `{"contents":[{"parts":[{"text":"say hi"}]}]}`, `{"candidates":`, []string{"chat", "gemini"}, false},
		{"gemini translated", geminiStreamPath, `{"contents":[{"parts":[{"text":"say hi"}]}]}`, `{"candidates":`, []string{"chat"}, false},
	}
	envs := make([]*env, len(cases))
	for i, c := range cases {
		envs[i] = responsesEnv(t, c.protocols, envOpts{tenants: []ledger.Tenant{tenant("a", ledger.MaxUnits/2, 4)}})
	}
	times := make([][]time.Duration, len(cases))
	for round := range n {
		for i, c := range cases { // interleaved, so drift hits every path alike
			e := envs[i]
			url := e.srv.URL + c.path
			if c.direct {
				url = e.demo.URL() + c.path
			}
			req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(c.body))
			req.Header.Set("Authorization", "Bearer key-a")
			start := time.Now()
			resp, err := e.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(resp.Body)
			var first string
			for first == "" {
				line, err := br.ReadString('\n')
				if err != nil {
					t.Fatalf("%s: no data event: %v", c.name, err)
				}
				if d, ok := strings.CutPrefix(line, "data: "); ok {
					first = d
				}
			}
			times[i] = append(times[i], time.Since(start))
			if round == 0 && !strings.Contains(first, c.first) {
				t.Errorf("%s: first event %.120s, want %s", c.name, first, c.first)
			}
			for {
				if _, err := br.ReadString('\n'); err != nil {
					break
				}
			}
			resp.Body.Close()
		}
	}
	median := func(d []time.Duration) time.Duration {
		s := slices.Clone(d)
		slices.Sort(s)
		return s[len(s)/2]
	}
	chat := median(times[2])
	for i, c := range cases {
		m := median(times[i])
		t.Logf("time to first event, %-22s median %8v  (%+v vs chat through quotagate, %d rounds)", c.name, m, m-chat, n)
	}
}
