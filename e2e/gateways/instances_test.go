package gateways_test

import (
	"bufio"
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/quotagate/quotagate/backend/admin"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/postgres"
	"github.com/quotagate/quotagate/backend/postgres/pgtest"
	"github.com/quotagate/quotagate/backend/upstream/demo"
)

// TestInstances: three gateways on one PostgreSQL (lease: heartbeat 300 ms,
// expiry 2 s).
//   - CancelAcross: DELETE /v1/runs/{id} on gw-1 of a run streaming on gw-0
//     answers 202 and gw-0 closes the upstream (the demo sees it); a second
//     cancel answers 409, another tenant's 404; GET on gw-2 finds the run.
//   - LiveAcross: a dashboard WebSocket on gw-2 shows a hold made on gw-0
//     within a second.
//   - Kill9: gw-1 is SIGKILLed with streams in flight while gw-0 and gw-2
//     settle calls; within the lease expiry (plus a heartbeat) another
//     gateway ends gw-1's runs interrupted — slots freed, holds kept — the
//     survivors lost no settle, and the ledger verifies.
func TestInstances(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	d, err := demo.Start(demo.Options{APIKey: "sk-provider", Models: []string{"demo-chat", "demo-guarded"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	gws := startGateways(t, 3, dsn, d.URL())
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	st, err := postgres.Open(ctx, dsn, postgres.Options{Instance: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	t.Run("CancelAcross", func(t *testing.T) {
		a := post(ctx, gws[0], keyA, chatBody("/demo kind=stall", 86))
		if a.status != http.StatusOK {
			t.Fatalf("admit on gw-0: %d %s", a.status, a.code)
		}
		defer a.resp.Body.Close()
		if err := d.WaitRequests(ctx, d.Stats().Received); err != nil {
			t.Fatal(err)
		}
		if status, body := do(t, "DELETE", gws[1].url+"/v1/runs/"+a.runID, keyB); status != http.StatusNotFound {
			t.Fatalf("another tenant's cancel on gw-1: %d %s, want 404", status, body)
		}
		discs := d.Stats().Disconnects
		t0 := time.Now()
		if status, body := do(t, "DELETE", gws[1].url+"/v1/runs/"+a.runID, keyA); status != http.StatusAccepted {
			t.Fatalf("cancel on gw-1 of a run on gw-0: %d %s, want 202", status, body)
		}
		if err := d.WaitDisconnects(ctx, discs+1); err != nil {
			t.Fatalf("the demo upstream never saw gw-0 close the connection: %v", err)
		}
		t.Logf("cancel on gw-1 → gw-0 closed the upstream in %v", time.Since(t0))
		run := waitRun(ctx, t, st, ledger.RunID(a.runID), func(r ledger.Run) bool { return r.Status.Ended() })
		if run.Status != ledger.RunCancelled || run.HeldUnits != run.ReserveUnits {
			t.Fatalf("cancelled run = %+v, want cancelled with its hold kept", run)
		}
		if status, body := do(t, "GET", gws[2].url+"/v1/runs/"+a.runID, keyA); status != 200 || !strings.Contains(body, `"cancelled"`) {
			t.Fatalf("GET on gw-2: %d %s", status, body)
		}
		if status, body := do(t, "DELETE", gws[2].url+"/v1/runs/"+a.runID, keyA); status != http.StatusConflict {
			t.Fatalf("second cancel: %d %s, want 409", status, body)
		}
		// Reconcile the kept hold on two gateways at once: exactly one wins.
		statuses := make(chan int, 2)
		for _, gw := range gws[1:] {
			go func() {
				status, _ := do(t, "POST", gw.url+"/admin/api/holds/"+a.runID+"/reconcile", adminToken, `{"units":50,"evidence":"provider bill"}`)
				statuses <- status
			}()
		}
		got := []int{<-statuses, <-statuses}
		slices.Sort(got)
		if got[0] != http.StatusOK || got[1] != http.StatusConflict {
			t.Fatalf("two reconciles on two gateways answered %v, want one 200 and one 409", got)
		}
		if status, _ := do(t, "POST", gws[0].url+"/admin/api/holds/no-such-run/reconcile", adminToken, `{"units":1,"evidence":"x"}`); status != http.StatusNotFound {
			t.Fatalf("reconcile of an unknown run: %d, want 404", status)
		}
	})

	t.Run("LiveAcross", func(t *testing.T) {
		u := strings.Replace(gws[2].url, "http://", "ws://", 1) + "/admin/ws?token=" + adminToken
		conn, _, err := websocket.DefaultDialer.DialContext(ctx, u, http.Header{"Origin": {gws[2].url}})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		var m admin.Message
		if err := conn.ReadJSON(&m); err != nil { // the first snapshot
			t.Fatal(err)
		}
		t0 := time.Now()
		a := post(ctx, gws[0], keyA, chatBody("/demo kind=stall", 86))
		if a.status != http.StatusOK {
			t.Fatalf("admit on gw-0: %d %s", a.status, a.code)
		}
		defer func() {
			do(t, "POST", gws[0].url+"/admin/api/runs/"+a.runID+"/cancel", adminToken)
			a.resp.Body.Close()
		}()
		conn.SetReadDeadline(time.Now().Add(time.Second))
		for {
			if err := conn.ReadJSON(&m); err != nil {
				t.Fatalf("gw-2's dashboard did not show the hold made on gw-0 within a second: %v", err)
			}
			if m.State != nil && holds(m.State.Holds, a.runID) || m.Delta != nil && holds(m.Delta.Holds, a.runID) {
				break
			}
		}
		t.Logf("hold made on gw-0 shown on gw-2's dashboard %v after the request", time.Since(t0))
	})

	t.Run("Kill9", func(t *testing.T) {
		// Streams in flight on gw-1.
		var inflight []answer
		for range 3 {
			a := post(ctx, gws[1], keyA, chatBody("/demo kind=stall", 86))
			if a.status != http.StatusOK {
				t.Fatalf("admit on gw-1: %d %s", a.status, a.code)
			}
			defer a.resp.Body.Close()
			inflight = append(inflight, a)
		}
		// The survivors settle calls throughout.
		var wg sync.WaitGroup
		var mu sync.Mutex
		var settled []string
		stop := make(chan struct{})
		for _, gw := range []*gateway{gws[0], gws[2]} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					a := post(ctx, gw, keyA, chatBody("hello", 20))
					if a.status != http.StatusOK {
						t.Errorf("%s: %d %s", gw.name, a.status, a.code)
						return
					}
					if !readsDone(a.resp) {
						t.Errorf("%s: stream %s ended without [DONE]", gw.name, a.runID)
					}
					mu.Lock()
					settled = append(settled, a.runID)
					mu.Unlock()
				}
			}()
		}
		time.Sleep(200 * time.Millisecond) // let some settles run beside the kill
		killed := time.Now()
		if err := gws[1].cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		gws[1].cmd.Wait()
		var freed time.Duration
		for _, a := range inflight {
			run := waitRun(ctx, t, st, ledger.RunID(a.runID), func(r ledger.Run) bool { return r.Status.Ended() })
			freed = max(freed, time.Since(killed))
			if run.Status != ledger.RunInterrupted || run.Usage != ledger.UsageUnknown || run.HeldUnits != run.ReserveUnits {
				t.Errorf("run %s of the killed gateway = %s/%s held %d of %d; want interrupted, unknown, hold kept",
					run.ID, run.Status, run.Usage, run.HeldUnits, run.ReserveUnits)
			}
		}
		close(stop)
		wg.Wait()
		t.Logf("gw-1 killed with 3 streams in flight: its slots were freed %v later (lease expiry 2 s, heartbeat 300 ms); %d calls settled on gw-0 and gw-2 meanwhile", freed, len(settled))
		if limit := 2*time.Second + 2*300*time.Millisecond + 2*time.Second; freed > limit {
			t.Errorf("slots freed after %v, want within the lease expiry (+ heartbeats, + slack for a loaded machine: %v)", freed, limit)
		}
		for _, id := range settled {
			run, err := st.Run(ctx, ledger.RunID(id))
			if err != nil || run.Usage != ledger.UsageTrusted {
				t.Errorf("settled run %s = %+v %v; want trusted usage", id, run, err)
			}
		}
		problems, err := st.Verify(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range problems {
			t.Error("verify:", p)
		}
	})
}

func holds(runs []ledger.Run, id string) bool {
	for _, r := range runs {
		if string(r.ID) == id {
			return true
		}
	}
	return false
}

// waitRun polls the shared ledger until cond holds for run id (the change
// happens in another process; there is no event in this one to wait on).
func waitRun(ctx context.Context, t *testing.T, st *postgres.Store, id ledger.RunID, cond func(ledger.Run) bool) ledger.Run {
	t.Helper()
	for {
		run, err := st.Run(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if cond(run) {
			return run
		}
		select {
		case <-ctx.Done():
			t.Fatalf("run %s: %v (last %+v)", id, ctx.Err(), run)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// readsDone reads a stream to its end and reports whether it saw [DONE].
func readsDone(resp *http.Response) bool {
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	done := false
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "data: [DONE]" {
			done = true
		}
	}
	return done
}
