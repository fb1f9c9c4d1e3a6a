package ledgertest

import (
	"bufio"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// KillSeed is the random source of a kill -9 test: a new seed each run, or
// the one in the environment variable env to replay a failure; the seed
// is logged with the line that replays it.
func KillSeed(t *testing.T, env string, stream uint64) *rand.Rand {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv(env); v != "" {
		var err error
		if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("%s=%q: want a seed, a whole number", env, v)
		}
	}
	t.Logf("seed %d (replay: %s=%d)", seed, env, seed)
	return rand.New(rand.NewPCG(seed, stream))
}

// RunArchiveChild runs this test binary's TestArchiveKill9Child with env
// added and returns the "STEP name" lines it printed. With killAt ≥ 0 it
// SIGKILLs the child extra after the step numbered killAt (from 0), and a
// child that ends before that fails the test; otherwise it waits for the
// child to end cleanly.
func RunArchiveChild(t *testing.T, env []string, killAt int, extra time.Duration) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestArchiveKill9Child$", "-test.count=1")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var steps []string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "STEP "):
			steps = append(steps, strings.TrimPrefix(line, "STEP "))
			if len(steps)-1 == killAt {
				time.Sleep(extra) // a random moment after the step, not a wait for something to happen
				cmd.Process.Kill()
				io.Copy(io.Discard, out)
				cmd.Wait()
				return steps
			}
		case strings.HasPrefix(line, "ERROR"):
			t.Fatalf("child: %s\n%s", line, stderr.String())
		}
	}
	if err := cmd.Wait(); err != nil || killAt >= 0 {
		t.Fatalf("child ended before its kill (step %d of %d): %v\n%s", killAt, len(steps), err, stderr.String())
	}
	return steps
}
