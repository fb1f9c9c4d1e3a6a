//go:build linux || freebsd || openbsd || netbsd || dragonfly

package notify_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/notify"
	"github.com/quotagate/quotagate/backend/notify/notifytest"
)

// A notification reaches the notification server on a real (private)
// session bus with its title and body; the same tag replaces the earlier
// one, another tag does not.
func TestSendDelivers(t *testing.T) {
	srv := notifytest.Start(t)
	n := notify.New(srv.Addr)
	t.Cleanup(func() { n.Close() })
	ctx := context.Background()

	id, err := n.Send(ctx, notify.Notification{Title: "local 有一笔 102 单位的占用", Body: "stream cut before [DONE]", Tag: "hold:run_1"})
	if err != nil {
		t.Fatal(err)
	}
	got := srv.Next(t, 5*time.Second)
	if got.AppName != "quotagate" || got.Summary != "local 有一笔 102 单位的占用" || got.Body != "stream cut before [DONE]" || got.ReplacesID != 0 || got.ID != id {
		t.Fatalf("delivered %+v (id %d)", got, id)
	}
	if v, ok := got.Hints["desktop-entry"]; !ok || v.Value() != "quotagate" {
		t.Errorf("desktop-entry hint: %v", got.Hints)
	}

	if _, err := n.Send(ctx, notify.Notification{Title: "again", Tag: "hold:run_1"}); err != nil {
		t.Fatal(err)
	}
	if again := srv.Next(t, 5*time.Second); again.ReplacesID != id {
		t.Errorf("same tag: replaces_id %d, want %d", again.ReplacesID, id)
	}
	if _, err := n.Send(ctx, notify.Notification{Title: "other", Tag: "evict:ark/m"}); err != nil {
		t.Fatal(err)
	}
	if other := srv.Next(t, 5*time.Second); other.ReplacesID != 0 || other.ID == id {
		t.Errorf("another tag: %+v", other)
	}
}

// Failures say why in words: no notification server on the bus, no bus at
// the address. A server that appears later is used by the next Send.
func TestSendFailuresAndRecovery(t *testing.T) {
	addr := notifytest.Bus(t)
	n := notify.New(addr)
	t.Cleanup(func() { n.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := n.Send(ctx, notify.Notification{Title: "x"})
	if err == nil || !strings.Contains(err.Error(), "no notification server is running on the session bus") {
		t.Fatalf("no server: %v", err)
	}
	srv := &notifytest.Server{Addr: addr, Calls: make(chan notifytest.Call, 4)}
	srv.Own(t)
	if _, err := n.Send(ctx, notify.Notification{Title: "now"}); err != nil {
		t.Fatalf("after the server appeared: %v", err)
	}
	if got := srv.Next(t, 5*time.Second); got.Summary != "now" {
		t.Fatalf("delivered %+v", got)
	}

	gone := notify.New("unix:path=" + t.TempDir() + "/no-bus")
	if _, err := gone.Send(ctx, notify.Notification{Title: "x"}); err == nil || !strings.Contains(err.Error(), "connect to unix:path=") {
		t.Fatalf("no bus: %v", err)
	}
}

// A title or body far longer than a notification shows is cut at a rune
// boundary, and invalid UTF-8 (D-Bus strings must be valid) is replaced.
func TestSendClipsText(t *testing.T) {
	srv := notifytest.Start(t)
	n := notify.New(srv.Addr)
	t.Cleanup(func() { n.Close() })
	long := strings.Repeat("占", 600) // 1,800 bytes
	if _, err := n.Send(context.Background(), notify.Notification{Title: "bad \xff byte", Body: long}); err != nil {
		t.Fatal(err)
	}
	got := srv.Next(t, 5*time.Second)
	if got.Summary != "bad \uFFFD byte" || !strings.HasSuffix(got.Body, "占…") || len(got.Body) > 1000+len("…") {
		t.Fatalf("summary %q, body %d bytes ending %q", got.Summary, len(got.Body), got.Body[len(got.Body)-8:])
	}
}
