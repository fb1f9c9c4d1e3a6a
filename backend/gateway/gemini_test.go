package gateway_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/gemini"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/meter"
	"github.com/quotagate/quotagate/backend/upstream"
	"github.com/quotagate/quotagate/backend/upstream/demo"
)

// The Gemini door over real sockets, both paths: a demo upstream that
// speaks Gemini natively, and one that speaks chat completions only (the
// door translates). The meter is utf8-bytes-v1, so every figure is bytes.

var geminiModes = []struct {
	name      string
	protocols []string
}{
	{"Native", []string{"chat", "gemini"}},
	{"Translated", nil},
}

func (e *env) gemini(key, method, body string, hdr map[string]string) *http.Response {
	e.t.Helper()
	path := "/v1beta/models/demo-chat:" + method
	if method == "streamGenerateContent" {
		path += "?alt=sse"
	}
	h := map[string]string{"x-goog-api-key": key, "Content-Type": "application/json"}
	for k, v := range hdr {
		h[k] = v
	}
	return e.do(ctxT(e.t), http.MethodPost, path, "", body, h)
}

const geminiBody = `{"systemInstruction":{"parts":[{"text":"问题"}]},
 "contents":[{"role":"user","parts":[{"text":"hi"}]}],
 "generationConfig":{"maxOutputTokens":50,"thinkingConfig":{"includeThoughts":true}}}`

// geminiRead reads a Gemini SSE body through the native tally, as a client
// would see it.
func geminiRead(t *testing.T, r io.Reader) (*gemini.Tally, []string) {
	t.Helper()
	var tl gemini.Tally
	var datas []string
	for _, ev := range readEvents(t, r) {
		datas = append(datas, ev.data)
		_, _, _ = tl.Observe([]byte(ev.data))
	}
	return &tl, datas
}

// TestGeminiSettles: streamed and whole, natively and translated, the
// client gets Gemini's shape, X-Run-Id, and the run settles on trusted
// usage at exactly the bytes in and out ("问题" + "hi" = 8 in).
func TestGeminiSettles(t *testing.T) {
	for _, m := range geminiModes {
		for _, stream := range []bool{true, false} {
			t.Run(m.name+"/stream="+strconv.FormatBool(stream), func(t *testing.T) {
				e := messagesEnv(t, m.protocols, 10_000)
				method := map[bool]string{true: "streamGenerateContent", false: "generateContent"}[stream]
				resp := e.gemini("key-a", method, geminiBody, map[string]string{demo.PlanHeader: "text=" + url.QueryEscape("你好 AI")})
				defer resp.Body.Close()
				id := runID(t, resp)
				if resp.StatusCode != 200 {
					b, _ := io.ReadAll(resp.Body)
					t.Fatalf("status %d %s", resp.StatusCode, b)
				}
				var text string
				var u *gemini.Usage
				if stream {
					tl, _ := geminiRead(t, resp.Body)
					if tl.Problem() != "" {
						t.Errorf("the client's stream: %s", tl.Problem())
					}
					text = tl.Output()
					if got, ok := tl.Usage(); ok {
						u = &got
					}
				} else {
					b, _ := io.ReadAll(resp.Body)
					a, err := gemini.ParseResponse(b)
					if err != nil || a.FinishReason != "STOP" {
						t.Fatalf("body %s: %v", b, err)
					}
					text, u = a.Text, a.Usage
				}
				if text != "你好 AI" || u == nil || u.PromptTokens() != 8 || u.OutputTokens() != 9 {
					t.Errorf("the client saw %q, usage %+v", text, u)
				}
				run := e.waitEnd(id)
				if run.Usage != ledger.UsageTrusted || run.SpentUnits != 17 || run.ReserveUnits != 58 || run.Door != "gemini" {
					t.Errorf("run %+v, want trusted at 8 + 9 = 17 of a reserve 8 + 50 at the gemini door", run)
				}
				if b := e.balance("a"); b.SpentUnits != 17 || b.HeldUnits != 0 {
					t.Errorf("balance %+v", b)
				}
				st := e.demo.Stats()
				got := st.Requests[len(st.Requests)-1]
				if m.protocols != nil && !strings.Contains(string(got.Body), "systemInstruction") {
					t.Errorf("native request: headers %v body %s", got.Header, got.Body)
				}
				if m.protocols == nil && !strings.Contains(string(got.Body), `"messages"`) {
					t.Errorf("translated request body %s", got.Body)
				}
			})
		}
	}
}

// TestGeminiNativeKey: a native upstream gets its own key as
// x-goog-api-key — never the tenant's, never in the URL.
func TestGeminiNativeKey(t *testing.T) {
	e := newEnv(t, envOpts{tenants: []ledger.Tenant{tenant("a", 10_000, 2)},
		upstream: upstream.Options{Protocols: []string{"chat", "gemini"}, APIKey: "upstream-secret"},
		demo:     func(o *demo.Options, _ meter.Meter) { o.APIKey = "upstream-secret" }})
	resp := e.gemini("key-a", "streamGenerateContent", geminiBody, nil)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	h := e.demo.Stats().Requests[0].Header
	if h.Get("X-Goog-Api-Key") != "upstream-secret" || h.Get("Authorization") != "" || h.Get("X-Api-Key") != "" {
		t.Errorf("upstream headers %v", h)
	}
	if run := e.waitEnd(runID(t, resp)); run.Usage != ledger.UsageTrusted {
		t.Errorf("run %+v", run)
	}
}

// TestGeminiFunctionCallRoundTrip: the scripted call comes back as a
// functionCall part; the functionResponse sent next is acknowledged; both
// runs settle.
func TestGeminiFunctionCallRoundTrip(t *testing.T) {
	for _, m := range geminiModes {
		t.Run(m.name, func(t *testing.T) {
			e := messagesEnv(t, m.protocols, 10_000)
			plan := map[string]string{demo.PlanHeader: "call=get_weather&args=" + url.QueryEscape(`{"city":"Paris"}`)}
			tools := `"tools":[{"functionDeclarations":[{"name":"get_weather","parameters":{"type":"OBJECT","properties":{"city":{"type":"STRING"}}}}]}]`
			resp := e.gemini("key-a", "streamGenerateContent", `{"contents":[{"parts":[{"text":"Weather?"}]}],`+tools+`}`, plan)
			_, datas := geminiRead(t, resp.Body)
			resp.Body.Close()
			last := datas[len(datas)-1]
			if !strings.Contains(last, `"functionCall":{"id":"call_demo_1","name":"get_weather","args":{"city":"Paris"}}`) || !strings.Contains(last, `"finishReason":"STOP"`) {
				t.Fatalf("final chunk %s", last)
			}
			if run := e.waitEnd(runID(t, resp)); run.Usage != ledger.UsageTrusted {
				t.Errorf("call run %+v", run)
			}
			body := `{"contents":[{"parts":[{"text":"Weather?"}]},
				{"role":"model","parts":[{"functionCall":{"name":"get_weather","args":{"city":"Paris"}}}]},
				{"role":"user","parts":[{"functionResponse":{"name":"get_weather","response":{"temp":21}}}]}],` + tools + `}`
			resp = e.gemini("key-a", "generateContent", body, plan)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			a, err := gemini.ParseResponse(b)
			if err != nil || a.Text != demo.AckPrefix+`{"temp":21}` {
				t.Fatalf("answer %s: %v", b, err)
			}
			if run := e.waitEnd(runID(t, resp)); run.Usage != ledger.UsageTrusted {
				t.Errorf("answer run %+v", run)
			}
		})
	}
}

// TestGeminiCutStream: a stream the upstream cuts ends with one
// Google-shaped error event and no finishReason; the run is interrupted
// with its hold kept.
func TestGeminiCutStream(t *testing.T) {
	for _, m := range geminiModes {
		t.Run(m.name, func(t *testing.T) {
			e := messagesEnv(t, m.protocols, 10_000)
			resp := e.gemini("key-a", "streamGenerateContent", geminiBody, map[string]string{demo.PlanHeader: "kind=cut&after=1"})
			_, datas := geminiRead(t, resp.Body)
			resp.Body.Close()
			all := strings.Join(datas, "\n")
			last := datas[len(datas)-1]
			if !strings.Contains(last, `"status":"UNAVAILABLE"`) || !strings.Contains(last, "upstream_interrupted") ||
				strings.Count(all, `"error"`) != 1 || strings.Contains(all, "finishReason") {
				t.Errorf("events %s", all)
			}
			run := e.waitEnd(runID(t, resp))
			if run.Status != ledger.RunInterrupted || run.Usage != ledger.UsageUnknown || run.HeldUnits != run.ReserveUnits {
				t.Fatalf("run %+v", run)
			}
		})
	}
}

// TestGeminiNoUsageHolds: an answer without usage keeps the hold.
func TestGeminiNoUsageHolds(t *testing.T) {
	for _, m := range geminiModes {
		for _, method := range []string{"streamGenerateContent", "generateContent"} {
			t.Run(m.name+"/"+method, func(t *testing.T) {
				e := messagesEnv(t, m.protocols, 10_000)
				resp := e.gemini("key-a", method, geminiBody, map[string]string{demo.PlanHeader: "kind=no-usage"})
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

// TestGeminiRefusalsAreGoogleShaped: every refusal at this door has
// Google's shape, its status, and names quotagate's code.
func TestGeminiRefusalsAreGoogleShaped(t *testing.T) {
	e := messagesEnv(t, nil, 20)
	cases := []struct {
		name, path, key, body, plan string
		status                      int
		gstatus, code               string
	}{
		{"NoKey", "demo-chat:generateContent", "", `{}`, "", 401, "UNAUTHENTICATED", "invalid_api_key"},
		{"KeyInURL", "demo-chat:generateContent?key=key-a", "", `{}`, "", 401, "UNAUTHENTICATED", "invalid_api_key"},
		{"WrongKey", "demo-chat:generateContent", "nope", `{}`, "", 401, "UNAUTHENTICATED", "invalid_api_key"},
		{"Malformed", "demo-chat:generateContent", "key-a", `{"contents":`, "", 400, "INVALID_ARGUMENT", "invalid_request"},
		{"NotSSE", "demo-chat:streamGenerateContent", "key-a", `{}`, "", 400, "INVALID_ARGUMENT", "invalid_request"},
		{"UnknownMethod", "demo-chat:embedContent", "key-a", `{}`, "", 404, "NOT_FOUND", "not_found"},
		{"UnknownModel", "gemini-9:generateContent", "key-a", `{"contents":[{"parts":[{"text":"x"}]}]}`, "", 404, "NOT_FOUND", "model_not_found"},
		{"Budget", "demo-chat:generateContent", "key-a", `{"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"maxOutputTokens":32000}}`, "", 402, "RESOURCE_EXHAUSTED", "insufficient_budget"},
		{"UpstreamRefused", "demo-chat:generateContent", "key-a", `{"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"maxOutputTokens":5}}`, "kind=error&status=400", 400, "INVALID_ARGUMENT", "demo_error"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := map[string]string{}
			if c.key != "" {
				h["x-goog-api-key"] = c.key
			}
			if c.plan != "" {
				h[demo.PlanHeader] = c.plan
			}
			resp := e.do(ctxT(t), http.MethodPost, "/v1beta/models/"+c.path, "", c.body, h)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var g gemini.ErrorJSON
			if resp.StatusCode != c.status || json.Unmarshal(b, &g) != nil || g.Error.Status != c.gstatus || g.Error.Code != c.status ||
				!strings.Contains(g.Error.Message, c.code) {
				t.Errorf("%d %s, want %d %s naming %s", resp.StatusCode, b, c.status, c.gstatus, c.code)
			}
			if c.name == "KeyInURL" && !strings.Contains(g.Error.Message, "x-goog-api-key") {
				t.Errorf("the refusal does not say to use the header: %s", b)
			}
		})
	}
}

// TestGeminiCountTokensIsTheReserve: :countTokens answers the reserve's own
// input count, with no upstream call; the models list is Google's shape.
func TestGeminiCountTokensIsTheReserve(t *testing.T) {
	e := messagesEnv(t, nil, 10_000)
	for _, body := range []string{geminiBody, `{"generateContentRequest":{"model":"models/demo-chat",` + geminiBody[1:] + `}`} {
		resp := e.gemini("key-a", "countTokens", body, nil)
		var got struct{ TotalTokens int64 }
		_ = json.NewDecoder(resp.Body).Decode(&got)
		resp.Body.Close()
		if resp.StatusCode != 200 || got.TotalTokens != 8 || resp.Header.Get("X-Run-Id") != "" {
			t.Errorf("countTokens %d %+v", resp.StatusCode, got)
		}
	}
	if n := e.demo.Stats().Received; n != 0 {
		t.Errorf("countTokens reached the upstream %d times", n)
	}
	resp := e.do(ctxT(t), http.MethodGet, "/v1beta/models", "key-a", "", nil)
	var list struct {
		Models []struct {
			Name                       string
			SupportedGenerationMethods []string
		}
	}
	_ = json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	if len(list.Models) != 1 || list.Models[0].Name != "models/demo-chat" || len(list.Models[0].SupportedGenerationMethods) != 3 {
		t.Errorf("models %+v", list)
	}
	resp = e.do(ctxT(t), http.MethodGet, "/v1beta/models/nope", "key-a", "", nil)
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("an unknown model: %d", resp.StatusCode)
	}
}
