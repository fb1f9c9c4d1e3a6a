package e2e_test

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/server"
)

// A child quotagate is this test binary run again with -test.run naming one
// of the *Child tests, its data dir and demo URL in the environment. The
// parent then owns a real process it can SIGKILL, starve of disk or read
// the /metrics of, with nothing of its own sharing them.

// serveChild is the body of a *Child test: it opens quotagate on dir in
// front of the demo upstream at demoURL and prints "URL <base>" for the
// parent. On error it prints "ERROR …" and exits, since the parent reads
// only the child's stdout.
func serveChild(dir, demoURL string, logger *slog.Logger) *server.Server {
	cfg, err := rigConfigFor(demoURL, rigOptions{})
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(2)
	}
	s, err := server.Open(context.Background(), server.Options{Config: cfg, DataDir: dir, Addr: "127.0.0.1:0", Logger: logger})
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(2)
	}
	fmt.Println("URL", s.URL())
	return s
}

// child is a running child quotagate, seen from the parent.
type child struct {
	cmd   *exec.Cmd
	url   string      // the child's base URL, from its "URL" line
	lines chan string // the child's stdout, a line at a time
}

// startChild runs the test named test as a child with env added to its
// environment and returns once it has printed its URL. The child is killed
// when t ends, and its stderr is logged if t failed.
func startChild(t *testing.T, test string, env ...string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s stderr:\n%s", test, stderr.String())
		}
	})
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() }) // runs before the stderr log above
	c := &child{cmd: cmd, lines: make(chan string, 16)}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
	}()
	c.url = c.next(t, "URL")
	return c
}

// next returns the rest of the child's next stdout line that starts with
// prefix and a space. An "ERROR" line, the child's exit or 20 s without
// such a line fails t.
func (c *child) next(t *testing.T, prefix string) string {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case l, ok := <-c.lines:
			if !ok {
				t.Fatalf("child exited while waiting for %s", prefix)
			}
			if v, ok := strings.CutPrefix(l, prefix+" "); ok {
				return v
			}
			if strings.HasPrefix(l, "ERROR") {
				t.Fatal(l)
			}
		case <-timeout:
			t.Fatalf("no %s line from the child", prefix)
		}
	}
}

// checkIntegrity runs SQLite's own check of the ledger file in dir, before
// quotagate opens it again (a killed child leaves it as it was).
func checkIntegrity(t *testing.T, dir string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, server.LedgerFile))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var integrity string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&integrity); err != nil || integrity != "ok" {
		t.Fatalf("integrity_check: %q %v", integrity, err)
	}
}
