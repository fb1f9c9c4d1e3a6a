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
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/upstream"
)

// TestFinishThenMoreItems: a native Responses answer whose first item is
// done (a finish: no item open) and that then goes on with a second one. A
// client that reads to the end settles; one that leaves at the first finish
// does not have the whole answer, so the run ends cancelled with its hold
// although the upstream goes on to a trusted response.completed: trusted
// usage is charged only for an answer the client received whole, finish
// or not. The upstream sends the second
// item only once the gateway is reading on in the finish grace.
func TestFinishThenMoreItems(t *testing.T) {
	proceed := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		in, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		send := func(typ, rest string) {
			fmt.Fprintf(w, "event: %s\ndata: {\"type\":%q,%s}\n\n", typ, typ, rest)
			_ = rc.Flush()
		}
		send("response.created", `"response":{"id":"resp_m","status":"in_progress"}`)
		send("response.output_item.added", `"output_index":0,"item":{"type":"message","id":"msg_m"}`)
		send("response.output_text.delta", `"output_index":0,"delta":"Hi"`)
		send("response.output_item.done", `"output_index":0,"item":{"type":"message","id":"msg_m"}`)
		if strings.Contains(string(in), `"input":"gw"`) { // "gw": go on once the client has left
			select {
			case <-proceed:
			case <-r.Context().Done():
				return
			}
		}
		send("response.output_item.added", `"output_index":1,"item":{"type":"function_call","id":"fc_m"}`)
		send("response.function_call_arguments.delta", `"output_index":1,"delta":"{}"`)
		send("response.output_item.done", `"output_index":1,"item":{"type":"function_call","id":"fc_m"}`)
		send("response.completed", `"response":{"id":"resp_m","status":"completed","usage":{"input_tokens":2,"output_tokens":4,"total_tokens":6}}`)
	}))
	t.Cleanup(up.Close)
	e := newEnv(t, envOpts{tenants: []ledger.Tenant{tenant("a", 100_000, 4)},
		upstream: upstream.Options{Name: "items", BaseURL: up.URL + "/v1", Models: []string{"multi-item"}, Protocols: []string{"chat", "responses"}}})
	gw, srv, store := e.gw, e.srv, e.store

	call := func(leave bool) ledger.Run {
		t.Helper()
		input := "go"
		if leave {
			input = "gw"
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/v1/responses",
			strings.NewReader(`{"model":"multi-item","stream":true,"max_output_tokens":64,"input":"`+input+`"}`))
		req.Header.Set("Authorization", "Bearer key-a")
		res, err := http.DefaultClient.Do(req)
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("%v %v", res, err)
		}
		id := ledger.RunID(res.Header.Get("X-Run-Id"))
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			if leave && strings.Contains(sc.Text(), `"response.output_item.done"`) {
				break // the first finish
			}
		}
		cancel()
		res.Body.Close()
		if leave {
			for deadline := time.Now().Add(10 * time.Second); ; {
				st, ok := gw.Stream(id)
				if !ok {
					t.Fatalf("run %s ended before the gateway read on in the grace", id)
				}
				if st.Grace {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the gateway never noticed the client left: %+v", st)
				}
				time.Sleep(time.Millisecond) // polling an observed state, with a deadline
			}
			close(proceed)
		}
		for deadline := time.Now().Add(10 * time.Second); ; {
			run, err := store.Run(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			if run.Status.Ended() {
				return run
			}
			if time.Now().After(deadline) {
				t.Fatalf("run %s did not end: %+v", id, run)
			}
			time.Sleep(time.Millisecond) // polling an observed state, with a deadline
		}
	}
	if run := call(false); run.Status != ledger.RunCompleted || run.Usage != ledger.UsageTrusted {
		t.Fatalf("read to the end: %+v; want settled on trusted usage", run)
	}
	if run := call(true); run.Usage == ledger.UsageTrusted || run.Status != ledger.RunCancelled || run.HeldUnits != run.ReserveUnits {
		t.Fatalf("left at the first of two items: %+v; want cancelled with its hold", run)
	}
}
