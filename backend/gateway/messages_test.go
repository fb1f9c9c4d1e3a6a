package gateway_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/anthropic"
	"github.com/quotagate/quotagate/backend/gateway"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/meter"
	"github.com/quotagate/quotagate/backend/ratelimit"
	"github.com/quotagate/quotagate/backend/upstream"
	"github.com/quotagate/quotagate/backend/upstream/demo"
)

// The Messages door over real sockets, both paths: a demo upstream that
// speaks Messages natively, and one that speaks chat completions only (the
// door translates). The meter is utf8-bytes-v1, so every figure is bytes.

var messagesModes = []struct {
	name      string
	protocols []string
}{
	{"Native", []string{"chat", "messages"}},
	{"Translated", nil},
}

func messagesEnv(t *testing.T, protocols []string, budget ledger.Units) *env {
	return newEnv(t, envOpts{tenants: []ledger.Tenant{tenant("a", budget, 2)},
		upstream: upstream.Options{Protocols: protocols}})
}

// anthropicEvents reads an Anthropic SSE body: each event's name and data.
type anthropicEvent struct{ name, data string }

func readEvents(t *testing.T, r io.Reader) []anthropicEvent {
	t.Helper()
	var out []anthropicEvent
	var cur anthropicEvent
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data = strings.TrimPrefix(line, "data: ")
		case line == "" && cur.data != "":
			out = append(out, cur)
			cur = anthropicEvent{}
		}
	}
	return out
}

func names(evs []anthropicEvent) string {
	var n []string
	for _, e := range evs {
		n = append(n, e.name)
	}
	return strings.Join(n, " ")
}

func (e *env) messages(key, body string, hdr map[string]string) *http.Response {
	e.t.Helper()
	h := map[string]string{"x-api-key": key, "anthropic-version": "2023-06-01"}
	for k, v := range hdr {
		h[k] = v
	}
	return e.do(ctxT(e.t), http.MethodPost, "/v1/messages?beta=true", "", body, h)
}

const messagesStream = `{"model":"demo-chat","max_tokens":50,"stream":true,
 "system":[{"type":"text","text":"问题","cache_control":{"type":"ephemeral"}}],
 "messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`

// TestMessagesStreamSettles: Anthropic's event order, X-Run-Id, and a run
// settled on trusted usage at exactly the bytes in and out (seed 000's
// rule: "问题" + "hi" = 8 in).
func TestMessagesStreamSettles(t *testing.T) {
	for _, m := range messagesModes {
		t.Run(m.name, func(t *testing.T) {
			e := messagesEnv(t, m.protocols, 10_000)
			resp := e.messages("key-a", messagesStream, map[string]string{demo.PlanHeader: "text=" + url.QueryEscape("你好 AI")})
			defer resp.Body.Close()
			id := runID(t, resp)
			if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
				t.Fatalf("status %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			evs := readEvents(t, resp.Body)
			want := "message_start content_block_start ping content_block_delta content_block_delta content_block_stop message_delta message_stop"
			if got := names(evs); got != want {
				t.Errorf("events %s\nwant   %s", got, want)
			}
			var tl anthropic.Tally
			for _, ev := range evs {
				if _, err := tl.Observe(ev.name, []byte(ev.data)); err != nil {
					t.Errorf("%s: %v", ev.name, err)
				}
			}
			u, ok := tl.Usage()
			if !ok || tl.Output() != "你好 AI" || u.PromptTokens() != 8 || u.OutputTokens != 9 {
				t.Errorf("the client saw %q, usage %+v (complete %v)", tl.Output(), u, ok)
			}
			run := e.waitEnd(id)
			if run.Usage != ledger.UsageTrusted || run.SpentUnits != 17 || run.ReserveUnits != 58 {
				t.Errorf("run %+v, want trusted at 8 + 9 = 17 of a reserve 8 + 50", run)
			}
			if m.protocols != nil && !strings.Contains(run.Evidence, "usage 8 in (4 cached, 2 written to the cache) + 9 out") {
				t.Errorf("evidence %q does not keep the cache figures", run.Evidence)
			}
			if b := e.balance("a"); b.SpentUnits != 17 || b.HeldUnits != 0 {
				t.Errorf("balance %+v", b)
			}
			// What reached the upstream.
			st := e.demo.Stats()
			got := st.Requests[len(st.Requests)-1]
			if m.protocols != nil {
				if got.Header.Get("Anthropic-Version") != "2023-06-01" || !strings.Contains(string(got.Body), `"cache_control"`) {
					t.Errorf("native request: headers %v body %s", got.Header, got.Body)
				}
			} else if got.Header.Get("Anthropic-Version") != "" || !got.IncludeUsage || strings.Contains(string(got.Body), "cache_control") {
				t.Errorf("translated request: headers %v include_usage %v body %s", got.Header, got.IncludeUsage, got.Body)
			}
		})
	}
}

// TestMessagesNativeHeaders: a native upstream gets the client's
// anthropic-version and anthropic-beta, the version defaulting to
// 2023-06-01, and the upstream's own key as x-api-key — never the tenant's.
func TestMessagesNativeHeaders(t *testing.T) {
	e := newEnv(t, envOpts{tenants: []ledger.Tenant{tenant("a", 10_000, 2)},
		upstream: upstream.Options{Protocols: []string{"chat", "messages"}, APIKey: "upstream-secret"},
		demo:     func(o *demo.Options, _ meter.Meter) { o.APIKey = "upstream-secret" }})
	body := `{"model":"demo-chat","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`
	resp := e.do(ctxT(t), http.MethodPost, "/v1/messages", "key-a", body,
		map[string]string{"anthropic-beta": "claude-code-20250219,interleaved-thinking-2025-05-14"})
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	h := e.demo.Stats().Requests[0].Header
	if h.Get("X-Api-Key") != "upstream-secret" || h.Get("Authorization") != "" || h.Get("Anthropic-Version") != "2023-06-01" ||
		h.Get("Anthropic-Beta") != "claude-code-20250219,interleaved-thinking-2025-05-14" {
		t.Errorf("upstream headers %v", h)
	}
	if run := e.waitEnd(runID(t, resp)); run.Usage != ledger.UsageTrusted {
		t.Errorf("run %+v", run)
	}
}

// TestMessagesToolRoundTrip: not streaming, a scripted call comes back as a
// tool_use block, its tool_result goes up, the answer acknowledges it.
func TestMessagesToolRoundTrip(t *testing.T) {
	plan := map[string]string{demo.PlanHeader: "call=get_weather&args=" + url.QueryEscape(`{"city":"Paris"}`)}
	for _, m := range messagesModes {
		t.Run(m.name, func(t *testing.T) {
			e := messagesEnv(t, m.protocols, 10_000)
			first := `{"model":"demo-chat","max_tokens":50,"tools":[{"name":"get_weather","input_schema":{"type":"object"},"defer_loading":true}],
			 "messages":[{"role":"user","content":"w?"}]}`
			resp := e.messages("key-a", first, plan)
			msg := decode[struct {
				Type       string `json:"type"`
				StopReason string `json:"stop_reason"`
				Content    []struct {
					Type, ID, Name string
					Input          json.RawMessage
				} `json:"content"`
			}](t, resp.Body)
			resp.Body.Close()
			if msg.Type != "message" || msg.StopReason != "tool_use" || len(msg.Content) != 1 || msg.Content[0].Name != "get_weather" ||
				string(msg.Content[0].Input) != `{"city":"Paris"}` {
				t.Fatalf("message %+v", msg)
			}
			if run := e.waitEnd(runID(t, resp)); run.Usage != ledger.UsageTrusted || run.SpentUnits != 2+int64Units(len(`get_weather{"city":"Paris"}`)) {
				t.Errorf("first run %+v", run)
			}
			second := `{"model":"demo-chat","max_tokens":50,"messages":[{"role":"user","content":"w?"},
			 {"role":"assistant","content":[{"type":"tool_use","id":"` + msg.Content[0].ID + `","name":"get_weather","input":{"city":"Paris"}}]},
			 {"role":"user","content":[{"type":"tool_result","tool_use_id":"` + msg.Content[0].ID + `","content":"18°C"}]}]}`
			resp = e.messages("key-a", second, plan)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !strings.Contains(string(b), demo.AckPrefix+"18°C") || !strings.Contains(string(b), `"stop_reason":"end_turn"`) {
				t.Errorf("second answer %s", b)
			}
			if run := e.waitEnd(runID(t, resp)); run.Usage != ledger.UsageTrusted {
				t.Errorf("second run %+v", run)
			}
		})
	}
}

func int64Units(n int) ledger.Units { return ledger.Units(n) }

// TestMessagesCountTokensIsReserveInput: count_tokens is answered locally
// (the upstream sees nothing) and equals the input part of the reserve of
// the same body, system and tools included.
func TestMessagesCountTokensIsReserveInput(t *testing.T) {
	e := messagesEnv(t, nil, 10_000)
	msgs := `"system":"问题","tools":[{"name":"f","input_schema":{"type":"object"}}],
	 "messages":[{"role":"user","content":[{"type":"text","text":"hi"},{"type":"tool_result","tool_use_id":"t","content":"done"}]}]`
	resp := e.do(ctxT(t), http.MethodPost, "/v1/messages/count_tokens?beta=true", "", `{"model":"demo-chat",`+msgs+`}`,
		map[string]string{"x-api-key": "key-a"})
	got := decode[struct {
		InputTokens int64 `json:"input_tokens"`
	}](t, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || got.InputTokens != 12 { // 问题 6 + hi 2 + done 4
		t.Fatalf("%d: %+v", resp.StatusCode, got)
	}
	if n := e.demo.Stats().Received; n != 0 {
		t.Errorf("count_tokens reached the upstream %d times", n)
	}
	resp = e.messages("key-a", `{"model":"demo-chat","max_tokens":40,`+msgs+`}`, nil)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	run := e.waitEnd(runID(t, resp))
	if run.ReserveUnits-40 != ledger.Units(got.InputTokens) {
		t.Errorf("reserve %d − max_tokens 40 ≠ count_tokens %d", run.ReserveUnits, got.InputTokens)
	}
}

// TestMessagesCutStream: a stream the upstream cuts ends with one error
// event (api_error, upstream_interrupted) and no message_stop; the run is
// interrupted with its hold kept, then reconciled.
func TestMessagesCutStream(t *testing.T) {
	for _, m := range messagesModes {
		t.Run(m.name, func(t *testing.T) {
			e := messagesEnv(t, m.protocols, 10_000)
			resp := e.messages("key-a", messagesStream, map[string]string{demo.PlanHeader: "kind=cut&after=1"})
			id := runID(t, resp)
			evs := readEvents(t, resp.Body)
			resp.Body.Close()
			last := evs[len(evs)-1]
			if last.name != "error" || !strings.Contains(last.data, `"type":"api_error"`) || !strings.Contains(last.data, "upstream_interrupted") {
				t.Errorf("last event %+v", last)
			}
			if s := names(evs); strings.Contains(s, "message_stop") || strings.Count(s, "error") != 1 {
				t.Errorf("events %s", s)
			}
			run := e.waitEnd(id)
			if run.Status != ledger.RunInterrupted || run.Usage != ledger.UsageUnknown || run.HeldUnits != run.ReserveUnits {
				t.Fatalf("run %+v", run)
			}
			r, err := e.store.Reconcile(ctxT(t), id, 5, "provider console: 5", ledger.ActorAdmin)
			if err != nil || r.Usage != ledger.UsageReconciled || r.HeldUnits != 0 || r.SpentUnits != 5 {
				t.Errorf("reconcile: %+v %v", r, err)
			}
		})
	}
}

// TestMessagesNoUsageHolds: an answer without usage keeps the hold.
func TestMessagesNoUsageHolds(t *testing.T) {
	for _, m := range messagesModes {
		for _, stream := range []bool{true, false} {
			t.Run(m.name+"/stream="+strconv.FormatBool(stream), func(t *testing.T) {
				e := messagesEnv(t, m.protocols, 10_000)
				body := strings.Replace(messagesStream, `"stream":true`, `"stream":`+strconv.FormatBool(stream), 1)
				resp := e.messages("key-a", body, map[string]string{demo.PlanHeader: "kind=no-usage"})
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				run := e.waitEnd(runID(t, resp))
				if run.Usage != ledger.UsageUnknown || run.HeldUnits != run.ReserveUnits {
					t.Errorf("run %+v", run)
				}
			})
		}
	}
}

// TestMessagesRefusalsAreAnthropicShaped: every refusal at this door has
// Anthropic's shape and names quotagate's code.
func TestMessagesRefusalsAreAnthropicShaped(t *testing.T) {
	e := messagesEnv(t, nil, 20)
	cases := []struct {
		name, key, body, plan string
		status                int
		typ, code             string
	}{
		{"NoKey", "", `{}`, "", 401, "authentication_error", "invalid_api_key"},
		{"WrongKey", "nope", `{}`, "", 401, "authentication_error", "invalid_api_key"},
		{"Malformed", "key-a", `{"model":`, "", 400, "invalid_request_error", "invalid_request"},
		{"Accounting", "key-a", `{"model":"demo-chat","max_tokens":5,"usage":{},"messages":[{"role":"user","content":"x"}]}`, "", 400, "invalid_request_error", "invalid_request"},
		{"UnknownModel", "key-a", `{"model":"claude-opus-5","max_tokens":5,"messages":[{"role":"user","content":"x"}]}`, "", 404, "not_found_error", "model_not_found"},
		{"Budget", "key-a", `{"model":"demo-chat","max_tokens":32000,"messages":[{"role":"user","content":"x"}]}`, "", 402, "billing_error", "insufficient_budget"},
		{"UpstreamRefused", "key-a", `{"model":"demo-chat","max_tokens":5,"messages":[{"role":"user","content":"x"}]}`, "kind=error&status=400", 400, "api_error", "demo_error"}, // an upstream 4xx passes through, so SDKs decide as against the provider
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hdr := map[string]string{}
			if c.plan != "" {
				hdr[demo.PlanHeader] = c.plan
			}
			resp := e.messages(c.key, c.body, hdr)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var got struct {
				Type  string `json:"type"`
				Error struct{ Type, Message string }
			}
			if retry := resp.Header.Get("X-Should-Retry"); (c.status < 429) != (retry == "false") {
				t.Errorf("x-should-retry %q on a %d", retry, resp.StatusCode)
			}
			if resp.StatusCode != c.status || json.Unmarshal(b, &got) != nil || got.Type != "error" || got.Error.Type != c.typ ||
				!strings.Contains(got.Error.Message, "(quotagate: "+c.code+")") {
				t.Errorf("%d %s, want %d %s with %s", resp.StatusCode, b, c.status, c.typ, c.code)
			}
		})
	}
}

// TestAnthropicKeyAndModels: x-api-key authenticates on every /v1 route;
// GET /v1/models answers Anthropic's list shape to an Anthropic client.
func TestAnthropicKeyAndModels(t *testing.T) {
	e := messagesEnv(t, nil, 10_000)
	resp := e.do(ctxT(t), http.MethodGet, "/v1/balance", "", "", map[string]string{"x-api-key": "key-a"})
	if b := decode[ledger.Balance](t, resp.Body); resp.StatusCode != 200 || b.BudgetUnits != 10_000 {
		t.Errorf("balance by x-api-key: %d %+v", resp.StatusCode, b)
	}
	resp.Body.Close()
	resp = e.do(ctxT(t), http.MethodGet, "/v1/balance", "key-a", "", map[string]string{"x-api-key": "key-b"})
	if resp.StatusCode != 401 {
		t.Errorf("two different keys: %d", resp.StatusCode)
	}
	resp.Body.Close()
	resp = e.do(ctxT(t), http.MethodGet, "/v1/models", "", "", map[string]string{"x-api-key": "key-a", "anthropic-version": "2023-06-01"})
	list := decode[struct {
		Data []struct {
			Type, ID    string
			DisplayName string `json:"display_name"`
			CreatedAt   string `json:"created_at"`
		} `json:"data"`
		HasMore bool    `json:"has_more"`
		FirstID *string `json:"first_id"`
		LastID  *string `json:"last_id"`
	}](t, resp.Body)
	resp.Body.Close()
	if len(list.Data) != 1 || list.Data[0].Type != "model" || list.Data[0].ID != "demo-chat" || list.Data[0].DisplayName == "" ||
		list.Data[0].CreatedAt == "" || list.HasMore || list.FirstID == nil || *list.FirstID != "demo-chat" || list.LastID == nil {
		t.Errorf("Anthropic list %+v", list)
	}
	resp = e.do(ctxT(t), http.MethodGet, "/v1/models", "key-a", "", nil)
	openai := decode[struct {
		Object string `json:"object"`
		Data   []struct{ ID, Object string }
	}](t, resp.Body)
	resp.Body.Close()
	if openai.Object != "list" || len(openai.Data) != 1 || openai.Data[0].Object != "model" {
		t.Errorf("OpenAI list %+v", openai)
	}
	// Run endpoints take x-api-key too.
	resp = e.do(ctxT(t), http.MethodGet, "/v1/runs/run_nope", "", "", map[string]string{"x-api-key": "key-a"})
	if resp.StatusCode != 404 {
		t.Errorf("GET /v1/runs by x-api-key: %d", resp.StatusCode)
	}
	resp.Body.Close()
}

// TestMessagesThinkingSwitch: translated, thinking goes onto the upstream's
// reasoning switch (config reasoning_switch), or is dropped without one.
func TestMessagesThinkingSwitch(t *testing.T) {
	body := `{"model":"demo-chat","max_tokens":20000,"thinking":{"type":"enabled","budget_tokens":10000},"messages":[{"role":"user","content":"2+2?"}]}`
	for _, c := range []struct{ sw, want, absent string }{
		{"", "", `"thinking"`},
		{"thinking", `"thinking":{"type":"enabled"}`, `"reasoning_effort"`},
		{"reasoning_effort", `"reasoning_effort":"medium"`, `"thinking"`},
	} {
		t.Run("switch="+c.sw, func(t *testing.T) {
			e := newEnv(t, envOpts{tenants: []ledger.Tenant{tenant("a", 100_000, 2)}, upstream: upstream.Options{ReasoningSwitch: c.sw}})
			resp := e.messages("key-a", body, nil)
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			sent := string(e.demo.Stats().Requests[0].Body)
			if !strings.Contains(sent, c.want) || strings.Contains(sent, c.absent) {
				t.Errorf("sent %s, want %s and no %s", sent, c.want, c.absent)
			}
		})
	}
}

// TestMessagesRateLimited: the 429 family is rate_limit_error with
// Retry-After at this door.
func TestMessagesRateLimited(t *testing.T) {
	lim := ratelimit.New(ratelimit.Options{})
	lim.Replace(map[string]ratelimit.Limits{"a": {PerMinute: 1}})
	e := newEnv(t, envOpts{tenants: []ledger.Tenant{tenant("a", 10_000, 2)},
		modify: func(o *gateway.Options) { o.RateLimiter = lim }})
	body := `{"model":"demo-chat","max_tokens":5,"messages":[{"role":"user","content":"x"}]}`
	for i, want := range []int{200, 429} {
		resp := e.messages("key-a", body, nil)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("call %d: %d %s", i, resp.StatusCode, b)
		}
		if want == 429 && (resp.Header.Get("Retry-After") == "" || !strings.Contains(string(b), `"type":"rate_limit_error"`) ||
			!strings.Contains(string(b), "(quotagate: rate_limited)")) {
			t.Errorf("429: %v %s", resp.Header, b)
		}
	}
}

// TestMessagesUpstreamErrorEvent: a native upstream that sends an error
// event mid-stream and closes: the client gets one error event (the
// door's, naming quotagate's code), no message_stop, and the hold stays.
func TestMessagesUpstreamErrorEvent(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range []string{
			`event: message_start` + "\n" + `data: {"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"usage":{"input_tokens":2,"output_tokens":1}}}`,
			`event: content_block_start` + "\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`event: content_block_delta` + "\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}`,
			`event: error` + "\n" + `data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
		} {
			_, _ = io.WriteString(w, ev+"\n\n")
		}
	}))
	defer up.Close()
	client, err := upstream.New(upstream.Options{Name: "anthropic", BaseURL: up.URL + "/v1", Models: []string{"claude-x"},
		Protocols: []string{"messages"}})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, envOpts{tenants: []ledger.Tenant{tenant("a", 10_000, 2)},
		modify: func(o *gateway.Options) { o.Upstreams = []gateway.Upstream{client} }})
	resp := e.messages("key-a", `{"model":"claude-x","max_tokens":9,"stream":true,"messages":[{"role":"user","content":"hi"}]}`, nil)
	id := runID(t, resp)
	evs := readEvents(t, resp.Body)
	resp.Body.Close()
	if got := names(evs); got != "message_start content_block_start content_block_delta error" ||
		!strings.Contains(evs[len(evs)-1].data, "(quotagate: upstream_interrupted)") {
		t.Errorf("events %s, last %+v", got, evs[len(evs)-1])
	}
	if run := e.waitEnd(id); run.Status != ledger.RunInterrupted || run.Usage != ledger.UsageUnknown || run.HeldUnits != run.ReserveUnits {
		t.Errorf("run %+v", run)
	}
}

// TestMessagesCutBodyNoRetry: a whole answer that breaks off keeps the hold
// and says x-should-retry: false (a retry could pay twice), both paths.
func TestMessagesCutBodyNoRetry(t *testing.T) {
	for _, m := range messagesModes {
		t.Run(m.name, func(t *testing.T) {
			e := messagesEnv(t, m.protocols, 10_000)
			body := `{"model":"demo-chat","max_tokens":9,"messages":[{"role":"user","content":"hi"}]}`
			resp := e.messages("key-a", body, map[string]string{demo.PlanHeader: "kind=cut&after=1"})
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode < 500 || resp.Header.Get("X-Should-Retry") != "false" ||
				!strings.Contains(string(b), `"type":"error"`) || !strings.Contains(string(b), "(quotagate: upstream_interrupted)") {
				t.Errorf("%d %v %s", resp.StatusCode, resp.Header, b)
			}
			if run := e.waitEnd(runID(t, resp)); run.Usage != ledger.UsageUnknown || run.HeldUnits != run.ReserveUnits {
				t.Errorf("run %+v", run)
			}
		})
	}
}
