package sqlite_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/sqlite"
)

const crashChildEnv = "QUOTAGATE_CRASH_CHILD" // path of the ledger the child writes to

var crashRounds = 20

// TestCrash re-executes this test binary as a child that admits and ends runs
// on a durable ledger (synchronous=FULL) from several goroutines, printing a
// line for each change only after the Store call returned, that is, once the
// change was acknowledged as on disk. The parent SIGKILLs the child after a
// random number of acknowledgements, reopens the ledger, recovers and
// verifies it: every acknowledged admission is present with its reserve,
// every acknowledged end is recorded, every hold is still held, and the
// balances still derive from the entries. The same ledger lives through all
// rounds, as it would through repeated crashes.
//
// SIGKILL leaves the OS page cache alone, so this proves process-crash
// safety; power loss would need a filesystem that drops unsynced writes.
func TestCrash(t *testing.T) {
	if path := os.Getenv(crashChildEnv); path != "" {
		crashChild(path)
		return
	}
	if testing.Short() {
		t.Skip("re-executes the test binary 20 times")
	}
	path := filepath.Join(t.TempDir(), "ledger.db")
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	seed := rng.Uint64()
	t.Logf("crash seed %d", seed)
	rng = rand.New(rand.NewPCG(seed, 2))
	acked := map[ledger.RunID]*ackedRun{}
	for round := range crashRounds {
		kill := 1 + rng.IntN(40)
		lines := runCrashChild(t, path, round, kill)
		for _, l := range lines {
			applyAck(t, acked, l)
		}
		checkAfterCrash(t, path, round, acked)
	}
}

type ackedRun struct {
	reserve ledger.Units
	end     string // "", "settle", "hold", "release"
	units   ledger.Units
}

func applyAck(t *testing.T, acked map[ledger.RunID]*ackedRun, line string) {
	f := strings.Fields(line)
	if len(f) != 3 {
		t.Fatalf("child printed %q", line)
	}
	n, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil {
		t.Fatalf("child printed %q", line)
	}
	id := ledger.RunID(f[1])
	if f[0] == "admit" {
		acked[id] = &ackedRun{reserve: ledger.Units(n)}
		return
	}
	r := acked[id]
	if r == nil {
		t.Fatalf("child acknowledged %q before admitting the run", line)
	}
	r.end, r.units = f[0], ledger.Units(n)
}

// runCrashChild starts the child and SIGKILLs it once it has acknowledged
// kill changes; it returns every acknowledgement the child printed.
func runCrashChild(t *testing.T, path string, round, kill int) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrash$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+path, "QUOTAGATE_CRASH_ROUND="+strconv.Itoa(round))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var got []string
	killed := false
	deadline := time.After(60 * time.Second)
	for !killed {
		select {
		case l, ok := <-lines:
			if !ok {
				cmd.Wait()
				t.Fatalf("round %d: child ended before the kill:\n%s", round, stderr.String())
			}
			if isAck(l) {
				got = append(got, l)
			}
			if len(got) >= kill {
				if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				killed = true
			}
		case <-deadline:
			cmd.Process.Signal(syscall.SIGKILL)
			cmd.Wait()
			t.Fatalf("round %d: no %d acknowledgements within 60 s:\n%s", round, kill, stderr.String())
		}
	}
	// Lines already in the pipe were acknowledged before the kill.
	for l := range lines {
		if isAck(l) {
			got = append(got, l)
		}
	}
	err = cmd.Wait()
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("round %d: child was not killed by SIGKILL (%v):\n%s", round, err, stderr.String())
	}
	return got
}

func isAck(line string) bool {
	verb, _, _ := strings.Cut(line, " ")
	switch verb {
	case "admit", "settle", "hold", "release":
		return true
	}
	return false
}

func checkAfterCrash(t *testing.T, path string, round int, acked map[ledger.RunID]*ackedRun) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatalf("round %d: reopen: %v", round, err)
	}
	defer st.Close()
	if _, err := st.RecoverInterrupted(ctx, ledger.ActorRecovery); err != nil {
		t.Fatalf("round %d: recover: %v", round, err)
	}
	problems, err := st.Verify(ctx)
	if err != nil {
		t.Fatalf("round %d: verify: %v", round, err)
	}
	for _, p := range problems {
		t.Errorf("round %d: verify: %s", round, p)
	}
	var holding ledger.Units
	all, err := st.Runs(ctx, ledger.RunFilter{Limit: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[ledger.RunID]ledger.Run{}
	for _, r := range all {
		byID[r.ID] = r
	}
	for id, a := range acked {
		run, ok := byID[id]
		if !ok {
			t.Fatalf("round %d: acknowledged run %s is lost", round, id)
		}
		if run.ReserveUnits != a.reserve {
			t.Fatalf("round %d: run %s reserve %d, acknowledged %d", round, id, run.ReserveUnits, a.reserve)
		}
		switch a.end {
		case "settle":
			if run.Usage != ledger.UsageTrusted || run.SpentUnits != a.units || run.HeldUnits != 0 {
				t.Fatalf("round %d: acknowledged settle of %s at %d lost: %+v", round, id, a.units, run)
			}
		case "hold":
			if run.Usage != ledger.UsageUnknown || run.HeldUnits != a.reserve {
				t.Fatalf("round %d: acknowledged hold of %s lost: %+v", round, id, run)
			}
		case "release":
			if run.Usage != ledger.UsageReleased || run.HeldUnits != 0 {
				t.Fatalf("round %d: acknowledged release of %s lost: %+v", round, id, run)
			}
		case "":
			// Its end may have committed unacknowledged; otherwise recovery
			// left it interrupted with its hold.
			if run.Usage == ledger.UsagePending || (run.Usage == ledger.UsageUnknown && run.HeldUnits != run.ReserveUnits) {
				t.Fatalf("round %d: unacknowledged end of %s left %+v", round, id, run)
			}
		}
	}
	holds, err := st.Runs(ctx, ledger.RunFilter{HoldingOnly: true, Limit: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range holds {
		if r.Usage != ledger.UsageUnknown || r.HeldUnits != r.ReserveUnits {
			t.Fatalf("round %d: after recovery, run %+v", round, r)
		}
		holding += r.HeldUnits
	}
	b, err := st.Balance(ctx, "crash")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Check(); err != nil {
		t.Fatal(err)
	}
	if b.HeldUnits != holding || b.Active != 0 {
		t.Fatalf("round %d: balance %+v, holds add up to %d", round, b, holding)
	}
}

// crashChild admits and ends runs until it is killed, printing each change
// once the Store acknowledged it.
func crashChild(path string) {
	ctx := context.Background()
	st, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		os.Exit(3)
	}
	if err := st.ApplyTenants(ctx, []ledger.Tenant{{ID: "crash", BudgetUnits: 1 << 40, MaxConcurrent: 64}}, ledger.System("crash")); err != nil {
		fmt.Fprintln(os.Stderr, "apply:", err)
		os.Exit(3)
	}
	round := os.Getenv("QUOTAGATE_CRASH_ROUND")
	var mu sync.Mutex
	ack := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(os.Stdout, format+"\n", args...) // one write(2) per line
	}
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	go func() {
		// Never outlive a parent that failed to kill us.
		time.Sleep(2 * time.Minute)
		os.Exit(4)
	}()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(g)))
			for i := 0; ; i++ {
				id := ledger.RunID(fmt.Sprintf("c%s-g%d-%d", round, g, i))
				reserve := ledger.Units(1 + rng.IntN(500))
				if _, err := st.Admit(ctx, ledger.AdmitRequest{RunID: id, TenantID: "crash", Upstream: "demo",
					Model: "demo-model", ReserveUnits: reserve, Actor: ledger.System("crash")}); err != nil {
					fail(err)
				}
				ack("admit %s %d", id, reserve)
				switch rng.IntN(4) {
				case 0, 1:
					units := ledger.Units(rng.Int64N(int64(reserve) + 1))
					if _, err := st.Settle(ctx, id, units, "usage", ledger.System("test")); err != nil {
						fail(err)
					}
					ack("settle %s %d", id, units)
				case 2:
					if _, err := st.KeepHold(ctx, id, ledger.RunInterrupted, "no usage", ledger.System("test")); err != nil {
						fail(err)
					}
					ack("hold %s 0", id)
				case 3:
					if rng.IntN(2) == 0 {
						if _, err := st.ReleaseHold(ctx, id, ledger.RunFailed, "HTTP 503 before output", ledger.System("test")); err != nil {
							fail(err)
						}
						ack("release %s 0", id)
					}
					// else: left active, for recovery to find.
				}
			}
		}()
	}
	wg.Wait()
}
