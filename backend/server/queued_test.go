package server_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
)

// The state's queued count per tenant is the gateway's own: calls waiting
// at the gate, counted however many runs the state lists; it drops when
// they leave the queue.
func TestStateQueuedFromGateway(t *testing.T) {
	s := openYAML(t, `
meter: utf8-bytes-v1
tenants: [{id: a, key: sk-test-aaaaaaaa, budget_units: 100000, max_concurrent: 8}]
upstreams:
  - {name: demo, kind: demo, models: [demo-chat], max_concurrent: 1, queue: {max_waiters: 8, max_wait: 60s}}
`)
	const key = "sk-test-aaaaaaaa"
	done := make(chan struct{}, 4)
	go func() { chatPlan(t, s, key, "kind=stall"); done <- struct{}{} }()
	first := waitActive(t, s)
	for range 3 {
		go func() { chatPlan(t, s, key, "kind=stall"); done <- struct{}{} }()
	}
	queued := func(want int) []ledger.Run {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			st, err := s.State(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if st.Tenants[0].Queued == want {
				return st.Runs
			}
			if time.Now().After(deadline) {
				t.Fatalf("tenant a queued %d, want %d", st.Tenants[0].Queued, want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	runs := queued(3)
	// End them all: the first, then each queued one as the operator.
	ids := []ledger.RunID{first}
	for _, r := range runs {
		if r.Status == ledger.RunQueued {
			ids = append(ids, r.ID)
		}
	}
	if len(ids) != 4 {
		t.Fatalf("listed runs %+v, want 3 queued", runs)
	}
	for _, id := range ids {
		if code, b := post(t, s, "/admin/api/runs/"+string(id)+"/cancel", ""); code != http.StatusAccepted {
			t.Fatalf("cancel %s: %d %s", id, code, b)
		}
	}
	for range 4 {
		<-done
	}
	queued(0)
}
