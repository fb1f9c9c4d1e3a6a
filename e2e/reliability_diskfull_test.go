package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/upstream/demo"
)

const (
	fullChildDir  = "QG_E2E_FULL_CHILD_DIR"
	fullChildDemo = "QG_E2E_FULL_CHILD_DEMO"
)

// TestReliabilityDiskFullChild is not a test on its own: run by
// TestReliabilityDiskFull as a child process, it serves quotagate and, on
// SIGUSR2, sets its file-size limit to 0 — every write to a regular file
// then fails with EFBIG, as on a full disk — and on SIGUSR1 lifts it.
func TestReliabilityDiskFullChild(t *testing.T) {
	dir, demoURL := os.Getenv(fullChildDir), os.Getenv(fullChildDemo)
	if dir == "" {
		t.Skip("child process of TestReliabilityDiskFull")
	}
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, syscall.SIGUSR1, syscall.SIGUSR2) // before the URL: the parent signals once it has it
	serveChild(dir, demoURL, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	for x := range sig {
		var lim syscall.Rlimit
		if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
			fmt.Println("ERROR", err)
			continue
		}
		if x == syscall.SIGUSR2 {
			lim.Cur = 0 // SIGXFSZ is ignored by the Go runtime: writes fail with EFBIG
		} else {
			lim.Cur = lim.Max
		}
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
			fmt.Println("ERROR", err)
			continue
		}
		fmt.Println("LIMIT", x)
	}
}

// TestReliabilityDiskFull is T20: when the ledger cannot write (the disk is
// full), calls are refused with 503 ledger_unavailable and none reaches the provider; reads
// still answer; when space returns, the gateway admits and settles again
// without a restart; the file passes integrity_check and Verify, with no
// run for any refused call.
func TestReliabilityDiskFull(t *testing.T) {
	t.Parallel()
	if os.Getenv(fullChildDir) != "" {
		t.Skip("in the child")
	}
	d, err := demo.Start(demo.Options{APIKey: canaryUpstream})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	dir := t.TempDir()
	c := startChild(t, "TestReliabilityDiskFullChild", fullChildDir+"="+dir, fullChildDemo+"="+d.URL())
	base := c.url
	call := func(content string, stream bool) reply {
		t.Helper()
		return doURL(t, base, "POST", "/v1/chat/completions", canaryKeyA, chatBody(content, stream, 16))
	}
	if got := call("before the disk fills", false); got.status != 200 {
		t.Fatalf("warm-up: %d %s", got.status, got.body)
	}

	c.cmd.Process.Signal(syscall.SIGUSR2)
	c.next(t, "LIMIT")
	received := d.Stats().Received
	for i, stream := range []bool{false, true, false} {
		got := call("while the disk is full", stream)
		if got.status != 503 || got.errorCode() != "ledger_unavailable" || got.runID() != "" {
			t.Errorf("call %d on a full disk: %d %s (run id %q), want 503 ledger_unavailable and no run", i, got.status, got.body, got.runID())
		}
	}
	if n := d.Stats().Received - received; n != 0 {
		t.Fatalf("the provider received %d calls the ledger could not record", n)
	}
	if got := doURL(t, base, "GET", "/v1/balance", canaryKeyA, ""); got.status != 200 {
		t.Errorf("a read on a full disk: %d %s", got.status, got.body)
	}

	c.cmd.Process.Signal(syscall.SIGUSR1)
	c.next(t, "LIMIT")
	deadline := time.Now().Add(time.Second)
	var after reply
	for { // "recovers within 1 s after the fault clears"; polling the gateway itself
		after = call("after space returns", true)
		if after.status == 200 || time.Now().After(deadline) {
			break
		}
	}
	if after.status != 200 {
		t.Fatalf("1 s after space returned: %d %s, want 200 without a restart", after.status, after.body)
	}
	// Let the settle commit before the kill: the last byte reaches the
	// client before the ledger write.
	for end := time.Now().Add(10 * time.Second); ; {
		var run struct{ Status ledger.RunStatus }
		got := doURL(t, base, "GET", "/v1/runs/"+string(after.runID()), canaryKeyA, "")
		if json.Unmarshal(got.body, &run) == nil && run.Status.Ended() {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("run %s did not end: %s", after.runID(), got.body)
		}
	}
	c.cmd.Process.Signal(syscall.SIGKILL)
	c.cmd.Wait()

	checkIntegrity(t, dir)
	r := newRig(t, rigOptions{dir: dir, demo: d})
	r.verify()
	runs, err := r.s.Store().Runs(context.Background(), ledger.RunFilter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 {
		t.Fatalf("%d runs in the ledger, want the 2 admitted ones (no partial rows for refused calls): %+v", len(runs), runs)
	}
	for _, run := range runs {
		if run.Usage != ledger.UsageTrusted {
			t.Errorf("run %+v not settled", run)
		}
	}
}
