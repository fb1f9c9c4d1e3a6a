//go:build linux

package e2e_test

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/quotagate/quotagate/backend/server"
)

// TestReliabilityUnwritableEnd with real parts: the ledger's write lock
// held by another program (the sqlite3 command-line shell, as an operator
// inspecting the ledger would), and a disk that is really full (a small
// tmpfs filled to the last byte), each while a stream ends. The client gets no end marker, /healthz says
// degraded with the end pending, the run is still active meanwhile, and once
// the lock or the space comes back the decided outcome is written without a
// restart: the concurrency slot is free, a settled run is settled, a held
// one can be reconciled (checkUnwritableEnd).

// TestReliabilityLedgerLockedByAnotherProcess: sqlite3 holds BEGIN
// IMMEDIATE on the ledger (longer than the 5 s busy timeout) while streams
// end, then rolls back.
func TestReliabilityLedgerLockedByAnotherProcess(t *testing.T) {
	t.Parallel()
	shell, err := exec.LookPath("sqlite3")
	need(t, err == nil, "the sqlite3 command-line shell is not on PATH (scripts/deps.sh installs it)")
	for _, tc := range unwritableCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, rigOptions{})
			var unlock func()
			checkUnwritableEnd(t, r, tc.content, tc.status, tc.usage,
				func() { unlock = lockWithShell(t, shell, filepath.Join(r.dir, server.LedgerFile)) },
				func() { unlock() })
		})
	}
}

// lockWithShell starts sqlite3 on the database at path, has it take the
// write lock (BEGIN IMMEDIATE) and returns once it says it holds it; unlock
// rolls back and waits for the shell to exit.
func lockWithShell(t *testing.T, shell, path string) (unlock func()) {
	t.Helper()
	cmd := exec.Command(shell, "-batch", path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	// The gateway may be writing at this moment: wait for it, not fail.
	fmt.Fprint(stdin, ".timeout 10000\nBEGIN IMMEDIATE;\nSELECT 'LOCKED';\n")
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() || lines.Text() != "LOCKED" {
		t.Fatalf("sqlite3 did not take the write lock: %q %v; stderr: %s", lines.Text(), lines.Err(), stderr.String())
	}
	return func() {
		fmt.Fprint(stdin, "ROLLBACK;\n")
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("sqlite3: %v; stderr: %s", err, stderr.String())
		}
	}
}

// TestReliabilityDiskFullTmpfs: the data directory on a 16 MiB tmpfs that
// is filled to the last byte while streams end, then emptied again.
// Mounting needs root (CI runs as root in a container); without it the test
// skips.
func TestReliabilityDiskFullTmpfs(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root (CI runs as root; run as root to include this test)")
	}
	for _, tc := range unwritableCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "size=16m,mode=0700")
			need(t, err == nil, fmt.Sprintf("mount a tmpfs on %s: %v (root without CAP_SYS_ADMIN?)", dir, err))
			t.Cleanup(func() {
				if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
					t.Errorf("unmount %s: %v", dir, err)
				}
			})
			r := newRig(t, rigOptions{dir: dir})
			filler := filepath.Join(dir, "filler")
			checkUnwritableEnd(t, r, tc.content, tc.status, tc.usage,
				func() { fillDisk(t, filler) },
				func() {
					if err := os.Remove(filler); err != nil {
						t.Fatal(err)
					}
				})
		})
	}
}

// fillDisk writes path until the file system has no byte left (ENOSPC).
func fillDisk(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for size := len(buf); size > 0; {
		if _, err := f.Write(buf[:size]); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("fill %s: %v", path, err)
			}
			size /= 2 // the last pages, down to the last byte
		}
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(filepath.Dir(path), &st); err != nil || st.Bavail != 0 {
		t.Fatalf("after filling: %d blocks free, %v", st.Bavail, err)
	}
}
