//go:build linux || freebsd || openbsd || netbsd || dragonfly

package notify

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/godbus/dbus/v5"
)

const (
	busName    = "org.freedesktop.Notifications"
	objectPath = dbus.ObjectPath("/org/freedesktop/Notifications")
	notifyCall = busName + ".Notify"
)

// Notifier sends notifications over D-Bus. It connects on the first Send
// and again after a failed one (the session's notification server or bus
// may come and go while the window stays open). Safe for concurrent use.
type Notifier struct {
	addr string // "" → the session bus (DBUS_SESSION_BUS_ADDRESS)

	mu   sync.Mutex
	conn *dbus.Conn
	ids  map[string]uint32 // tag → the server's id, for replaces_id
}

// New returns a Notifier for the D-Bus address addr, or the user's session
// bus when addr is "".
func New(addr string) *Notifier {
	return &Notifier{addr: addr, ids: map[string]uint32{}}
}

// Send shows n and returns the notification server's id for it.
func (n *Notifier) Send(ctx context.Context, msg Notification) (uint32, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.conn == nil {
		c, err := n.connect()
		if err != nil {
			return 0, err
		}
		n.conn = c
	}
	replaces := n.ids[msg.Tag]
	hints := map[string]dbus.Variant{
		"desktop-entry": dbus.MakeVariant(AppName),
		"urgency":       dbus.MakeVariant(byte(1)), // normal
	}
	var id uint32
	err := n.conn.Object(busName, objectPath).CallWithContext(ctx, notifyCall, 0,
		AppName, replaces, "", clip(msg.Title), clip(msg.Body), []string{}, hints, int32(-1)).Store(&id)
	if err != nil {
		n.conn.Close()
		n.conn = nil
		var de dbus.Error
		if errors.As(err, &de) && de.Name == "org.freedesktop.DBus.Error.ServiceUnknown" {
			return 0, fmt.Errorf("send notification: no notification server is running on the session bus (%s is not owned): %w", busName, err)
		}
		return 0, fmt.Errorf("send notification: %w", err)
	}
	if msg.Tag != "" {
		n.ids[msg.Tag] = id
	}
	return id, nil
}

// connect dials the bus. Not with dbus.WithContext: that context would be
// the connection's lifetime, not the dial's.
func (n *Notifier) connect() (*dbus.Conn, error) {
	var (
		c   *dbus.Conn
		err error
	)
	if n.addr == "" {
		c, err = dbus.ConnectSessionBus()
	} else {
		c, err = dbus.Connect(n.addr)
	}
	if err != nil {
		where := n.addr
		if where == "" {
			where = "the session bus"
		}
		return nil, fmt.Errorf("send notification: connect to %s: %w", where, err)
	}
	return c, nil
}

// Close drops the bus connection; a later Send connects again.
func (n *Notifier) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.conn == nil {
		return nil
	}
	err := n.conn.Close()
	n.conn = nil
	return err
}
