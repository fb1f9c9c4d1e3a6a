//go:build windows

package datadir

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// lockOffset is the byte locked: far past the holder's JSON, since Windows
// locks are mandatory and a second process must still read who holds it.
const lockOffset = 1 << 30

// lockFile takes an exclusive LockFileEx lock without waiting; held reports
// that another handle (another process) has it.
func lockFile(f *os.File) (held bool, err error) {
	ol := &windows.Overlapped{Offset: lockOffset}
	err = windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
		return true, nil
	}
	return false, err
}

// probe reports whether someone holds f's lock, taking and dropping a
// shared lock to find out.
func probe(f *os.File) (bool, error) {
	ol := &windows.Overlapped{Offset: lockOffset}
	h := windows.Handle(f.Fd())
	err := windows.LockFileEx(h, windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	return false, windows.UnlockFileEx(h, 0, 1, 0, ol)
}
