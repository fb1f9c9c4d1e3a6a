package e2e_test

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
)

// TestReliabilityUnwritableEnd: when the ledger cannot
// record a run's end (another connection holds SQLite's write lock past the
// busy timeout) while a stream finishes, the client gets no [DONE], /healthz
// says an end is pending, and once the lock is gone the decided outcome is
// written without a restart: the run is not left active with its
// concurrency slot taken. (reliability_unwritable_real_test.go does the same
// with another process holding the lock, and with a really full disk.)
func TestReliabilityUnwritableEnd(t *testing.T) {
	t.Parallel()
	for _, tc := range unwritableCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, rigOptions{})
			var unlock func()
			checkUnwritableEnd(t, r, tc.content, tc.status, tc.usage,
				func() { unlock = lockLedger(t, r.dir) }, func() { unlock() })
		})
	}
}

// unwritableCases: a stream that settles on trusted usage, and one the
// upstream cuts, which ends interrupted with its hold (then reconciled).
var unwritableCases = []struct {
	name, content string
	status        ledger.RunStatus
	usage         ledger.UsageStatus
}{
	{"Settles", "/demo kind=slow&delay=150ms", ledger.RunCompleted, ledger.UsageTrusted},
	{"CutHeld", "/demo kind=cut&after=10&delay=150ms", ledger.RunInterrupted, ledger.UsageUnknown},
}

// checkUnwritableEnd runs one stream of content on r, calls fault once the
// run is active and restore once its end has failed to be written, and
// checks both phases: while the end cannot be written, and once it can.
func checkUnwritableEnd(t *testing.T, r *rig, content string, status ledger.RunStatus, usage ledger.UsageStatus, fault, restore func()) {
	t.Helper()
	resp := r.stream(context.Background(), chatBody(content, true, 64))
	id := ledger.RunID(resp.Header.Get("X-Run-Id"))
	fault()
	if run, err := r.s.Store().Run(context.Background(), id); err != nil || run.Status.Ended() {
		t.Fatalf("run %s ended before the fault was in place (%+v, %v): the plan is too short for this machine", id, run, err)
	}
	body, _ := io.ReadAll(resp.Body) // the stream ends while the ledger cannot write
	resp.Body.Close()
	if strings.Contains(string(body), "[DONE]") {
		t.Fatalf("[DONE] although the end could not be recorded:\n%s", body)
	}
	health := func() (string, int64) {
		var h struct {
			Status  string `json:"status"`
			Pending int64  `json:"pending_run_ends"`
		}
		_ = json.Unmarshal(r.do("GET", "/healthz", "", "", "").body, &h)
		return h.Status, h.Pending
	}
	if st, n := health(); st != "degraded" || n != 1 {
		t.Errorf("/healthz while the end waits: %s, %d pending; want degraded, 1", st, n)
	}
	if run, err := r.s.Store().Run(context.Background(), id); err != nil || run.Status.Ended() {
		t.Errorf("run while its end waits: %+v, %v; want it still active (nothing was written)", run, err)
	}
	restore()
	run := r.waitRun(id) // the retried end, written without a restart
	if run.Status != status || run.Usage != usage {
		t.Errorf("run after the fault: %s/%s, want its decided outcome %s/%s (%+v)", run.Status, run.Usage, status, usage, run)
	}
	if b := r.balance("a"); b.Active != 0 {
		t.Errorf("balance after the end was written: %+v; want the slot free", b)
	}
	if usage != ledger.UsageTrusted {
		got := r.admin("POST", "/admin/api/holds/"+string(id)+"/reconcile", `{"units": 10, "evidence": "provider console after the fault"}`)
		if got.status != 200 {
			t.Errorf("reconcile after the fault: %d %s", got.status, got.body)
		}
	}
	for end := time.Now().Add(10 * time.Second); ; {
		if st, n := health(); st == "ok" && n == 0 {
			break
		}
		if time.Now().After(end) {
			t.Fatal("/healthz still degraded after the end was written")
		}
		time.Sleep(10 * time.Millisecond) // polling an observed state, with a deadline
	}
	r.verify()
}
