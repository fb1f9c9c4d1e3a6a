package e2e_test

import (
	"bufio"
	"context"
	"database/sql"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/server"
	_ "modernc.org/sqlite" // the "sqlite" driver, to take the ledger's write lock from outside
)

// TestReliabilityLedgerLockedFailsClosed is T09: while another process holds
// the ledger's write lock past the busy timeout (5 s), calls that need a
// reservation are refused with 503 ledger_unavailable and a Retry-After and
// never reach the provider — no admission without a recorded hold — and the
// gateway serves again as soon as the lock is gone, without a restart.
func TestReliabilityLedgerLockedFailsClosed(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{})
	if got := r.chat(r.keyA, chatBody("warm up", false, 8)); got.status != 200 {
		t.Fatalf("warm-up: %d %s", got.status, got.body)
	}
	received := r.demo.Stats().Received

	unlock := lockLedger(t, r.dir)

	// One call: a call queued behind it would wait another busy timeout
	// (group commit retries batch by batch), which only costs test time.
	a := r.chat(r.keyA, chatBody("during the lock", true, 8))
	if a.status != http.StatusServiceUnavailable || a.errorCode() != "ledger_unavailable" || a.header.Get("Retry-After") == "" {
		t.Errorf("call during the lock: %d %s, want 503 ledger_unavailable with Retry-After", a.status, a.body)
	}
	if a.runID() != "" {
		t.Errorf("the call got a run id without a recorded admission")
	}
	if n := r.demo.Stats().Received; n != received {
		t.Fatalf("the provider received %d calls while the ledger could not record their holds", n-received)
	}
	if got := r.do("GET", "/v1/balance", r.keyA, "", ""); got.status != 200 {
		t.Errorf("a read while the ledger is locked: %d %s", got.status, got.body)
	}

	unlock()
	start := time.Now()
	got := r.chat(r.keyA, chatBody("after the lock", false, 8))
	if got.status != 200 || time.Since(start) > time.Second {
		t.Fatalf("after the lock cleared: %d after %v (%s), want 200 within 1 s", got.status, time.Since(start), got.body)
	}
	if run := r.waitRun(got.runID()); run.HeldUnits != 0 || run.SpentUnits == 0 {
		t.Fatalf("run after recovery %+v", run)
	}
	r.verify()
}

// TestReliabilityWALBounded is a short T21: 600 settled calls from 8
// clients while 4 dashboard readers poll the state every 100 ms (readers
// can starve the checkpoint). The WAL, sampled as it goes, stays under
// 16 MiB. Measured with readers polling without pause: it grows ~33 KB a
// call until the first checkpoints, then plateaus near 6 MB (flat from 300
// to 1,800 calls); unbounded it would pass 19 MB by the end.
func TestReliabilityWALBounded(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{})
	wal := filepath.Join(r.dir, server.LedgerFile+"-wal")
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for range 4 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			tick := time.NewTicker(100 * time.Millisecond) // the plan's dashboard poll
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				doURL(t, r.s.URL(), "GET", "/admin/api/state", canaryAdmin, "")
			}
		}()
	}
	const calls, clients = 600, 8
	var (
		mu      sync.Mutex
		maxWAL  int64
		samples int
		wg      sync.WaitGroup
		next    = make(chan int, calls)
	)
	for i := range calls {
		next <- i
	}
	close(next)
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if got := doURL(t, r.s.URL(), "POST", "/v1/chat/completions", canaryKeyA, chatBody("hello", false, 8)); got.status != 200 {
					t.Errorf("call %d: %d %s", i, got.status, got.body)
					return
				}
				if i%25 == 0 {
					if fi, err := os.Stat(wal); err == nil {
						mu.Lock()
						maxWAL = max(maxWAL, fi.Size())
						samples++
						mu.Unlock()
					}
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	t.Logf("WAL peak %d bytes over %d samples", maxWAL, samples)
	if samples == 0 {
		t.Fatal("no WAL sample")
	}
	if maxWAL > 16<<20 {
		t.Fatalf("WAL reached %d bytes: checkpoints are not keeping up", maxWAL)
	}
	r.verify()
}

// TestReliabilityDoneOnlyAfterSettle is T16's "0 lost acknowledged writes"
// made deterministic: while another connection holds the ledger's write
// lock, a stream whose upstream finishes must not hand its client the end
// of the answer ([DONE]) before the settlement is on disk — otherwise a
// crash at that moment loses a settlement the client already saw (the run
// would come back held, usage unknown).
func TestReliabilityDoneOnlyAfterSettle(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{})
	req, _ := http.NewRequest("POST", r.s.URL()+"/v1/chat/completions",
		strings.NewReader(`{"model":"demo-chat","stream":true,"stream_options":{"include_usage":true},"max_tokens":200,"messages":[{"role":"user","content":"/demo kind=slow&delay=30ms"}]}`))
	req.Header.Set("Authorization", "Bearer "+r.keyA)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	id := ledger.RunID(resp.Header.Get("X-Run-Id"))
	br := bufio.NewReader(resp.Body)
	if _, err := br.ReadString('\n'); err != nil { // the first event is out: the run is admitted and active
		t.Fatal(err)
	}

	unlock := lockLedger(t, r.dir)

	usage, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		sawUsage := false
		for {
			line, err := br.ReadString('\n')
			if err != nil || strings.HasPrefix(line, "data: [DONE]") {
				return
			}
			if !sawUsage && strings.HasPrefix(line, "data: ") && strings.Contains(line, `"usage":{`) {
				sawUsage = true
				close(usage) // the upstream has finished: the settle is under way
			}
		}
	}()
	select { // a [DONE] before the usage chunk would also be the bug; done is checked next
	case <-usage:
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the usage chunk never reached the client")
	}
	var sawDoneWhileLocked bool
	select {
	case <-done:
		sawDoneWhileLocked = true
	case <-time.After(time.Second): // the relay writes a [DONE] it does not withhold at once; silence is the right answer
	}
	var runWhileLocked ledger.Run
	if sawDoneWhileLocked {
		runWhileLocked, _ = r.s.Store().Run(context.Background(), id)
	}
	unlock()
	<-done
	run := r.waitRun(id)
	if run.Usage != ledger.UsageTrusted {
		t.Fatalf("run after the lock %+v, want settled on the trusted usage", run)
	}
	if sawDoneWhileLocked && runWhileLocked.Usage != ledger.UsageTrusted {
		t.Fatalf("the client received [DONE] while the settlement was not committed (run %s/%s): a crash then loses an acknowledged settlement",
			runWhileLocked.Status, runWhileLocked.Usage)
	}
}

// lockLedger takes the ledger's write lock from a connection of its own, as
// another process would, and returns the function that lets it go; that
// also runs when t ends, before the rig closes, and is safe to call twice.
func lockLedger(t *testing.T, dir string) (unlock func()) {
	t.Helper()
	q := url.Values{}
	// Wait for the lock rather than fail at once: the gateway's writer may
	// hold it for a moment, indexing audit text after a commit.
	q.Add("_pragma", "busy_timeout(5000)")
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, server.LedgerFile)+"?"+q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatalf("take the write lock: %v", err)
	}
	unlock = sync.OnceFunc(func() {
		if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
			t.Errorf("let go of the write lock: %v", err)
		}
	})
	t.Cleanup(unlock)
	return unlock
}
