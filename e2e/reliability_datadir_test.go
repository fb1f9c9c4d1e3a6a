package e2e_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/upstream/demo"
)

const (
	lockChildDir  = "QG_E2E_LOCK_CHILD_DIR"
	lockChildDemo = "QG_E2E_LOCK_CHILD_DEMO"
)

// TestReliabilityDataDirChild is not a test on its own: run by
// TestReliabilityDataDirLock as a child process, it serves quotagate on a
// data dir until it is killed — or, when the dir is taken, prints the
// error and exits 2 like `quotagate serve` exits non-zero.
func TestReliabilityDataDirChild(t *testing.T) {
	dir, demoURL := os.Getenv(lockChildDir), os.Getenv(lockChildDemo)
	if dir == "" {
		t.Skip("child process of TestReliabilityDataDirLock")
	}
	serveChild(dir, demoURL, slog.New(slog.DiscardHandler))
	select {}
}

// TestReliabilityDataDirLock: while a quotagate process
// streams a run, a second process on the same data dir exits non-zero in
// one line naming the first one's pid, and changes nothing: the data dir's
// files are as they were, the run stays active (active 1 — its
// concurrency slot is not freed by a foreign recovery) and it settles on
// trusted usage when its stream ends.
func TestReliabilityDataDirLock(t *testing.T) {
	t.Parallel()
	if os.Getenv(lockChildDir) != "" {
		t.Skip("in the child")
	}
	d, err := demo.Start(demo.Options{APIKey: canaryUpstream})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	dir := t.TempDir()
	first := startChild(t, "TestReliabilityDataDirChild", lockChildDir+"="+dir, lockChildDemo+"="+d.URL())

	// A stream that is still running while the second process starts: the
	// demo holds it after its first part until the test releases it.
	release := d.Hold()
	defer release()
	req, _ := http.NewRequest("POST", first.url+"/v1/chat/completions",
		strings.NewReader(chatBody("/demo kind=slow&delay=20ms&repeat=3", true, 4096)))
	req.Header.Set("Authorization", "Bearer "+canaryKeyA)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	run := ledger.RunID(resp.Header.Get("X-Run-Id"))
	br := bufio.NewReader(resp.Body)
	if _, err := br.ReadString('\n'); err != nil || run == "" {
		t.Fatalf("first event: %v (run %q)", err, run)
	}
	active := func() int {
		var b ledger.Balance
		got := doURL(t, first.url, "GET", "/v1/balance", canaryKeyA, "")
		if err := json.Unmarshal(got.body, &b); err != nil {
			t.Fatalf("balance: %s", got.body)
		}
		return b.Active
	}
	if n := active(); n != 1 {
		t.Fatalf("active %d while the stream runs, want 1", n)
	}
	// The first process indexes its audit rows' text after commit, when
	// idle: the snapshot waits for that write, which is not the second's.
	waitTextIndexed(t, first.url)
	before := dirSnapshot(t, dir)

	second := exec.Command(os.Args[0], "-test.run=^TestReliabilityDataDirChild$", "-test.count=1")
	second.Env = append(os.Environ(), lockChildDir+"="+dir, lockChildDemo+"="+d.URL())
	msg, served := secondProcess(t, second)
	if served {
		t.Errorf("a second process started serving on the data dir of a running one")
	}
	if pid := fmt.Sprintf("pid %d", first.cmd.Process.Pid); !strings.Contains(msg, pid) || !strings.Contains(msg, "in use") {
		t.Errorf("the second process said %q; want one line naming %s", msg, pid)
	}
	if after := dirSnapshot(t, dir); after != before {
		t.Errorf("the second process changed the data dir:\n%s\nwas\n%s", after, before)
	}
	if n := active(); n != 1 {
		t.Errorf("active %d after the second process, want 1 (the live run keeps its slot)", n)
	}

	release()
	rest, err := io.ReadAll(br)
	if err != nil || !strings.HasSuffix(strings.TrimSpace(string(rest)), "data: [DONE]") {
		t.Fatalf("the stream after the second process: %v\n%s", err, rest)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var got ledger.Run
		b := doURL(t, first.url, "GET", "/v1/runs/"+string(run), canaryKeyA, "")
		if json.Unmarshal(b.body, &got) == nil && got.Status.Ended() {
			if got.Status != ledger.RunCompleted || got.Usage != ledger.UsageTrusted {
				t.Fatalf("run after its stream: %s, want completed/trusted", b.body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s did not end: %s", run, b.body)
		}
		time.Sleep(5 * time.Millisecond) // polling the observed state, with a deadline
	}
}

// secondProcess runs cmd until it exits or prints its URL (it then serves,
// and is killed); it returns its ERROR line and whether it served. A zero
// exit fails t.
func secondProcess(t *testing.T, cmd *exec.Cmd) (msg string, served bool) {
	t.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		l := sc.Text()
		if m, ok := strings.CutPrefix(l, "ERROR "); ok {
			msg = m
		}
		if strings.HasPrefix(l, "URL ") {
			served = true
			cmd.Process.Kill()
			break
		}
	}
	go io.Copy(io.Discard, out)
	err = cmd.Wait()
	if exit, ok := err.(*exec.ExitError); !served && (!ok || exit.ExitCode() == 0) {
		t.Errorf("the second process: %v, want a non-zero exit", err)
	}
	return msg, served
}

// waitTextIndexed waits until the gateway at base reports on /metrics that
// its ledger's text index holds every audit row.
func waitTextIndexed(t *testing.T, base string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		m := doURL(t, base, "GET", "/metrics", "", "")
		if strings.Contains(string(m.body), "\nquotagate_audit_text_lag_rows 0\n") {
			return
		}
		if !strings.Contains(string(m.body), "quotagate_audit_text_lag_rows") || time.Now().After(deadline) {
			t.Fatalf("the text index never caught up:\n%s", m.body)
		}
		time.Sleep(5 * time.Millisecond) // polling the observed state, with a deadline
	}
}

// dirSnapshot lists every file under dir with its size and mtime; the
// ledger's WAL and shm files included.
func dirSnapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %d %d %v\n", strings.TrimPrefix(p, dir), fi.Size(), fi.ModTime().UnixNano(), fi.Mode())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
