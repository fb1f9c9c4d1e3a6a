//go:build linux || freebsd || openbsd || netbsd || dragonfly

// Package notifytest runs a private D-Bus session bus with a notification
// server on it that records what it was asked to show, so tests can assert
// that a notification was actually delivered (not that a function was
// called).
package notifytest

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

// Call is one org.freedesktop.Notifications.Notify the server received.
type Call struct {
	AppName    string
	ReplacesID uint32
	Summary    string
	Body       string
	Hints      map[string]dbus.Variant
	ID         uint32 // the id the server answered
}

// Server is the recording notification server on the private bus.
type Server struct {
	Addr  string    // the bus address, for DBUS_SESSION_BUS_ADDRESS
	Calls chan Call // every Notify, in order

	mu   sync.Mutex
	next uint32
	conn *dbus.Conn
}

// Bus starts dbus-daemon on a socket in a temporary directory and returns
// its address; the daemon stops when the test ends. A machine without
// dbus-daemon skips the test (scripts/deps.sh installs it); with
// E2E_REQUIRED=1 it fails instead.
func Bus(t testing.TB) string {
	t.Helper()
	exe, err := exec.LookPath("dbus-daemon")
	if err != nil {
		if os.Getenv("E2E_REQUIRED") == "1" {
			t.Fatal("dbus-daemon not found (run scripts/deps.sh)")
		}
		t.Skip("dbus-daemon not found (run scripts/deps.sh)")
	}
	sock := filepath.Join(t.TempDir(), "bus")
	cmd := exec.Command(exe, "--session", "--nofork", "--nopidfile", "--address=unix:path="+sock, "--print-address=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start dbus-daemon: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := make(chan string, 1)
	go func() { // the daemon prints its address once it listens
		line, _ := bufio.NewReader(out).ReadString('\n')
		addr <- strings.TrimSpace(line)
	}()
	select {
	case a := <-addr:
		if a == "" {
			t.Fatal("dbus-daemon printed no address")
		}
		return a
	case <-time.After(10 * time.Second):
		t.Fatal("dbus-daemon printed no address within 10s")
	}
	return ""
}

// Start runs a private bus with a recording notification server on it.
func Start(t testing.TB) *Server {
	t.Helper()
	s := &Server{Addr: Bus(t), Calls: make(chan Call, 64)}
	s.Own(t)
	return s
}

// Own connects the server to its bus and claims the notification service's name.
func (s *Server) Own(t testing.TB) {
	t.Helper()
	c, err := dbus.Connect(s.Addr)
	if err != nil {
		t.Fatalf("connect the notification server: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Export(s, "/org/freedesktop/Notifications", "org.freedesktop.Notifications"); err != nil {
		t.Fatal(err)
	}
	reply, err := c.RequestName("org.freedesktop.Notifications", dbus.NameFlagDoNotQueue)
	if err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("own org.freedesktop.Notifications: %v (reply %d)", err, reply)
	}
	s.mu.Lock()
	s.conn = c
	s.mu.Unlock()
}

// Notify is the D-Bus method (the spec's signature: susssasa{sv}i → u).
func (s *Server) Notify(app string, replaces uint32, icon, summary, body string, actions []string, hints map[string]dbus.Variant, timeout int32) (uint32, *dbus.Error) {
	s.mu.Lock()
	id := replaces
	if id == 0 {
		s.next++
		id = s.next
	}
	s.mu.Unlock()
	s.Calls <- Call{AppName: app, ReplacesID: replaces, Summary: summary, Body: body, Hints: hints, ID: id}
	return id, nil
}

// Next waits for the next Notify, failing the test after timeout.
func (s *Server) Next(t testing.TB, timeout time.Duration) Call {
	t.Helper()
	select {
	case c := <-s.Calls:
		return c
	case <-time.After(timeout):
		t.Fatalf("no notification reached the notification server within %v", timeout)
		return Call{}
	}
}
