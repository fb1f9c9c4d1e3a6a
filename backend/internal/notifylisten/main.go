//go:build linux || freebsd || openbsd || netbsd || dragonfly

// Command notifylisten is a notification server for the desktop smoke test
// (scripts/smoke.sh): it owns org.freedesktop.Notifications on the session
// bus (DBUS_SESSION_BUS_ADDRESS, a private one from dbus-run-session) and
// prints every notification it is asked to show as one JSON line, so the
// smoke can check that the window really delivered one. It prints "ready"
// first, once the name is owned.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/godbus/dbus/v5"
)

type server struct {
	mu   sync.Mutex
	next uint32
	out  *json.Encoder
}

// Notify is org.freedesktop.Notifications.Notify (susssasa{sv}i → u).
func (s *server) Notify(app string, replaces uint32, icon, summary, body string, actions []string, hints map[string]dbus.Variant, timeout int32) (uint32, *dbus.Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := replaces
	if id == 0 {
		s.next++
		id = s.next
	}
	_ = s.out.Encode(map[string]any{"app": app, "id": id, "replaces": replaces, "summary": summary, "body": body})
	return id, nil
}

// GetServerInformation lets clients that ask first see a server.
func (s *server) GetServerInformation() (string, string, string, string, *dbus.Error) {
	return "notifylisten", "quotagate", "1", "1.2", nil
}

// GetCapabilities: a plain server, body text only.
func (s *server) GetCapabilities() ([]string, *dbus.Error) { return []string{"body"}, nil }

func main() {
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		fmt.Fprintln(os.Stderr, "notifylisten: connect to the session bus:", err)
		os.Exit(1)
	}
	defer conn.Close()
	s := &server{out: json.NewEncoder(os.Stdout)}
	if err := conn.Export(s, "/org/freedesktop/Notifications", "org.freedesktop.Notifications"); err != nil {
		fmt.Fprintln(os.Stderr, "notifylisten:", err)
		os.Exit(1)
	}
	reply, err := conn.RequestName("org.freedesktop.Notifications", dbus.NameFlagDoNotQueue)
	if err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		fmt.Fprintf(os.Stderr, "notifylisten: own org.freedesktop.Notifications: %v (reply %d)\n", err, reply)
		os.Exit(1)
	}
	fmt.Println("ready")
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
}
