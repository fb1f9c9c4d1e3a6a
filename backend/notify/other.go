//go:build !(linux || freebsd || openbsd || netbsd || dragonfly)

package notify

import (
	"context"
	"fmt"
	"runtime"
)

// Notifier is a stand-in where there is no D-Bus: every Send answers
// ErrUnsupported, and the dashboard uses the webview's Notification API.
type Notifier struct{}

// New returns the stand-in; addr is ignored.
func New(addr string) *Notifier { return &Notifier{} }

// Send answers ErrUnsupported.
func (*Notifier) Send(context.Context, Notification) (uint32, error) {
	return 0, fmt.Errorf("%w (%s: the window has no notification service of its own; the dashboard uses the webview's)", ErrUnsupported, runtime.GOOS)
}

// Close does nothing.
func (*Notifier) Close() error { return nil }
