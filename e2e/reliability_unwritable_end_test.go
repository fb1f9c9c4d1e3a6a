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

// TestReliabilityUnwritableEnd is issue 12 item 1: when the ledger cannot
// record a run's end (another connection holds SQLite's write lock past the
// busy timeout) while a stream finishes, the client gets no [DONE], /healthz
// says an end is pending, and once the lock is gone the decided outcome is
// written without a restart: the run is not left active with its
// concurrency slot taken.
func TestReliabilityUnwritableEnd(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{})
	resp := r.stream(context.Background(), chatBody("/demo kind=slow&delay=50ms", true, 64))
	id := ledger.RunID(resp.Header.Get("X-Run-Id"))
	unlock := lockLedger(t, r.dir)
	body, _ := io.ReadAll(resp.Body) // the stream ends while the ledger is locked
	resp.Body.Close()
	if strings.Contains(string(body), "[DONE]") {
		t.Fatalf("[DONE] although the end could not be recorded:\n%s", body)
	}
	health := func() (string, int64) {
		var h struct {
			Status  string `json:"status"`
			Pending int64  `json:"pending_run_ends"`
		}
		got := r.do("GET", "/healthz", "", "", "")
		_ = json.Unmarshal(got.body, &h)
		return h.Status, h.Pending
	}
	if st, n := health(); st != "degraded" || n != 1 {
		t.Errorf("/healthz while the end waits: %s, %d pending; want degraded, 1", st, n)
	}
	unlock()
	run := r.waitRun(id)
	if run.Status != ledger.RunCompleted || run.Usage != ledger.UsageTrusted {
		t.Errorf("run after the lock: %+v, want its decided outcome (completed, trusted)", run)
	}
	if b := r.balance("a"); b.Active != 0 || b.HeldUnits != 0 {
		t.Errorf("balance after the end was written: %+v", b)
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
