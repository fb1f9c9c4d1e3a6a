package gateway_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/gateway"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/upstream/demo"
)

// smallSendBuffer shrinks the gateway's socket send buffer toward a client,
// so that a client that does not read fills it after a few events.
func smallSendBuffer(ctx context.Context, c net.Conn) context.Context {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(4096)
	}
	return ctx
}

// stalledClient is an HTTP client whose socket receive buffer is small; the
// test reads the response headers and then nothing.
func stalledClient() *http.Client {
	d := &net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		}); err != nil {
			return err
		}
		return serr
	}}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
}

// floodPlan sends far more than every buffer on the way can hold.
var floodPlan = demo.Plan{Parts: []string{strings.Repeat("x", 1024)}, Repeat: 100000}

const floodBody = `{"model":"demo-chat","stream":true,"max_tokens":1000,"messages":[{"role":"user","content":"hi"}]}`

// newFloodEnv is an env whose demo floods a stream queue of 2 toward a
// client socket with small buffers; modify sets the timeouts under test.
func newFloodEnv(t *testing.T, modify func(*gateway.Options)) *env {
	t.Helper()
	return newEnv(t, envOpts{
		tenants: []ledger.Tenant{tenant("a", 1<<20, 2)},
		plan:    floodPlan,
		connCtx: smallSendBuffer,
		modify: func(o *gateway.Options) {
			o.StreamQueueEvents = 2
			modify(o)
		},
	})
}

func openStalled(t *testing.T, e *env) (*http.Response, ledger.RunID) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctxT(t), http.MethodPost, e.srv.URL+"/v1/chat/completions", strings.NewReader(floodBody))
	req.Header.Set("Authorization", "Bearer key-a")
	resp, err := stalledClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp, runID(t, resp)
}

// Seed 000 §15.5: with a queue of 2 and a client that stops reading, the
// queue peaks at ≤ 2, the reader blocks (backpressure) instead of buffering,
// the upstream's own writes block, and a cancel reaches the upstream.
func TestSlowConsumerHasBoundedQueueAndBackpressure(t *testing.T) {
	e := newFloodEnv(t, func(o *gateway.Options) {
		o.WriteTimeout = time.Minute // the cut here is the cancel, not the timeout
		o.KeepAlive = -1
	})
	_, id := openStalled(t, e)
	waitBackpressure(t, e, id)
	st, ok := e.gw.Stream(id)
	if !ok {
		t.Fatal("stream not in flight")
	}
	if st.QueueCap != 2 || st.QueuePeak > 2 || st.QueuePeak < 1 || st.Backpressure < 1 {
		t.Errorf("stream %+v, want cap 2, 1 ≤ peak ≤ 2, backpressure ≥ 1", st)
	}
	// The upstream feels it: its writes block once the gateway stops reading.
	if err := e.demo.Wait(ctxT(t), func(s demo.Stats) bool { return len(s.Requests) == 1 && s.Requests[0].BlockedWrites > 0 }); err != nil {
		t.Fatal(err)
	}
	if c := e.gw.Counters(); c.QueuePeak > 2 || c.Backpressure < 1 {
		t.Errorf("counters %+v", c)
	}

	del := e.do(ctxT(t), http.MethodDelete, "/v1/runs/"+string(id), "key-a", "", nil)
	del.Body.Close()
	if del.StatusCode != http.StatusAccepted {
		t.Fatalf("cancel: %d", del.StatusCode)
	}
	if err := e.demo.WaitDisconnects(ctxT(t), 1); err != nil {
		t.Fatal(err)
	}
	run := e.waitEnd(id)
	if run.Status != ledger.RunCancelled || run.Usage != ledger.UsageUnknown || run.HeldUnits != 1002 {
		t.Errorf("run %+v, want cancelled/unknown with 1002 held", run)
	}
	if w := e.demo.Stats().Requests[0].ChunksWritten; w >= floodPlan.Repeat {
		t.Errorf("upstream wrote all %d parts: nothing held it back", w)
	}
}

// A client that stops reading without closing is cut after WriteTimeout;
// the upstream is closed and the hold kept.
func TestWriteTimeoutCutsClientThatStopsReading(t *testing.T) {
	e := newFloodEnv(t, func(o *gateway.Options) { o.WriteTimeout = 200 * time.Millisecond })
	_, id := openStalled(t, e)
	if err := e.demo.WaitDisconnects(ctxT(t), 1); err != nil {
		t.Fatal(err)
	}
	run := e.waitEnd(id)
	if run.Status != ledger.RunCancelled || run.Usage != ledger.UsageUnknown || run.HeldUnits != 1002 ||
		!strings.Contains(run.Evidence, "write timeout") {
		t.Errorf("run %+v, want cancelled/unknown, 1002 held, evidence naming the write timeout", run)
	}
}

// An upstream that goes silent after its headers is cut after
// UpstreamTimeout: the client hears upstream_timeout, the hold is kept.
func TestUpstreamSilenceIsCut(t *testing.T) {
	e := newEnv(t, envOpts{
		plan:   demo.Plan{Kind: demo.KindStall},
		modify: func(o *gateway.Options) { o.UpstreamTimeout = 100 * time.Millisecond },
	})
	resp := e.chat(ctxT(t), "key-a", `{"model":"demo-chat","stream":true,"max_tokens":20,"messages":[{"role":"user","content":"hi"}]}`, "")
	defer resp.Body.Close()
	id := runID(t, resp)
	s := readSSE(resp.Body)
	if s.done() || s.errorCode() != ledger.CodeUpstreamTimeout {
		t.Errorf("stream %v, want an upstream_timeout error event and no [DONE]", s.data)
	}
	if err := e.demo.WaitDisconnects(ctxT(t), 1); err != nil {
		t.Fatal(err)
	}
	if run := e.waitEnd(id); run.Status != ledger.RunInterrupted || run.HeldUnits != 22 {
		t.Errorf("run %+v, want interrupted with 22 held", run)
	}
}

// During an upstream gap the client gets ": keepalive" comments.
func TestKeepAliveDuringUpstreamGap(t *testing.T) {
	e := newEnv(t, envOpts{
		plan:   demo.Plan{Parts: []string{"a", "b"}, ChunkDelay: 300 * time.Millisecond},
		modify: func(o *gateway.Options) { o.KeepAlive = 50 * time.Millisecond },
	})
	resp := e.chat(ctxT(t), "key-a", `{"model":"demo-chat","stream":true,"max_tokens":20,"messages":[{"role":"user","content":"hi"}]}`, "")
	defer resp.Body.Close()
	id := runID(t, resp)
	var raw strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		raw.Write(buf[:n])
		if err != nil {
			break
		}
	}
	if !strings.Contains(raw.String(), ": keepalive\n\n") || !strings.HasSuffix(raw.String(), "data: [DONE]\n\n") {
		t.Errorf("stream lacks keep-alives or [DONE]:\n%s", raw.String())
	}
	if run := e.waitEnd(id); run.Usage != ledger.UsageTrusted || run.SpentUnits != 4 {
		t.Errorf("run %+v, want trusted 4 (keep-alives are not output)", run)
	}
}

// waitBackpressure waits (10 s at most) until the stream of run id has felt
// backpressure: polling an observable figure, with a deadline.
func waitBackpressure(t *testing.T, e *env, id ledger.RunID) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if st, ok := e.gw.Stream(id); ok && st.Backpressure > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no backpressure on run %s within 10s", id)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
