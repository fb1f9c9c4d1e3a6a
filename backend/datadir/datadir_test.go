package datadir_test

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/datadir"
)

const childDir = "QG_DATADIR_CHILD"

// TestHolderChild is not a test on its own: run by TestSecondProcess as a
// child, it takes the lock on the directory it is given, says so, and
// waits to be killed.
func TestHolderChild(t *testing.T) {
	dir := os.Getenv(childDir)
	if dir == "" {
		t.Skip("child process of TestSecondProcess")
	}
	l, err := datadir.Acquire(dir)
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(2)
	}
	if err := l.Announce("http://127.0.0.1:18787"); err != nil {
		fmt.Println("ERROR", err)
		os.Exit(2)
	}
	fmt.Println("LOCKED", os.Getpid())
	select {}
}

// TestSecondProcess: while a real other process holds the directory,
// Acquire refuses naming its pid and URL and changes nothing in the
// directory; once that process is SIGKILLed, the lock is free at once.
func TestSecondProcess(t *testing.T) {
	if os.Getenv(childDir) != "" {
		t.Skip("in the child")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHolderChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), childDir+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(out)
	var line string
	for sc.Scan() {
		if line = sc.Text(); strings.HasPrefix(line, "LOCKED ") || strings.HasPrefix(line, "ERROR") {
			break
		}
	}
	if !strings.HasPrefix(line, "LOCKED ") {
		t.Fatalf("child: %q", line)
	}
	before := snapshot(t, dir)

	_, err = datadir.Acquire(dir)
	var he *datadir.HeldError
	if !errors.As(err, &he) || !errors.Is(err, datadir.ErrHeld) {
		t.Fatalf("Acquire while another process holds the dir: %v, want a *HeldError", err)
	}
	if he.Holder.PID != cmd.Process.Pid || he.Holder.URL != "http://127.0.0.1:18787" {
		t.Errorf("holder = %+v, want pid %d", he.Holder, cmd.Process.Pid)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || !strings.Contains(msg, fmt.Sprintf("pid %d", cmd.Process.Pid)) {
		t.Errorf("message %q: want one line naming pid %d", msg, cmd.Process.Pid)
	}
	if h, held, err := datadir.Read(dir); err != nil || !held || h.PID != cmd.Process.Pid {
		t.Errorf("Read = %+v, %v, %v; want held by pid %d", h, held, err, cmd.Process.Pid)
	}
	if after := snapshot(t, dir); after != before {
		t.Errorf("the refused Acquire changed the directory:\n%s\nwas\n%s", after, before)
	}

	cmd.Process.Kill()
	cmd.Wait()
	if _, held, err := datadir.Read(dir); err != nil || held {
		t.Errorf("after the holder died: held=%v err=%v", held, err)
	}
	l, err := datadir.Acquire(dir)
	if err != nil {
		t.Fatalf("Acquire after the holder was killed: %v", err)
	}
	defer l.Release()
	if l.Holder().PID != os.Getpid() {
		t.Errorf("holder = %+v", l.Holder())
	}
}

// TestSameProcess: a second Acquire in one process is refused too (flock
// locks belong to an open file), and Release frees the directory.
func TestSameProcess(t *testing.T) {
	dir := t.TempDir()
	l, err := datadir.Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := datadir.Acquire(dir); !errors.Is(err, datadir.ErrHeld) {
		t.Fatalf("second Acquire: %v", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(); err != nil {
		t.Fatalf("second Release: %v", err)
	}
	l2, err := datadir.Acquire(dir)
	if err != nil {
		t.Fatalf("Acquire after Release: %v", err)
	}
	l2.Release()
	if _, err := datadir.Acquire(filepath.Join(dir, "missing")); err == nil || errors.Is(err, datadir.ErrHeld) {
		t.Errorf("Acquire on a missing dir: %v", err)
	}
}

// snapshot lists every file in dir with its size, mode and mtime.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %d %v %d\n", p, fi.Size(), fi.Mode(), fi.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
