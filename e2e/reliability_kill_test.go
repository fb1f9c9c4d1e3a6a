package e2e_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/upstream/demo"
)

// Environment of the child process of TestReliabilityKill9UnderLoad.
const (
	killChildDir  = "QG_E2E_KILL_CHILD_DIR"
	killChildDemo = "QG_E2E_KILL_CHILD_DEMO"
)

// TestReliabilityKill9Child is not a test on its own: run by
// TestReliabilityKill9UnderLoad as a child process, it serves quotagate on
// a data dir until it is SIGKILLed.
func TestReliabilityKill9Child(t *testing.T) {
	dir, demoURL := os.Getenv(killChildDir), os.Getenv(killChildDemo)
	if dir == "" {
		t.Skip("child process of TestReliabilityKill9UnderLoad")
	}
	serveChild(dir, demoURL, slog.New(slog.DiscardHandler))
	select {} // until SIGKILL
}

// TestReliabilityKill9UnderLoad is T16 over HTTP: a quotagate process
// serving 16 clients (settling streams and calls, cut streams, stalls) is
// SIGKILLed at a random moment, three times over on one data dir (the
// seed is logged). Reopened in-process after each kill, the ledger
// passes integrity_check and Verify; every run is in an allowed state;
// runs caught in flight keep their whole reserve with usage unknown (never
// released); no run the client saw end with [DONE] is released; and two more
// restarts change nothing.
func TestReliabilityKill9UnderLoad(t *testing.T) {
	t.Parallel()
	if os.Getenv(killChildDir) != "" {
		t.Skip("in the child")
	}
	d, err := demo.Start(demo.Options{APIKey: canaryUpstream})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	dir := t.TempDir()
	seed := rand.Uint64()
	if v := os.Getenv("QG_E2E_SEED"); v != "" { // replay: QG_E2E_SEED=N go test -run Kill9 ./e2e/
		if _, err := fmt.Sscan(v, &seed); err != nil {
			t.Fatalf("QG_E2E_SEED=%q: %v", v, err)
		}
	}
	rng := rand.New(rand.NewPCG(seed, 0))
	t.Logf("seed %d (replay the kill points with QG_E2E_SEED=%d)", seed, seed)
	var r *rig
	for round := range 3 { // T37's "random SIGKILL/restart cycles", on one data dir
		if r != nil {
			if err := r.s.Close(); err != nil {
				t.Fatal(err)
			}
		}
		r = killRound(t, d, dir, rng, round)
	}
	c := r.counts()
	if err := r.s.Close(); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		r := newRig(t, rigOptions{dir: dir, demo: d})
		if got := r.counts(); got != c {
			t.Fatalf("restart %d after recovery changed the ledger: %+v → %+v", i+2, c, got)
		}
		r.s.Close()
	}
}

// killRound runs a child quotagate on dir under load, SIGKILLs it, reopens
// the ledger in-process and checks what recovery left; it returns the
// reopened server.
func killRound(t *testing.T, d *demo.Server, dir string, rng *rand.Rand, round int) *rig {
	t.Helper()
	killAfter := 40 + rng.IntN(80) // completed responses before the kill

	c := startChild(t, "TestReliabilityKill9Child", killChildDir+"="+dir, killChildDemo+"="+d.URL())
	base := c.url

	// The load: three clients hold a stalled stream open until the kill;
	// thirteen loop over the other plans until the server dies.
	plans := []struct {
		content string
		stream  bool
	}{{"hello", true}, {"hello", false}, {"/demo kind=slow&delay=20ms", true}, {"/demo kind=cut&after=2", true}}
	var (
		mu        sync.Mutex
		doneRuns  []ledger.RunID // the client read the whole answer, ending in [DONE] (or a 200 JSON body)
		completed atomic.Int64
		kill      = make(chan struct{})
		killOnce  sync.Once
		wg        sync.WaitGroup
	)
	client := &http.Client{Timeout: 30 * time.Second}
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; ; i++ {
				p := plans[i%len(plans)]
				if w < 3 {
					p.content = "/demo kind=stall"
				}
				req, _ := http.NewRequest("POST", base+"/v1/chat/completions", strings.NewReader(chatBody(p.content, p.stream, 32)))
				req.Header.Set("Authorization", "Bearer "+canaryKeyA)
				resp, err := client.Do(req)
				if err != nil {
					return // the server is gone
				}
				id := ledger.RunID(resp.Header.Get("X-Run-Id"))
				var body []byte
				if p.content == "/demo kind=stall" {
					<-kill // a stall never ends: hold it open until the kill
				} else {
					body, err = io.ReadAll(resp.Body)
				}
				resp.Body.Close()
				if err == nil && resp.StatusCode == 200 && id != "" && p.content == "hello" &&
					(!p.stream || strings.HasSuffix(strings.TrimSpace(string(body)), "data: [DONE]")) {
					mu.Lock()
					doneRuns = append(doneRuns, id)
					mu.Unlock()
				}
				if w >= 3 && completed.Add(1) == int64(killAfter) {
					killOnce.Do(func() { close(kill) })
				}
			}
		}()
	}
	select {
	case <-kill:
	case <-time.After(30 * time.Second):
		t.Fatalf("only %d responses completed in 30 s", completed.Load())
	}
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	werr := c.cmd.Wait()
	if ws, ok := c.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child did not die by SIGKILL: %v", werr)
	}
	wg.Wait()

	checkIntegrity(t, dir)

	r := newRig(t, rigOptions{dir: dir, demo: d})
	r.verify()
	ctx := context.Background()
	runs, err := r.s.Store().Runs(ctx, ledger.RunFilter{Limit: 1_000_000})
	if err != nil {
		t.Fatal(err)
	}
	recovered := map[ledger.RunID]bool{}
	trail, err := r.s.Store().Audit(ctx, ledger.AuditFilter{Limit: 1_000_000})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range trail {
		if e.Kind == ledger.AuditRecover {
			recovered[e.RunID] = true
		}
	}
	byID := map[ledger.RunID]ledger.Run{}
	for _, run := range runs {
		byID[run.ID] = run
		switch {
		case !run.Status.Ended():
			t.Errorf("run %s still %s after recovery", run.ID, run.Status)
		case run.Usage == ledger.UsageReleased && run.Evidence == "":
			t.Errorf("run %s released without evidence", run.ID)
		case run.Usage == ledger.UsageUnknown && run.HeldUnits != run.ReserveUnits:
			t.Errorf("run %s unknown but holds %d of %d", run.ID, run.HeldUnits, run.ReserveUnits)
		case run.Usage == ledger.UsagePending:
			t.Errorf("run %s pending after recovery", run.ID)
		}
		if recovered[run.ID] && (run.Status != ledger.RunInterrupted || run.Usage != ledger.UsageUnknown) {
			t.Errorf("recovered run %s is %s/%s, want interrupted/unknown", run.ID, run.Status, run.Usage)
		}
	}
	notSettled := 0
	for _, id := range doneRuns {
		run, ok := byID[id]
		switch {
		case !ok:
			t.Errorf("run %s, answered in full, is missing from the ledger", id)
		case run.Usage == ledger.UsageReleased:
			t.Errorf("run %s, answered in full, was released", id)
		case run.Usage != ledger.UsageTrusted:
			notSettled++ // killed between the last byte and the settle commit: held, not lost
		}
	}
	t.Logf("round %d: killed after %d responses; %d runs, %d recovered as interrupted so far, %d answered in full this round, %d of those held instead of settled",
		round, killAfter, len(runs), len(recovered), len(doneRuns), notSettled)
	if len(doneRuns) == 0 || len(runs) < len(doneRuns) {
		t.Fatalf("load too small to judge: %d runs, %d answered", len(runs), len(doneRuns))
	}

	return r
}
