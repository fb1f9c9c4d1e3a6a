// Package datadir guards a quotagate data directory: one process at a time
// may use it. A second quotagate on the same directory
// would otherwise run its start-up recovery over the first one's live runs
// (marking them interrupted, freeing their concurrency slots while their
// streams go on). The lock is taken before the ledger is touched and held
// for the life of the process; the operating system drops it when the
// process dies, even by SIGKILL, so a crash never leaves a stale lock.
//
// The lock file also names its holder (pid, and once it listens its URL),
// so a second start can say who holds the directory — or hand over to the
// running instance, e.g. open its dashboard instead of failing.
package datadir

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// LockFile is the lock's file name in the data directory.
const LockFile = "quotagate.lock"

// Holder is what the lock file says about the process that holds it.
type Holder struct {
	PID     int       `json:"pid"`
	URL     string    `json:"url,omitempty"` // where the holder serves, once it listens
	Started time.Time `json:"started"`
}

// HeldError is returned by Acquire when another process holds the
// directory. Holder is what its lock file said (PID 0 if it had not written
// it yet).
type HeldError struct {
	Dir    string
	Holder Holder
}

func (e *HeldError) Error() string {
	who := "another process"
	if e.Holder.PID > 0 {
		who = fmt.Sprintf("another quotagate (pid %d", e.Holder.PID)
		if e.Holder.URL != "" {
			who += ", serving " + e.Holder.URL
		}
		who += ")"
	}
	return fmt.Sprintf("the data dir %s is in use by %s; stop it first, or pick another --data", e.Dir, who)
}

// ErrHeld matches a *HeldError with errors.Is.
var ErrHeld = errors.New("data dir in use")

// Is lets errors.Is(err, ErrHeld) match.
func (e *HeldError) Is(target error) bool { return target == ErrHeld }

// Lock is an exclusive hold on one data directory.
type Lock struct {
	dir    string
	f      *os.File
	holder Holder
}

// Acquire takes the exclusive lock on dir (which must exist) without
// waiting. When another process holds it, it returns a *HeldError and
// writes nothing: the lock file is opened, never truncated, until the lock
// is ours.
func Acquire(dir string) (*Lock, error) {
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock %s: %w", path, err)
	}
	held, err := lockFile(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if held {
		h, _ := readHolder(f)
		f.Close()
		return nil, &HeldError{Dir: dir, Holder: h}
	}
	l := &Lock{dir: dir, f: f, holder: Holder{PID: os.Getpid(), Started: time.Now().UTC()}}
	if err := l.write(); err != nil {
		l.Release()
		return nil, err
	}
	return l, nil
}

// Announce records where the holder serves, for a later start to find it.
func (l *Lock) Announce(url string) error {
	l.holder.URL = url
	return l.write()
}

// Holder returns what this lock's file says.
func (l *Lock) Holder() Holder { return l.holder }

// Release drops the lock. Safe on nil and more than once.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	// The file is left in place: removing it would race a process that
	// opened it and is about to lock it.
	err := l.f.Close()
	l.f = nil
	return err
}

func (l *Lock) write() error {
	b, _ := json.Marshal(l.holder)
	b = append(b, '\n')
	if err := l.f.Truncate(0); err != nil {
		return fmt.Errorf("write lock %s: %w", l.f.Name(), err)
	}
	if _, err := l.f.WriteAt(b, 0); err != nil {
		return fmt.Errorf("write lock %s: %w", l.f.Name(), err)
	}
	return nil
}

// Read returns the holder recorded in dir's lock file, and whether a live
// process holds the lock now (false: nobody runs on dir, or it never ran).
func Read(dir string) (Holder, bool, error) {
	f, err := os.Open(filepath.Join(dir, LockFile))
	if errors.Is(err, os.ErrNotExist) {
		return Holder{}, false, nil
	}
	if err != nil {
		return Holder{}, false, fmt.Errorf("read lock: %w", err)
	}
	defer f.Close()
	h, _ := readHolder(f)
	held, err := probe(f)
	if err != nil {
		return h, false, fmt.Errorf("probe lock: %w", err)
	}
	return h, held, nil
}

func readHolder(f *os.File) (Holder, error) {
	b := make([]byte, 4096)
	n, err := f.ReadAt(b, 0)
	if n == 0 {
		return Holder{}, err
	}
	var h Holder
	if err := json.Unmarshal([]byte(strings.TrimSpace(string(b[:n]))), &h); err != nil {
		return Holder{}, err
	}
	return h, nil
}
