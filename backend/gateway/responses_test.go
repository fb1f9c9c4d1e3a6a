package gateway_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/gateway"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/responses"
	"github.com/quotagate/quotagate/backend/upstream"
	"github.com/quotagate/quotagate/backend/upstream/demo"
)

// The two paths of the Responses door: an upstream that speaks the
// Responses API gets the request natively, a chat-only one gets it
// translated to chat completions.
var responsesPaths = []struct {
	name      string
	protocols []string
	upPath    string
}{
	{"Native", []string{"chat", "responses"}, "/v1/responses"},
	{"Translated", []string{"chat"}, "/v1/chat/completions"},
}

func responsesEnv(t *testing.T, protocols []string, o envOpts) *env {
	t.Helper()
	o.upstream.Protocols = protocols
	return newEnv(t, o)
}

func (e *env) responses(ctx context.Context, key, body, plan string) *http.Response {
	e.t.Helper()
	var hdr map[string]string
	if plan != "" {
		hdr = map[string]string{demo.PlanHeader: plan}
	}
	return e.do(ctx, http.MethodPost, "/v1/responses", key, body, hdr)
}

// respStream is a Responses stream as a client reads it.
type respStream struct {
	names []string
	res   responses.Result
	raw   string
	err   error
}

func readRespSSE(t *testing.T, r io.Reader) respStream {
	t.Helper()
	var s respStream
	var rd responses.Reader
	var raw strings.Builder
	br := bufio.NewReader(r)
	name := ""
	for {
		line, err := br.ReadString('\n')
		raw.WriteString(line)
		l := strings.TrimRight(line, "\r\n")
		if n, ok := strings.CutPrefix(l, "event: "); ok {
			name = n
		}
		if d, ok := strings.CutPrefix(l, "data: "); ok {
			s.names = append(s.names, name)
			if err := rd.Observe(name, []byte(d)); err != nil {
				t.Errorf("event %s does not read: %v", name, err)
			}
		}
		if err != nil {
			if err != io.EOF {
				s.err = err
			}
			break
		}
	}
	s.res, s.raw = rd.Result(), raw.String()
	return s
}

func (s respStream) last() string {
	if len(s.names) == 0 {
		return ""
	}
	return s.names[len(s.names)-1]
}

func (s respStream) has(name string) bool {
	for _, n := range s.names {
		if n == name {
			return true
		}
	}
	return false
}

// Seed 000 through the Responses door: "问题" in (6 bytes), "你好 AI" out
// (9): settles 15 on both paths, streamed and not.
func TestResponsesSeed000Settles15(t *testing.T) {
	for _, p := range responsesPaths {
		for _, stream := range []bool{true, false} {
			name := p.name + map[bool]string{true: "Stream", false: "NonStreaming"}[stream]
			t.Run(name, func(t *testing.T) {
				e := responsesEnv(t, p.protocols, envOpts{plan: demo.Plan{Text: "你好 AI"}})
				body := `{"model":"demo-chat","stream":` + map[bool]string{true: "true", false: "false"}[stream] + `,"store":false,"input":[{"role":"user","content":[{"type":"input_text","text":"问题"}]}]}`
				resp := e.responses(ctxT(t), "key-a", body, "")
				defer resp.Body.Close()
				if resp.StatusCode != 200 {
					b, _ := io.ReadAll(resp.Body)
					t.Fatalf("status %d: %s", resp.StatusCode, b)
				}
				id := runID(t, resp)
				if stream {
					s := readRespSSE(t, resp.Body)
					want := "response.created response.in_progress response.output_item.added response.content_part.added"
					if got := strings.Join(s.names, " "); !strings.HasPrefix(got, want) || s.last() != "response.completed" {
						t.Errorf("events %s", got)
					}
					if s.res.Output != "你好 AI" || s.res.Usage == nil || s.res.Usage.Units() != 15 {
						t.Errorf("client read %+v", s.res)
					}
				} else {
					b, _ := io.ReadAll(resp.Body)
					r, err := responses.ParseResponse(b)
					if err != nil || r.Final != responses.FinalCompleted || r.Output != "你好 AI" {
						t.Errorf("response %s → %+v, %v", b, r, err)
					}
				}
				run := e.waitEnd(id)
				if run.Status != ledger.RunCompleted || run.Usage != ledger.UsageTrusted || run.SpentUnits != 15 || run.HeldUnits != 0 {
					t.Errorf("run %+v, want completed/trusted spent 15", run)
				}
				if b := e.balance("a"); b.SpentUnits != 15 || b.AvailableUnits != 95 || b.Active != 0 {
					t.Errorf("balance %+v", b)
				}
				reqs := e.demo.Stats().Requests
				if len(reqs) != 1 || reqs[0].Header.Get("X-Demo") != "" {
					t.Fatalf("upstream saw %d requests", len(reqs))
				}
				if p.name == "Native" && string(reqs[0].Body) != body {
					t.Errorf("native relay changed the body:\n%s\nwant\n%s", reqs[0].Body, body)
				}
				if p.name == "Translated" && !strings.Contains(string(reqs[0].Body), `"messages":[{"role":"user","content":"问题"}]`) {
					t.Errorf("translated body %s", reqs[0].Body)
				}
			})
		}
	}
}

// A function call and its round trip, on both paths: the call comes back as
// a function_call item; the function's output sent back is acknowledged.
func TestResponsesFunctionCallRoundTrip(t *testing.T) {
	for _, p := range responsesPaths {
		t.Run(p.name, func(t *testing.T) {
			e := responsesEnv(t, p.protocols, envOpts{tenants: []ledger.Tenant{tenant("a", 100000, 1)}})
			plan := demo.Plan{Call: "get_weather", Args: `{"city":"Paris"}`}.Encode()
			tools := `"tools":[{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}]`
			resp := e.responses(ctxT(t), "key-a", `{"model":"demo-chat","stream":true,`+tools+`,"input":"Weather in Paris?"}`, plan)
			s := readRespSSE(t, resp.Body)
			resp.Body.Close()
			id := runID(t, resp)
			if !s.has("response.function_call_arguments.delta") || !s.has("response.function_call_arguments.done") ||
				s.last() != "response.completed" || s.res.Output != `{"city":"Paris"}` {
				t.Fatalf("events %v, read %+v", s.names, s.res)
			}
			if run := e.waitEnd(id); run.Usage != ledger.UsageTrusted {
				t.Fatalf("call run %+v", run)
			}
			callID := "call_demo_1"
			second := `{"model":"demo-chat",` + tools + `,"input":[{"role":"user","content":"Weather in Paris?"},` +
				`{"type":"function_call","call_id":"` + callID + `","name":"get_weather","arguments":"{\"city\":\"Paris\"}"},` +
				`{"type":"function_call_output","call_id":"` + callID + `","output":"21C"}]}`
			resp = e.responses(ctxT(t), "key-a", second, plan)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			r, err := responses.ParseResponse(b)
			if err != nil || r.Output != demo.AckPrefix+"21C" {
				t.Fatalf("second answer %s: %+v %v", b, r, err)
			}
			if run := e.waitEnd(runID(t, resp)); run.Usage != ledger.UsageTrusted {
				t.Fatalf("round trip run %+v", run)
			}
		})
	}
}

// A cut stream ends with one error event (upstream_interrupted) and no
// response.completed; the run is held until a reconcile settles it. A
// stream without usage ends normally and keeps its hold.
func TestResponsesCutAndNoUsageHold(t *testing.T) {
	for _, p := range responsesPaths {
		t.Run(p.name+"Cut", func(t *testing.T) {
			e := responsesEnv(t, p.protocols, envOpts{})
			body := `{"model":"demo-chat","stream":true,"max_output_tokens":20,"input":"hi"}`
			resp := e.responses(ctxT(t), "key-a", body, demo.Plan{Kind: demo.KindCut, Parts: []string{"part", "more"}, CutAfter: 1}.Encode())
			s := readRespSSE(t, resp.Body)
			resp.Body.Close()
			id := runID(t, resp)
			if s.has("response.completed") || s.last() != "error" || s.res.ErrorCode != ledger.CodeUpstreamInterrupt || s.res.Output != "part" {
				t.Fatalf("events %v, read %+v\n%s", s.names, s.res, s.raw)
			}
			run := e.waitEnd(id)
			if run.Status != ledger.RunInterrupted || run.HeldUnits != 22 || run.Usage != ledger.UsageUnknown {
				t.Fatalf("run %+v, want interrupted with 22 held", run)
			}
			if _, err := e.store.Reconcile(context.Background(), id, 6, "demo plan: hi in, part out", ledger.ActorAdmin); err != nil {
				t.Fatal(err)
			}
			if b := e.balance("a"); b.SpentUnits != 6 || b.HeldUnits != 0 || b.AvailableUnits != 104 {
				t.Errorf("after reconcile %+v", b)
			}
		})
		t.Run(p.name+"NoUsage", func(t *testing.T) {
			e := responsesEnv(t, p.protocols, envOpts{})
			resp := e.responses(ctxT(t), "key-a", `{"model":"demo-chat","stream":true,"max_output_tokens":20,"input":"hi"}`, demo.Plan{Kind: demo.KindNoUsage}.Encode())
			s := readRespSSE(t, resp.Body)
			resp.Body.Close()
			if s.last() != "response.completed" || s.res.Usage != nil {
				t.Fatalf("events %v read %+v", s.names, s.res)
			}
			if run := e.waitEnd(runID(t, resp)); run.Usage == ledger.UsageTrusted || run.HeldUnits != 22 {
				t.Fatalf("run %+v, want the hold kept", run)
			}
		})
	}
}

// GET /v1/responses with Upgrade: websocket gets 426 at once (Codex then
// falls back to HTTP; a 400 would abort it).
func TestResponsesWebSocket426(t *testing.T) {
	e := newEnv(t, envOpts{})
	resp := e.do(ctxT(t), http.MethodGet, "/v1/responses", "key-a", "", map[string]string{"Upgrade": "websocket", "Connection": "Upgrade"})
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUpgradeRequired || !strings.Contains(string(b), "HTTP only") {
		t.Fatalf("status %d %s", resp.StatusCode, b)
	}
}

// previous_response_id needs the provider's stored state: relayed natively,
// refused with a clear 400 when translating (nothing admitted).
func TestResponsesPreviousResponseID(t *testing.T) {
	body := `{"model":"demo-chat","previous_response_id":"resp_1","input":"and then?"}`
	e := responsesEnv(t, []string{"chat"}, envOpts{})
	resp := e.responses(ctxT(t), "key-a", body, "")
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(b), "previous_response_id") || !strings.Contains(string(b), `"code":"invalid_request"`) {
		t.Fatalf("translated: %d %s", resp.StatusCode, b)
	}
	if bal := e.balance("a"); bal.HeldUnits != 0 || bal.SpentUnits != 0 || bal.Active != 0 {
		t.Errorf("a refused request changed the balance: %+v", bal)
	}
	n := responsesEnv(t, []string{"chat", "responses"}, envOpts{})
	resp = n.responses(ctxT(t), "key-a", body, "")
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(n.demo.Stats().Requests[0].Body) != body {
		t.Fatalf("native: %d", resp.StatusCode)
	}
}

// Bad input at this door is refused OpenAI-shaped, like at chat.
func TestResponsesRefusals(t *testing.T) {
	e := newEnv(t, envOpts{})
	for _, c := range []struct {
		body, code string
		status     int
	}{
		{`{"model":"demo-chat","input":"hi","usage":{"input_tokens":0}}`, ledger.CodeInvalidRequest, 400},
		{`{"model":"nope","input":"hi"}`, ledger.CodeModelNotFound, 404},
		{`{"model":"demo-chat","input":"hi","max_output_tokens":1000000}`, ledger.CodeInsufficientBudget, 402},
	} {
		resp := e.responses(ctxT(t), "key-a", c.body, "")
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || !strings.Contains(string(b), `"code":"`+c.code+`"`) {
			t.Errorf("%s → %d %s", c.body, resp.StatusCode, b)
		}
	}
	resp := e.responses(ctxT(t), "", `{"model":"demo-chat","input":"hi"}`, "")
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("no key → %d", resp.StatusCode)
	}
}

// Runs of the Responses door are runs like any other: the owner cancels one
// mid-stream (202, the upstream sees the disconnect), it ends cancelled with
// its reserve held, GET /v1/runs/{id} shows it, a second cancel is 409.
func TestResponsesCancel(t *testing.T) {
	for _, p := range responsesPaths {
		t.Run(p.name, func(t *testing.T) {
			e := responsesEnv(t, p.protocols, envOpts{tenants: []ledger.Tenant{tenant("a", 5000, 2)}, plan: demo.Plan{Kind: demo.KindStall}})
			resp := e.responses(ctxT(t), "key-a", `{"model":"demo-chat","stream":true,"max_output_tokens":1000,"input":"hi"}`, "")
			defer resp.Body.Close()
			id := runID(t, resp)
			del := e.do(ctxT(t), http.MethodDelete, "/v1/runs/"+string(id), "key-a", "", nil)
			del.Body.Close()
			if del.StatusCode != http.StatusAccepted {
				t.Fatalf("cancel: %d", del.StatusCode)
			}
			if err := e.demo.WaitDisconnects(ctxT(t), 1); err != nil {
				t.Fatal(err)
			}
			if s := readRespSSE(t, resp.Body); s.has("response.completed") {
				t.Errorf("a cancelled stream completed: %v", s.names)
			}
			run := e.waitEnd(id)
			if run.Status != ledger.RunCancelled || run.HeldUnits != 1002 {
				t.Errorf("run %+v, want cancelled with 1002 held", run)
			}
			again := e.do(ctxT(t), http.MethodDelete, "/v1/runs/"+string(id), "key-a", "", nil)
			again.Body.Close()
			get := e.do(ctxT(t), http.MethodGet, "/v1/runs/"+string(id), "key-a", "", nil)
			got := decode[ledger.Run](t, get.Body)
			get.Body.Close()
			if again.StatusCode != http.StatusConflict || got.Status != ledger.RunCancelled {
				t.Errorf("second cancel %d, GET %+v", again.StatusCode, got)
			}
		})
	}
}

// A native upstream's input_tokens_details.cached_tokens is kept in the
// run's evidence (the dashboard shows it); the charge is input + output.
func TestResponsesCachedTokensInEvidence(t *testing.T) {
	const text = "Hi there"
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/responses" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		ev := func(typ, data string) { fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, data) }
		ev("response.created", `{"type":"response.created","sequence_number":0,"response":{"id":"resp_c","status":"in_progress","output":[]}}`)
		ev("response.output_text.delta", `{"type":"response.output_text.delta","sequence_number":1,"item_id":"m","output_index":0,"content_index":0,"delta":"`+text+`"}`)
		ev("response.completed", fmt.Sprintf(`{"type":"response.completed","sequence_number":2,"response":{"id":"resp_c","status":"completed","output":[],`+
			`"usage":{"input_tokens":5,"input_tokens_details":{"cached_tokens":3},"output_tokens":%d,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":%d}}}`, len(text), 5+len(text)))
	}))
	t.Cleanup(up.Close)
	e := newEnv(t, envOpts{modify: func(o *gateway.Options) {
		u, err := upstream.New(upstream.Options{Name: "native", BaseURL: up.URL + "/v1", Models: []string{"demo-chat"}, Protocols: []string{"chat", "responses"}})
		if err != nil {
			t.Fatal(err)
		}
		o.Upstreams = []gateway.Upstream{u}
	}})
	resp := e.responses(ctxT(t), "key-a", `{"model":"demo-chat","stream":true,"input":"hello"}`, "")
	s := readRespSSE(t, resp.Body)
	resp.Body.Close()
	run := e.waitEnd(runID(t, resp))
	if s.last() != "response.completed" || run.Usage != ledger.UsageTrusted || run.SpentUnits != 5+ledger.Units(len(text)) ||
		!strings.Contains(run.Evidence, "(3 cached)") {
		t.Fatalf("events %v, run %+v", s.names, run)
	}
}

// A native response.failed is relayed and keeps the hold, even with a usage
// object in it: only a final response.completed (or response.incomplete)
// settles.
func TestResponsesFailedKeepsHold(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"resp_f\",\"status\":\"in_progress\",\"output\":[]}}\n\n")
		fmt.Fprint(w, "event: response.failed\ndata: {\"type\":\"response.failed\",\"sequence_number\":1,\"response\":{\"id\":\"resp_f\",\"status\":\"failed\",\"output\":[],"+
			"\"error\":{\"code\":\"server_error\",\"message\":\"boom\"},\"usage\":{\"input_tokens\":5,\"output_tokens\":0,\"total_tokens\":5}}}\n\n")
	}))
	t.Cleanup(up.Close)
	e := newEnv(t, envOpts{modify: func(o *gateway.Options) {
		u, err := upstream.New(upstream.Options{Name: "native", BaseURL: up.URL + "/v1", Models: []string{"demo-chat"}, Protocols: []string{"responses"}})
		if err != nil {
			t.Fatal(err)
		}
		o.Upstreams = []gateway.Upstream{u}
	}})
	resp := e.responses(ctxT(t), "key-a", `{"model":"demo-chat","stream":true,"max_output_tokens":10,"input":"hello"}`, "")
	s := readRespSSE(t, resp.Body)
	resp.Body.Close()
	run := e.waitEnd(runID(t, resp))
	if !s.has("response.failed") || s.has("response.completed") || run.Usage == ledger.UsageTrusted || run.HeldUnits != 15 {
		t.Fatalf("events %v, run %+v", s.names, run)
	}
}
