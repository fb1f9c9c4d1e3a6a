//go:build linux || freebsd || openbsd || netbsd || dragonfly

package server_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/notify/notifytest"
)

// An alert is shown on the desktop session's notification server.
func TestAlertsNotified(t *testing.T) {
	srv := notifytest.Start(t)
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", srv.Addr)
	hook := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer hook.Close()
	s, _ := openFile(t, fmt.Sprintf(alertsYAML, hook.URL))
	if resp, b := do(t, "POST", s.URL()+"/v1/chat/completions", teamKey, smallChat); resp.StatusCode != 200 {
		t.Fatalf("call: %d %s", resp.StatusCode, b)
	}
	if call := srv.Next(t, 10*time.Second); call.Summary != "team has used 5% of its budget" || call.AppName != "quotagate" {
		t.Fatalf("notification %+v", call)
	}
}
