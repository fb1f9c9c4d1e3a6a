package gateway_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/gateway"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/upstream"
	"github.com/quotagate/quotagate/backend/upstream/demo"
)

func TestModelsAndBalance(t *testing.T) {
	e := newEnv(t, envOpts{tenants: []ledger.Tenant{tenant("a", 110, 1),
		{ID: "limited", KeyHashes: []string{ledger.HashKey("key-limited")}, BudgetUnits: 5, MaxConcurrent: 1, AllowedModels: []string{"other"}}}})
	resp := e.do(ctxT(t), http.MethodGet, "/v1/models", "key-a", "", nil)
	list := decode[struct {
		Object string `json:"object"`
		Data   []struct {
			ID     string `json:"id"`
			Object string `json:"object"`
		} `json:"data"`
	}](t, resp.Body)
	resp.Body.Close()
	if list.Object != "list" || len(list.Data) != 1 || list.Data[0].ID != "demo-chat" || list.Data[0].Object != "model" {
		t.Errorf("models %+v", list)
	}
	resp = e.do(ctxT(t), http.MethodGet, "/v1/models", "key-limited", "", nil)
	if b, _ := io.ReadAll(resp.Body); !strings.Contains(string(b), `"data":[]`) {
		t.Errorf("a tenant limited to other models sees %s", b)
	}
	resp.Body.Close()
	resp = e.chat(ctxT(t), "key-limited", `{"model":"demo-chat","messages":[{"role":"user","content":"hi"}]}`, "")
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("a model outside allowed_models: %d, want 404", resp.StatusCode)
	}
	resp = e.do(ctxT(t), http.MethodGet, "/v1/balance", "key-a", "", nil)
	b := decode[ledger.Balance](t, resp.Body)
	resp.Body.Close()
	if b.TenantID != "a" || b.BudgetUnits != 110 || b.AvailableUnits != 110 {
		t.Errorf("balance %+v", b)
	}
	for _, path := range []string{"/v1/models", "/v1/balance", "/v1/runs/x"} {
		resp := e.do(ctxT(t), http.MethodGet, path, "", "", nil)
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Errorf("%s without a key: %d", path, resp.StatusCode)
		}
	}
	resp = e.do(ctxT(t), http.MethodPost, "/v1/audio/speech", "key-a", "{}", nil)
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("unknown endpoint: %d", resp.StatusCode)
	}
}

// The operator's Cancel (admin API) ends anyone's run: cancelled, hold kept,
// upstream closed. A second cancel is run_ended.
func TestOperatorCancel(t *testing.T) {
	e := newEnv(t, envOpts{plan: demo.Plan{Kind: demo.KindStall}})
	resp := e.chat(ctxT(t), "key-a", hiBody, "")
	defer resp.Body.Close()
	id := runID(t, resp)
	if err := e.gw.Cancel(context.Background(), id, ledger.ActorAdmin); err != nil {
		t.Fatal(err)
	}
	if err := e.demo.WaitDisconnects(ctxT(t), 1); err != nil {
		t.Fatal(err)
	}
	s := readSSE(resp.Body)
	if s.done() || s.errorCode() != ledger.CodeRunEnded {
		t.Errorf("client stream %v, want a run_ended error event and no [DONE]", s.data)
	}
	if run := e.waitEnd(id); run.Status != ledger.RunCancelled || run.Usage != ledger.UsageUnknown || run.HeldUnits != 22 ||
		!strings.Contains(run.Evidence, "operator") {
		t.Errorf("run %+v", run)
	}
	if err := e.gw.Cancel(context.Background(), id, ledger.ActorAdmin); ledger.ErrorCode(err) != ledger.CodeRunEnded {
		t.Errorf("second cancel: %v", err)
	}
	if err := e.gw.Cancel(context.Background(), "run_nope", ledger.ActorAdmin); ledger.ErrorCode(err) != ledger.CodeRunNotFound {
		t.Errorf("cancel of an unknown run: %v", err)
	}
}

// A client that leaves a non-streaming call closes the upstream too.
func TestClientDisconnectNonStreaming(t *testing.T) {
	e := newEnv(t, envOpts{plan: demo.Plan{LatencyMin: 1 << 40}})
	ctx, cancel := context.WithCancel(ctxT(t))
	done := make(chan struct{})
	go func() {
		defer close(done)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.srv.URL+"/v1/chat/completions",
			strings.NewReader(`{"model":"demo-chat","max_tokens":20,"messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("Authorization", "Bearer key-a")
		if r, err := http.DefaultClient.Do(req); err == nil {
			r.Body.Close()
		}
	}()
	if err := e.demo.WaitRequests(ctxT(t), 1); err != nil {
		t.Fatal(err)
	}
	cancel()
	<-done
	if err := e.demo.WaitDisconnects(ctxT(t), 1); err != nil {
		t.Fatal(err)
	}
	ev := e.log.wait(t, evHold, "")
	if run := e.waitEnd(ev.RunID); run.Status != ledger.RunCancelled || run.HeldUnits != 22 {
		t.Errorf("run %+v, want cancelled with 22 held", run)
	}
}

// Events are relayed byte for byte — CRLF line ends, comments, multi-line
// data — except the usage chunk the client did not ask for.
func TestEventsRelayedUnchanged(t *testing.T) {
	const stream = ": ping\r\n\r\n" +
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"he\"}}]}\r\n\r\n" +
		"event: message\ndata: {\"choices\":[{\"index\":0,\n" +
		"data: \"delta\":{\"content\":\"llo\"}}]}\n\n" +
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":2,\"completion_tokens\":5,\"total_tokens\":7}}\r\n\r\n" +
		"data: [DONE]\r\n\r\n"
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, stream)
	}))
	defer up.Close()
	e := newEnv(t, envOpts{modify: func(o *gateway.Options) {
		c, err := upstream.New(upstream.Options{Name: "raw", BaseURL: up.URL + "/v1", Models: []string{"raw-model"}})
		if err != nil {
			t.Fatal(err)
		}
		o.Upstreams = []gateway.Upstream{c}
		o.KeepAlive = -1
	}})
	resp := e.chat(ctxT(t), "key-a", `{"model":"raw-model","stream":true,"max_tokens":20,"messages":[{"role":"user","content":"hi"}]}`, "")
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	want := strings.Replace(stream, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":2,\"completion_tokens\":5,\"total_tokens\":7}}\r\n\r\n", "", 1)
	if string(got) != want {
		t.Errorf("relayed\n%q\nwant\n%q", got, want)
	}
	if run := e.waitEnd(runID(t, resp)); run.Usage != ledger.UsageTrusted || run.SpentUnits != 7 {
		t.Errorf("run %+v, want trusted 7", run)
	}
}
