package gateway_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/gate"
	"github.com/quotagate/quotagate/backend/gateway"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/upstream/demo"
)

// With the upstream's gate full, a call waits in the queue as a queued run
// holding its reserve, starts when a slot frees, and completes.
func TestGateQueuesThenStarts(t *testing.T) {
	e := newEnv(t, envOpts{tenants: []ledger.Tenant{tenant("a", 1000, 4)},
		modify: func(o *gateway.Options) {
			gs := gate.NewGates()
			gs.Set("demo", gate.Options{MaxConcurrent: 1, MaxWaiters: 1, MaxWait: 10 * time.Second})
			o.Gate = gateway.FromGates(gs)
		}})
	first := e.chat(ctxT(t), "key-a", hiBody, demo.Plan{Kind: demo.KindStall}.Encode())
	defer first.Body.Close()
	firstID := runID(t, first)

	type result struct {
		resp *http.Response
		body string
	}
	done := make(chan result, 1)
	go func() {
		r := e.chat(ctxT(t), "key-a", hiBody, demo.Plan{Text: "ok"}.Encode())
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		done <- result{r, string(b)}
	}()
	// The second run is admitted as queued: its reserve is held while it waits.
	var queuedID ledger.RunID
	for _, ev := range waitEvents(t, e, evAdmit, 2) {
		if ev.RunID != firstID {
			queuedID = ev.RunID
		}
	}
	run, err := e.store.Run(context.Background(), queuedID)
	if err != nil || run.Status != ledger.RunQueued || run.HeldUnits != 22 {
		t.Fatalf("second run %+v (%v), want queued with 22 held", run, err)
	}
	if n := len(e.demo.Stats().Requests); n != 1 {
		t.Fatalf("upstream saw %d requests while the second waited", n)
	}
	del := e.do(ctxT(t), http.MethodDelete, "/v1/runs/"+string(firstID), "key-a", "", nil)
	del.Body.Close()
	e.log.wait(t, evStart, queuedID)
	r := <-done
	if r.resp.StatusCode != 200 || !strings.Contains(r.body, "data: [DONE]") {
		t.Fatalf("queued call: %d %s", r.resp.StatusCode, r.body)
	}
	if run := e.waitEnd(queuedID); run.Status != ledger.RunCompleted || run.Usage != ledger.UsageTrusted || run.SpentUnits != 4 {
		t.Errorf("queued run after start %+v, want completed/trusted 4", run)
	}
}

// A call that gives up while queued proves the upstream did no work: its
// hold is released with that as evidence.
func TestGateQueuedCancelReleases(t *testing.T) {
	e := newEnv(t, envOpts{tenants: []ledger.Tenant{tenant("a", 1000, 4)}, plan: demo.Plan{Kind: demo.KindStall},
		modify: func(o *gateway.Options) {
			gs := gate.NewGates()
			gs.Set("demo", gate.Options{MaxConcurrent: 1, MaxWaiters: 1, MaxWait: 10 * time.Second})
			o.Gate = gateway.FromGates(gs)
		}})
	first := e.chat(ctxT(t), "key-a", hiBody, "")
	defer first.Body.Close()
	firstID := runID(t, first)
	ctx, cancel := context.WithCancel(ctxT(t))
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.srv.URL+"/v1/chat/completions", strings.NewReader(hiBody))
		req.Header.Set("Authorization", "Bearer key-a")
		if r, err := http.DefaultClient.Do(req); err == nil {
			r.Body.Close()
		}
	}()
	var queuedID ledger.RunID
	for _, ev := range waitEvents(t, e, evAdmit, 2) {
		if ev.RunID != firstID {
			queuedID = ev.RunID
		}
	}
	// The owner cancels the queued run by id.
	del := e.do(ctxT(t), http.MethodDelete, "/v1/runs/"+string(queuedID), "key-a", "", nil)
	del.Body.Close()
	if del.StatusCode != http.StatusAccepted {
		t.Fatalf("cancel queued: %d", del.StatusCode)
	}
	run := e.waitEnd(queuedID)
	cancel()
	if run.Status != ledger.RunCancelled || run.Usage != ledger.UsageReleased || run.HeldUnits != 0 || !strings.Contains(run.Evidence, "queued") {
		t.Errorf("queued run %+v, want cancelled/released with the queue as evidence", run)
	}
	if n := len(e.demo.Stats().Requests); n != 1 {
		t.Errorf("upstream saw %d requests", n)
	}
}

// limitGuard guards demo-chat with a daily limit the ledger enforces in Admit.
type limitGuard struct{ observed chan string }

func (limitGuard) Check(up, model string) (*ledger.QuotaCheck, error) {
	return &ledger.QuotaCheck{Day: time.Now().UTC().Format("2006-01-02"), LimitUnits: 30}, nil
}
func (g limitGuard) Observe(_ context.Context, up, model string) error {
	g.observed <- up + "/" + model
	return nil
}

// The guard's QuotaCheck goes into the same atomic Admit: a second run that
// would pass the day's limit is refused with quota_guard.
func TestQuotaCheckIsEnforcedInAdmit(t *testing.T) {
	g := limitGuard{observed: make(chan string, 4)}
	e := newEnv(t, envOpts{tenants: []ledger.Tenant{tenant("a", 1000, 4)}, plan: demo.Plan{Kind: demo.KindNoUsage},
		modify: func(o *gateway.Options) { o.Quota = g }})
	first := e.chat(ctxT(t), "key-a", hiBody, "") // 22 held against the limit of 30
	io.Copy(io.Discard, first.Body)
	first.Body.Close()
	run := e.waitEnd(runID(t, first))
	if run.QuotaDay == "" || run.HeldUnits != 22 {
		t.Fatalf("first run %+v, want a quota day and 22 held", run)
	}
	if got := <-g.observed; got != "demo/demo-chat" {
		t.Errorf("observed %q", got)
	}
	second := e.chat(ctxT(t), "key-a", hiBody, "")
	b, _ := io.ReadAll(second.Body)
	second.Body.Close()
	if second.StatusCode != 429 || !strings.Contains(string(b), `"code":"quota_guard"`) {
		t.Errorf("second: %d %s", second.StatusCode, b)
	}
}

// waitEvents waits for n events of kind and returns them.
func waitEvents(t *testing.T, e *env, kind string, n int) []event {
	t.Helper()
	evs := e.log.until(t, fmt.Sprintf("%d %s events", n, kind), func(evs []event) bool {
		return len(kinds(evs, kind)) >= n
	})
	return kinds(evs, kind)
}
