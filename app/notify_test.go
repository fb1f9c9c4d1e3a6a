//go:build linux || freebsd || openbsd || netbsd || dragonfly

package app_test

import (
	"context"
	"testing"
	"time"

	"github.com/quotagate/quotagate/app"
	"github.com/quotagate/quotagate/backend/notify/notifytest"
)

// The window's Notify binding delivers to the session's notification
// server (a private bus here, found as the window finds the user's: through
// DBUS_SESSION_BUS_ADDRESS); with none on the bus the promise is rejected
// so the page can fall back.
func TestNotifyBinding(t *testing.T) {
	srv := notifytest.Start(t)
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", srv.Addr)
	a := app.New(func(context.Context) (app.Backend, error) { return app.Remote{}, nil })
	defer a.Shutdown(context.Background())
	if err := a.Notify("quota-guarded model evicted", "ark/deepseek-v4-flash: usage wall", "evict:ark/deepseek-v4-flash"); err != nil {
		t.Fatal(err)
	}
	if got := srv.Next(t, 5*time.Second); got.Summary != "quota-guarded model evicted" || got.Body != "ark/deepseek-v4-flash: usage wall" {
		t.Fatalf("delivered %+v", got)
	}

	t.Setenv("DBUS_SESSION_BUS_ADDRESS", notifytest.Bus(t)) // a bus with nobody serving notifications
	b := app.New(func(context.Context) (app.Backend, error) { return app.Remote{}, nil })
	defer b.Shutdown(context.Background())
	if err := b.Notify("x", "y", "z"); err == nil {
		t.Fatal("Notify with no notification server: no error")
	}
}
